"""What the hub sends an agent, event by event: journaled, then handed to whoever needs it.

Every downlink event carries a sequence; the state file's cursor moves past it only once
the event is handled (a task journaled, an answer kept), so an event the agent missed or
did not finish with is replayed after a reconnect or a restart — and one it handled
already is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from lineup.protocol.builtin_tools import ToolCancel
from lineup.protocol.capabilities import CapabilityListing, CapabilityResult
from lineup.protocol.codec import encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.events import (
    AgentConfirmed,
    AgentSettings,
    InteractionCancelled,
    InteractionExpiry,
    InteractionResolved,
    MessageDelivered,
    SystemResyncRequired,
    TaskAssigned,
    TaskCancelRequested,
    TaskEndedByHub,
)
from lineup.protocol.tools import ToolList, ToolResult
from lineup.sdk._binding import Binding
from lineup.sdk._requests import Requests
from lineup.sdk._runners import Runners
from lineup.sdk._state import StateStore

logger = logging.getLogger("lineup.sdk")


class Downlink:
    """Routes each downlink event to the journal, the runners or the waiting requests."""

    def __init__(
        self,
        store: Callable[[], StateStore],
        requests: Requests,
        runners: Runners,
        binding: Binding | None = None,
    ) -> None:
        self._store = store
        self.binding = binding if binding is not None else Binding(None)
        self.requests = requests
        self.runners = runners
        self.tool_lists: dict[str, list[dict[str, Any]]] = {}
        """Answers to ``tool.list`` queries, by the query's id."""
        self.capability_lists: dict[str, CapabilityListing] = {}
        """Answers to ``capability.list`` queries, by the query's id."""

    @property
    def store(self) -> StateStore:
        return self._store()

    def handle(self, envelope: Envelope, payload: Any) -> None:
        sequence = envelope.sequence
        store = self.store
        if isinstance(payload, CapabilityResult):
            # before the cursor check: a status replayed after a resent invoke still reaches a
            # wait that has not heard it (a status is kept once, so a replay changes nothing)
            self.requests.capability_result(envelope, payload)
            return
        if sequence is not None and sequence <= store.cursor:
            logger.debug("already handled %s #%d", envelope.type, sequence)
            return
        if isinstance(payload, TaskAssigned):
            self._task_assigned(envelope, payload)
        elif isinstance(payload, InteractionResolved):
            self.requests.resolved(envelope, payload)
        elif isinstance(payload, InteractionExpiry):
            self.requests.expired(payload)
            store.advance(sequence)
        elif isinstance(payload, InteractionCancelled):
            self.requests.withdrawn(sequence, payload.interaction_id, payload.reason)
        elif isinstance(payload, ToolCancel) and envelope.type == "tool.cancelled":
            self.requests.withdrawn(sequence, payload.call_id, payload.reason)
        elif isinstance(payload, TaskCancelRequested):
            self._cancel_requested(envelope, payload)
        elif isinstance(payload, TaskEndedByHub):
            self._task_ended(envelope, payload)
        elif isinstance(payload, MessageDelivered):
            self._message_delivered(envelope, payload)
        elif isinstance(payload, AgentConfirmed):
            self.binding.confirmed(payload.name)
            store.advance(sequence)
        elif isinstance(payload, AgentSettings):
            self.binding.changed(dict(payload.values))
            store.advance(sequence)
        elif isinstance(payload, ToolResult):
            self.requests.tool_result(envelope, payload)
        elif isinstance(payload, ToolList) and envelope.correlation_id is not None:
            self.tool_lists[envelope.correlation_id] = [t.wire() for t in payload.tools]
        elif isinstance(payload, CapabilityListing) and envelope.correlation_id is not None:
            self.capability_lists[envelope.correlation_id] = payload
        else:
            logger.debug("nothing to do for %s", envelope.type)
            store.advance(sequence)

    def ignored(self, envelope: Envelope, warning: str) -> None:
        """An event of a type this SDK does not know: skipped, and the cursor moves on."""
        logger.warning("%s", warning)
        self.store.advance(envelope.sequence)

    def resync(self, payload: SystemResyncRequired) -> None:
        """The hub compacted its log past this agent's cursor. What it still keeps for the
        agent — its open tasks, the outcomes of its requests, people's messages to it —
        follows this frame, after ``resumeAfter`` (the agent's own cursor), then everything
        from the horizon: the cursor moves to ``resumeAfter`` and the journal dedups
        whatever was handled already. Without ``resumeAfter`` (an older hub) nothing is
        replayed, so the cursor jumps to ``latestSequence``."""
        resume = payload.resume_after
        if resume is None:
            logger.warning(
                "the hub cannot replay what this agent missed (%s); continuing from sequence "
                "%s. Tasks already journaled go on; events in between are not replayed.",
                payload.reason,
                payload.latest_sequence,
            )
            if payload.latest_sequence is not None:
                self.store.reset_cursor(payload.latest_sequence)
            return
        logger.warning(
            "the hub compacted its log up to sequence %s (%s); it replays what it kept for "
            "this agent after %d",
            payload.earliest_sequence,
            payload.reason,
            resume,
        )
        self.store.reset_cursor(resume)

    def _task_assigned(self, envelope: Envelope, payload: TaskAssigned) -> None:
        scope = payload.task_id
        if not self.store.remember_job(envelope.sequence, scope, "task", encode(envelope)):
            logger.debug("task %s was assigned before; ignored", scope)
            return
        # ids only: these lines go to the agent's diagnostic logs, which every member of the
        # workspace reads, and a task's title belongs to whoever may see its conversation
        logger.info("task %s assigned", scope)
        job = self.store.job(scope)
        assert job is not None
        self.runners.start(job)

    def _cancel_requested(self, envelope: Envelope, payload: TaskCancelRequested) -> None:
        task_id = payload.task_id or envelope.task_id
        if task_id is None:
            logger.warning("task.cancel_requested names no task; ignored")
            self.store.advance(envelope.sequence)
            return
        if not self.store.request_cancel(envelope.sequence, task_id, payload.reason):
            logger.info("cancel requested for task %s, which is not running here", task_id)
            return
        logger.info("cancel requested for task %s", task_id)
        self.runners.cancel(task_id, payload.reason)

    def _task_ended(self, envelope: Envelope, payload: TaskEndedByHub) -> None:
        """The hub ended one of this agent's tasks (live, or replayed after a reconnect): the
        job ends here too, its handler is cancelled, and its queued reports are dropped."""
        task_id = payload.task_id
        _, dropped = self.store.end_job(
            envelope.sequence,
            task_id,
            f"ended:{payload.cause}",
            self.runners.final_report_id(task_id),
        )
        logger.warning(
            "the hub ended task %s itself (%s, %s)%s",
            task_id,
            payload.status.value,
            payload.cause,
            f"; {dropped} queued report(s) for it dropped" if dropped else "",
        )
        self.runners.end(task_id, payload.cause)

    def _message_delivered(self, envelope: Envelope, payload: MessageDelivered) -> None:
        if not self.runners.handles_messages:
            logger.debug("message %s: no message handler; skipped", payload.message_id)
            self.store.advance(envelope.sequence)
            return
        scope = f"message:{payload.message_id}"
        if self.store.remember_job(envelope.sequence, scope, "message", encode(envelope)):
            job = self.store.job(scope)
            assert job is not None
            self.runners.start(job)
