"""What handlers wait for from the hub: their events settled, people's answers, tool results,
where their capability invocations are.

An answer is kept in the state file when it arrives (so a handler resumed after a restart
finds it) and handed to whoever waits now. A request the hub withdrew or let expire is told
to its waiter at once, and remembered for a wait that starts later.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from lineup.protocol.capabilities import TERMINAL_STATUSES, CapabilityResult, InvocationStatus
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import ErrorCode, LineupError, error_from_code
from lineup.protocol.events import InteractionExpiry, InteractionResolved
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.tools import ToolResult
from lineup.sdk._capabilities import ANSWER_PREFIX as INVOCATION_PREFIX
from lineup.sdk._capabilities import PASSING_STATUSES, StatusCallback, report_status
from lineup.sdk._errors import InteractionExpired, RequestWithdrawn
from lineup.sdk._state import OutboxEntry, StateStore, Step
from lineup.sdk._tools import ANSWER_PREFIX, dump_result, parse_result
from lineup.sdk._waiters import Waiters

logger = logging.getLogger("lineup.sdk")

WITHDRAWN_PREFIX = "withdrawn:"
"""State-file key of a request the hub withdrew (the value is its reason)."""


class Requests:
    """The waiting side of every request an agent makes of the hub."""

    def __init__(self, store: Callable[[], StateStore]) -> None:
        self._store = store
        self._settled: Waiters[None] = Waiters()
        self._resolved: Waiters[InteractionResolved] = Waiters()
        self._expired: dict[str, datetime] = {}
        """Interactions the hub said expired, for a wait that starts after it said so."""
        self._tool_results: Waiters[ToolResult] = Waiters()
        self._invocations: dict[str, list[asyncio.Queue[CapabilityResult]]] = {}
        """Each wait for an invocation hears every status as it arrives, in order."""

    @property
    def store(self) -> StateStore:
        return self._store()

    # --- the agent's own events -------------------------------------------------------------

    async def wait_settled(self, step: Step) -> None:
        current = self.store.step(step.scope, step.index) or step
        if current.status in ("acked", "done"):
            return
        if current.status == "failed":
            raise recorded_error(current.error)
        assert current.envelope_id is not None
        await self._settled.wait(current.envelope_id)

    def settle(self, entry: OutboxEntry, answer: Ack | ErrorFrame) -> None:
        """Record the hub's final answer to an outbox entry and wake whoever waits for it."""
        if isinstance(answer, Ack):
            self.store.settle(entry, sequence=answer.sequence)
            self._settled.resolve(entry.envelope_id, None)
            return
        error: dict[str, Any] = {"code": answer.code.value, "message": answer.message}
        if answer.details:
            error["details"] = answer.details
        self.store.settle(entry, error=error)
        self._settled.fail(entry.envelope_id, recorded_error(error))

    # --- people's answers -------------------------------------------------------------------

    async def wait_answer(
        self, interaction_id: str, expires_at: datetime | None
    ) -> InteractionResolved:
        stored = self.store.answer(interaction_id)
        if stored is not None:
            return InteractionResolved.model_validate_json(stored)
        self._raise_if_withdrawn(interaction_id)
        if interaction_id in self._expired:
            raise InteractionExpired(interaction_id, self._expired[interaction_id])
        # No timer of the agent's own at ``expires_at``: the hub decides. An answer it accepted
        # just before the deadline still counts, and a task that gave up early would report
        # ``succeeded`` while the hub still records it waiting (refused as a conflict).
        return await self._resolved.wait(interaction_id)

    def resolved(self, envelope: Envelope, payload: InteractionResolved) -> None:
        raw = payload.model_dump_json(by_alias=True, exclude_none=True)
        self.store.remember_answer(envelope.sequence, payload.interaction_id, raw)
        stored = self.store.answer(payload.interaction_id)
        first = InteractionResolved.model_validate_json(stored) if stored else payload
        logger.info("interaction %s answered by %s", payload.interaction_id, payload.responded_by)
        self._resolved.resolve(payload.interaction_id, first)

    def expired(self, payload: InteractionExpiry) -> None:
        """The hub's clock says nobody answered in time: this, not the agent's own clock, ends
        the wait."""
        logger.info("interaction %s expired unanswered", payload.interaction_id)
        expires_at = (
            datetime.fromtimestamp(payload.expires_at / 1000, tz=UTC)
            if payload.expires_at is not None
            else datetime.now(UTC)
        )
        self._expired[payload.interaction_id] = expires_at
        self._resolved.fail(
            payload.interaction_id, InteractionExpired(payload.interaction_id, expires_at)
        )

    # --- tool calls -------------------------------------------------------------------------

    async def wait_tool_result(self, call_id: str) -> ToolResult:
        """The answer to a tool call: kept in the state file when it arrived, or awaited."""
        stored = self.store.answer(ANSWER_PREFIX + call_id)
        if stored is not None:
            return parse_result(stored)
        self._raise_if_withdrawn(call_id)
        return await self._tool_results.wait(call_id)

    def tool_result(self, envelope: Envelope, payload: ToolResult) -> None:
        key = ANSWER_PREFIX + payload.call_id
        self.store.remember_answer(envelope.sequence, key, dump_result(payload))
        stored = self.store.answer(key)
        first = parse_result(stored) if stored else payload
        logger.info("tool call %s answered", payload.call_id)
        self._tool_results.resolve(payload.call_id, first)

    def stop_tool_waits(self) -> None:
        """The agent is stopping: agent-level calls stop waiting."""
        self._tool_results.cancel_all()

    # --- capability invocations -------------------------------------------------------------

    async def wait_invocation(
        self, invocation_id: str, on_status: StatusCallback | None
    ) -> CapabilityResult:
        """The invocation's terminal result: kept in the state file when it arrived, or
        awaited.

        Every status it passed through before its end goes to ``on_status``, once per wait and
        in order, including those that arrived before the wait began: a resumed handler hears
        the same statuses as the run it resumes, so what it does on hearing them (a journaled
        ``say``) replays as it first ran."""
        queue: asyncio.Queue[CapabilityResult] = asyncio.Queue()
        self._invocations.setdefault(invocation_id, []).append(queue)
        try:
            reported: set[InvocationStatus] = set()
            for status in PASSING_STATUSES:
                stored = self.store.answer(_passing_key(invocation_id, status))
                if stored is not None:
                    reported.add(status)
                    await report_status(on_status, CapabilityResult.model_validate_json(stored))
            while True:
                final = self.store.answer(INVOCATION_PREFIX + invocation_id)
                if final is not None:
                    return CapabilityResult.model_validate_json(final)
                heard = await queue.get()
                if heard.status not in TERMINAL_STATUSES and heard.status not in reported:
                    reported.add(heard.status)
                    await report_status(on_status, heard)
        finally:
            waiting = self._invocations.get(invocation_id)
            if waiting is not None and queue in waiting:
                waiting.remove(queue)
                if not waiting:
                    del self._invocations[invocation_id]

    def capability_result(self, envelope: Envelope, payload: CapabilityResult) -> None:
        """Keep each status the first time it is heard (the first terminal one is final) and
        tell whoever waits; a replayed one changes nothing."""
        if payload.status in TERMINAL_STATUSES:
            key = INVOCATION_PREFIX + payload.invocation_id
        else:
            key = _passing_key(payload.invocation_id, payload.status)
        raw = payload.model_dump_json(by_alias=True, exclude_none=True)
        if self.store.remember_answer(envelope.sequence, key, raw):
            logger.info("invocation %s: %s", payload.invocation_id, payload.status.value)
        for queue in self._invocations.get(payload.invocation_id, ()):
            queue.put_nowait(payload)

    # --- withdrawn requests -----------------------------------------------------------------

    def withdrawn(self, sequence: int | None, request_id: str, reason: str | None) -> None:
        """Kept in the state file like an answer, so a handler resumed after a restart learns
        it too; whoever waits now hears it at once."""
        logger.info("request %s withdrawn by the hub: %s", request_id, reason or "no reason")
        self.store.remember_answer(sequence, WITHDRAWN_PREFIX + request_id, reason or "")
        error = RequestWithdrawn(request_id, reason)
        self._resolved.fail(request_id, error)
        self._tool_results.fail(request_id, error)

    def _raise_if_withdrawn(self, request_id: str) -> None:
        reason = self.store.answer(WITHDRAWN_PREFIX + request_id)
        if reason is not None:
            raise RequestWithdrawn(request_id, reason or None)


def _passing_key(invocation_id: str, status: InvocationStatus) -> str:
    return f"{INVOCATION_PREFIX}{invocation_id}:{status.value}"


def recorded_error(error: dict[str, Any] | None) -> LineupError:
    """The error the hub answered an event with, as kept in the state file."""
    error = error or {}
    return error_from_code(
        str(error.get("code", ErrorCode.UNKNOWN_RESULT.value)),
        str(error.get("message", "The hub refused this event.")),
        error.get("details"),
    )
