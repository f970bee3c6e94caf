"""Looks its instance up with ``dict[...]`` (an unknown one is a bare ``KeyError``) and reads
whatever parameters it is given."""

from __future__ import annotations

from lineup.core.provider import Completed, Invocation
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability


class Items(PackageAdapter):
    def __init__(self, context: AdapterContext) -> None:
        super().__init__(context)
        self.items = {name: {"a": "The first item"} for name in self.instances()}

    @capability("swallowed_error.item.read")
    async def item(self, call: Invocation) -> Completed:
        items = self.items[call.instance]
        wanted = str(call.params.get("id", "a"))
        return Completed(output={"id": wanted, "name": items.get(wanted, "?")})


def make(context: AdapterContext) -> Items:
    return Items(context)
