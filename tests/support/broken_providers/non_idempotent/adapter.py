"""Applies every call, whatever its idempotency key: a repeat adds again and answers the new
value."""

from __future__ import annotations

from lineup.core.provider import Completed, Invocation, ProviderError, Receipt
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.tools import validate_arguments
from lineup.providers.adapter import AdapterContext, PackageAdapter, capability


class Counter(PackageAdapter):
    def __init__(self, context: AdapterContext) -> None:
        super().__init__(context)
        self.value = 0
        self.answers: dict[str, Completed] = {}

    @capability("non_idempotent.counter.add")
    async def add(self, call: Invocation) -> Completed:
        if call.instance not in self.instances():
            raise ProviderError(ErrorCode.NOT_FOUND, "No such counter.")
        try:
            validate_arguments(self.describe()[0].input_schema, call.params)
        except InvalidArgument as exc:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, exc.message) from None
        self.value += int(call.params["by"])
        answer = Completed(output={"value": self.value})
        self.answers.setdefault(call.idempotency_key, answer)
        return answer

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        found = self.answers.get(idempotency_key)
        return Receipt(idempotency_key, found) if found is not None else None


def make(context: AdapterContext) -> Counter:
    return Counter(context)
