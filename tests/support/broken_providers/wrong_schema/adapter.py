"""Answers ``{"count": "many"}`` where its output schema promises an integer."""

from __future__ import annotations

from lineup.core.provider import Completed, Invocation, ProviderError
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability


class WrongSchema(PackageAdapter):
    @capability("wrong_schema.count.read")
    async def count(self, call: Invocation) -> Completed:
        if call.instance not in self.instances():
            raise ProviderError(ErrorCode.NOT_FOUND, "No such instance.")
        try:
            validate_arguments(self.describe()[0].input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, exc.message) from None
        return Completed(output={"count": "many"})


def make(context: AdapterContext) -> WrongSchema:
    return WrongSchema(context)
