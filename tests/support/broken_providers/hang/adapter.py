"""Refuses what it should at once, then never answers a valid call."""

from __future__ import annotations

import asyncio

from lineup.core.provider import Completed, Invocation, ProviderError
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability


class Hang(PackageAdapter):
    @capability("hang.status.read")
    async def status(self, call: Invocation) -> Completed:
        if call.instance not in self.instances():
            raise ProviderError(ErrorCode.NOT_FOUND, "No such instance.")
        try:
            validate_arguments(self.describe()[0].input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, exc.message) from None
        await asyncio.Event().wait()
        return Completed(output={})


def make(context: AdapterContext) -> Hang:
    return Hang(context)
