"""What an agent sees of its workspace's log (seed 001 §10.3).

A downlink frame keeps the recorded event's id and sequence, so the agent's ``lastSequence`` is
a cursor into the same log and a replay after a reconnect is exact.
"""

from __future__ import annotations

from typing import Any

from lineup.protocol import facts
from lineup.protocol.capabilities import CapabilityResult, InvocationError, InvocationStatus
from lineup.protocol.envelope import Envelope
from lineup.protocol.times import ms_to_datetime
from lineup.store import StoredEvent, fact_of


def _envelope(event: StoredEvent, type_: str, payload: dict[str, Any]) -> Envelope:
    return Envelope(
        id=event.id,
        type=type_,
        occurred_at=ms_to_datetime(event.occurred_at),
        workspace_id=event.workspace_id,
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        sequence=event.sequence,
        correlation_id=event.correlation_id,
        payload=payload,
    )


CONNECTION_NEWS = frozenset(
    ("agent.connected", "agent.revoked", "agent.rejected", "agent.status_changed")
)
"""Events an agent's connection reacts to itself: its agent connected again, was revoked or
rejected, or was recorded offline (by another node, which found this one dead)."""


def concerns(event: StoredEvent, agent_id: str) -> bool:
    """Whether an agent's connection must look at ``event`` at all: :func:`for_agent` makes a
    frame only for the event's ``targetAgentId``, and the connection closes itself on news of
    its own agent. Everything else of the workspace is skipped without waking it, and without
    parsing its payload: this runs for every event of the workspace."""
    payload = event.payload
    return payload.get("targetAgentId") == agent_id or (
        event.type in CONNECTION_NEWS and payload.get("agentId") == agent_id
    )


def for_agent(event: StoredEvent, agent_id: str) -> Envelope | None:
    """The frame ``agent_id`` gets for ``event``, or None when it is not the agent's business."""
    if event.payload.get("targetAgentId") != agent_id or event.type not in facts.FACTS:
        return None  # checked on the stored JSON: most events are not this agent's
    fact = fact_of(event)
    payload: dict[str, Any]
    match fact:
        case facts.TaskCreatedPayload():
            payload = {"taskId": fact.task_id or event.task_id, "title": fact.title}
            if fact.description:
                payload["description"] = fact.description
            if fact.parent_task_id:
                payload["parentTaskId"] = fact.parent_task_id
            return _envelope(event, "task.assigned", payload)
        case facts.MessageCreatedPayload() if fact.author.kind == "user":
            payload = {
                "messageId": fact.message_id,
                "author": fact.author.wire(),
                "content": fact.content,
                "steer": bool(fact.steer),
            }
            if fact.attachments:
                payload["attachments"] = [a.wire() for a in fact.attachments]
            return _envelope(event, "message.delivered", payload)
        case facts.InteractionResolvedPayload():
            payload = {
                "interactionId": fact.interaction_id,
                "response": fact.response.wire(),
                "respondedBy": fact.responded_by,
                "respondedAt": fact.responded_at,
            }
            if fact.responded_by_name:
                payload["respondedByName"] = fact.responded_by_name
            return _envelope(event, "interaction.resolved", payload)
        case facts.InteractionCancelledPayload():
            payload = {"interactionId": fact.interaction_id}
            if fact.reason:
                payload["reason"] = fact.reason
            if fact.task_id:
                payload["taskId"] = fact.task_id
            return _envelope(event, "interaction.cancelled", payload)
        case facts.InteractionExpiredPayload():
            payload = {"interactionId": fact.interaction_id}
            if fact.expires_at is not None:
                payload["expiresAt"] = fact.expires_at
            return _envelope(event, "interaction.expired", payload)
        case facts.TaskCancelRequestedPayload():
            payload = {"taskId": fact.task_id}
            if fact.reason:
                payload["reason"] = fact.reason
            return _envelope(event, "task.cancel_requested", payload)
        case facts.TaskStatusChangedPayload() if fact.cause:
            # only the hub's own ends of a task name its agent (the agent knows its own)
            payload = {"taskId": fact.task_id, "status": fact.status, "cause": fact.cause}
            if fact.summary:
                payload["summary"] = fact.summary
            return _envelope(event, "task.status_changed", payload)
        case facts.AgentConfirmedPayload():
            payload = {"agentId": fact.agent_id, "name": fact.name}
            return _envelope(event, "agent.confirmed", payload)
        case facts.AgentSettingsChangedPayload():
            payload = {"agentId": fact.agent_id, "values": dict(fact.values)}
            return _envelope(event, "agent.settings", payload)
        case facts.ToolCompletedPayload():
            payload = {"call_id": fact.call_id, "name": fact.name}
            if fact.action is not None:
                payload["action"] = fact.action
            if fact.result is not None:
                payload["result"] = fact.result
            if fact.error is not None:
                payload["error"] = fact.error
            return _envelope(event, "tool.result", payload)
        case facts.ToolCancelledPayload() if event.actor != f"agent:{agent_id}":
            # The agent's own tool.cancel is not echoed; a withdrawal by the hub is news.
            payload = {"call_id": fact.call_id}
            if fact.reason:
                payload["reason"] = fact.reason
            return _envelope(event, "tool.cancelled", payload)
        case (
            facts.ApprovalRequestedPayload()
            | facts.ApprovalDecidedPayload()
            | facts.ExecutionAcceptedPayload()
            | facts.ExecutionFinishedPayload()
        ):
            result = capability_result(fact)
            if result is None:
                return None
            return _envelope(event, "capability.result", result.wire())
    return None


_REFUSALS = {
    "rejected": ("forbidden", "A person rejected this call"),
    "expired": ("unavailable", "Nobody decided this call in time"),
    "voided": ("conflict", "The approval no longer held"),
}


def capability_result(fact: facts.Fact) -> CapabilityResult | None:
    """Where an invocation is, from one of its facts: what the agent hears (section 9)."""
    match fact:
        case facts.ApprovalRequestedPayload():
            return CapabilityResult(
                invocation_id=fact.agent_invocation_id,
                capability=fact.capability,
                status=InvocationStatus.WAITING_FOR_APPROVAL,
                approval_id=fact.approval_id,
            )
        case facts.ApprovalDecidedPayload() if fact.decision != "approved":
            code, message = _REFUSALS[fact.decision]
            if fact.reason:
                message = f"{message}: {fact.reason}"
            return CapabilityResult(
                invocation_id=fact.agent_invocation_id,
                capability=fact.capability,
                status=InvocationStatus.REJECTED,
                approval_id=fact.approval_id,
                error=InvocationError(code=code, message=message, retryable=False),
            )
        case facts.ExecutionAcceptedPayload():
            return CapabilityResult(
                invocation_id=fact.agent_invocation_id,
                capability=fact.capability,
                status=InvocationStatus.ACCEPTED,
                execution_id=fact.execution_id,
                receipt=fact.receipt,
            )
        case facts.ExecutionFinishedPayload():
            error = None
            if fact.error is not None:
                error = InvocationError(
                    code=str(fact.error.get("code", "unknown_result")),
                    message=str(fact.error.get("message", "")),
                    retryable=bool(fact.error.get("retryable", False)),
                )
            return CapabilityResult(
                invocation_id=fact.agent_invocation_id,
                capability=fact.capability,
                status=InvocationStatus(fact.status),
                execution_id=fact.execution_id,
                output=fact.output,
                error=error,
                receipt=fact.receipt,
            )
    return None


def for_person(event: StoredEvent) -> dict[str, Any]:
    """People's apps see every recorded event as an envelope, plus who acted."""
    frame = _envelope(event, event.type, event.payload).wire()
    frame["actor"] = event.actor
    return frame
