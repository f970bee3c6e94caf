"""Governed capabilities (seed 003 §1, §5): what an agent may ask an outside system to do
through the hub, and how it hears the outcome.

::

    specs = await ctx.capabilities.list()           # what policy grants here
    orders = await ctx.invoke("scheduling.orders.query", {"status": "open"})
    published = await ctx.invoke(
        "scheduling.schedule.publish",
        {"draftId": draft, "basedOnVersion": version},
        on_status=lambda o: print("waiting for", o.approval_id),  # a person decides
    )
    published.raise_for_status()                    # rejected / failed → the taxonomy's error

An invoke is a journaled step, like ``ask_approval``: the ``capability.invoke`` goes through
the outbox (resent with the same ``invocationId`` until the hub acks it, so a resend is a
duplicate and never a second execution), and the wait for its terminal ``capability.result``
survives reconnects and restarts — a result that arrived while nobody waited is kept in the
state file and found there. ``waiting_for_approval`` and ``accepted`` are not the end: they
go to ``on_status`` and the wait goes on, as long as it takes a person to decide.
``on_status`` hears every status the invocation passed through, once per wait and in order —
also those that came before the wait began, and again in a handler resumed after a restart,
so that what it does (a journaled ``say``) replays as it first ran.

Whether the task shows as waiting for a person while the approval is open is the hub's to
say, as for an interaction's card: the handler reports nothing for it.

A refusal of the invoke itself (``invalid_argument``, ``forbidden``, ``not_found``,
``conflict``) raises at once. A terminal ``failed``, ``rejected`` or ``unknown_result`` is an
outcome, returned: look at ``outcome.status``, or call :meth:`InvocationOutcome.raise_for_status`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from lineup.protocol.capabilities import (
    TERMINAL_STATUSES,
    CapabilityInvoke,
    CapabilityResult,
    CapabilitySpec,
    InvocationError,
    InvocationStatus,
)
from lineup.protocol.errors import ErrorCode, LineupError, error_from_code
from lineup.sdk._errors import JournalMismatch
from lineup.sdk._journal import Journal, Runtime, build_payload

ANSWER_PREFIX = "cap:"
"""Invocation results share the journal's answers table with interactions, under this prefix."""

PASSING_STATUSES: tuple[InvocationStatus, ...] = (
    InvocationStatus.WAITING_FOR_APPROVAL,
    InvocationStatus.ACCEPTED,
)
"""The statuses an invocation may pass through before its end, in the order they come."""

_FALLBACK_CODES: Mapping[InvocationStatus, ErrorCode] = {
    InvocationStatus.FAILED: ErrorCode.UNAVAILABLE,
    InvocationStatus.REJECTED: ErrorCode.FORBIDDEN,
    InvocationStatus.UNKNOWN_RESULT: ErrorCode.UNKNOWN_RESULT,
}


class CapabilityRuntime(Runtime, Protocol):
    """What capabilities need from the running agent, beyond a context's ``Runtime``."""

    async def query_capabilities(
        self, task_id: str | None, conversation_id: str | None
    ) -> list[CapabilitySpec]: ...

    async def wait_invocation(
        self, invocation_id: str, on_status: StatusCallback | None
    ) -> CapabilityResult: ...


@dataclass(frozen=True, slots=True)
class InvocationOutcome:
    """Where an invocation is: ``status`` and what came with it.

    ``succeeded`` brings ``output`` and the provider's ``receipt``; ``failed`` and
    ``rejected`` an ``error`` (``code``, ``message``, ``retryable``); ``unknown_result`` means
    the change may or may not have happened — look before invoking again.
    ``waiting_for_approval`` (with ``approval_id``) and ``accepted`` (with ``execution_id``)
    are only seen by ``on_status``.
    """

    invocation_id: str
    capability: str
    status: InvocationStatus
    output: dict[str, Any] | None = None
    error: InvocationError | None = None
    execution_id: str | None = None
    approval_id: str | None = None
    receipt: dict[str, Any] | None = None

    @classmethod
    def from_result(cls, result: CapabilityResult) -> InvocationOutcome:
        return cls(
            invocation_id=result.invocation_id,
            capability=result.capability,
            status=result.status,
            output=result.output,
            error=result.error,
            execution_id=result.execution_id,
            approval_id=result.approval_id,
            receipt=result.receipt,
        )

    @property
    def succeeded(self) -> bool:
        return self.status is InvocationStatus.SUCCEEDED

    @property
    def finished(self) -> bool:
        """A terminal status: nothing more will be heard of this invocation."""
        return self.status in TERMINAL_STATUSES

    def raise_for_status(self) -> InvocationOutcome:
        """Return ``self`` unless the invocation ended ``failed``, ``rejected`` or
        ``unknown_result``; then raise the taxonomy's exception for its error code
        (``Forbidden`` for a person's rejection, ``Conflict`` for a voided approval,
        ``Unavailable`` for an expired one, ``UnknownResult`` …)."""
        error = self.exception()
        if error is not None:
            raise error
        return self

    def exception(self) -> LineupError | None:
        """The exception :meth:`raise_for_status` would raise, or None."""
        if self.status not in _FALLBACK_CODES:
            return None
        code = self.error.code if self.error is not None else _FALLBACK_CODES[self.status].value
        message = (
            self.error.message
            if self.error is not None
            else f"{self.capability} ended {self.status.value}."
        )
        details: dict[str, Any] = {
            "invocationId": self.invocation_id,
            "capability": self.capability,
            "status": self.status.value,
        }
        if self.execution_id is not None:
            details["executionId"] = self.execution_id
        if self.approval_id is not None:
            details["approvalId"] = self.approval_id
        return error_from_code(code, message, details)


StatusCallback = Callable[[InvocationOutcome], Awaitable[None] | None]
"""Told each status an invocation passes through before its end (sync or async)."""


async def report_status(on_status: StatusCallback | None, result: CapabilityResult) -> None:
    if on_status is None:
        return
    returned = on_status(InvocationOutcome.from_result(result))
    if inspect.isawaitable(returned):
        await returned


class Capabilities:
    """The governed capabilities of one task or conversation (``ctx.capabilities``)."""

    def __init__(
        self,
        runtime: Callable[[], CapabilityRuntime],
        *,
        journal: Journal,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        self._runtime = runtime
        self._journal = journal
        self._task_id = task_id
        self._conversation_id = conversation_id

    def __repr__(self) -> str:
        return f"Capabilities({self._task_id or self._conversation_id})"

    async def list(self) -> list[CapabilitySpec]:
        """The capabilities policy grants this agent here (``capability.list``): in a
        project's conversation what the project allows, in a personal one reads only.

        A query, not a step: it asks the hub each time and waits for a connection.
        """
        return await self._current().query_capabilities(self._task_id, self._conversation_id)

    def _current(self) -> CapabilityRuntime:
        return self._runtime()

    async def invoke(
        self,
        capability: str,
        params: Mapping[str, Any] | None = None,
        *,
        instance: str | None = None,
        invocation_id: str | None = None,
        on_status: StatusCallback | None = None,
    ) -> InvocationOutcome:
        """Invoke ``capability`` with ``params`` on ``instance`` (which may be left out when
        the provider has one) and wait for its terminal status; see the module docstring.

        ``invocation_id`` (1–128 characters) is yours to give when the invocation must be
        recognised beyond this handler's journal; it then also keeps its outcome in the state
        file after the task ends, so invoking it again (the same capability, instance and
        params) returns the recorded outcome and runs nothing twice. Without it the id is
        derived from the task and the step.
        """
        runtime = self._current()
        arguments = dict(params or {})
        index, step = self._journal.begin("capability.invoke", capability)
        if step is None:
            own = invocation_id or self._journal.derive("inv", index)
            payload = build_payload(
                CapabilityInvoke,
                invocation_id=own,
                capability=capability,
                instance=instance,
                params=arguments,
            )
            envelope = runtime.make_envelope(
                "capability.invoke",
                payload,
                envelope_id=self._journal.derive("evt", index),
                task_id=self._task_id,
                conversation_id=self._conversation_id,
            )
            step = self._journal.commit(
                index,
                "capability.invoke",
                capability,
                {"invocationId": own, "keep": invocation_id is not None},
                envelope,
            )
        recorded = str(step.result["invocationId"])
        if invocation_id is not None and invocation_id != recorded:
            raise JournalMismatch(
                f"Step {index} of {self._journal.scope} invoked {capability} as {recorded!r} "
                f"when it first ran, and now as {invocation_id!r}."
            )
        await runtime.wait_settled(step)
        result = await runtime.wait_invocation(recorded, on_status)
        return InvocationOutcome.from_result(result)
