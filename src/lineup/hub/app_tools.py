"""Agents use tools on people's apps, through the hub (seed 000 §4–5).

The hub sits between the two ends of seed 000's tool protocol and keeps every step in the log:

* **Discovery.** A person's app registers its tools per device (``tool.registered``, from
  ``PUT …/devices/{deviceId}/tools`` or a ``tool.list`` frame on ``/ws/client``). An agent's
  ``tool.list`` query is answered with the union of the workspace's registered tools, or the
  built-in catalogue (``protocol.builtin_tools``) when no app registered any.
* **Calls.** An agent's ``tool.call`` is validated against the tool's ``inputSchema`` and
  recorded as ``tool.called``: a pending request like an interaction card — in the inbox,
  delivered live to open apps, there still for apps that open later.
* **Results.** The first app answer (``tool.result`` on the socket or
  ``POST …/tool-calls/{id}/result``) is recorded as ``tool.completed`` and reaches the agent
  as a downlink ``tool.result`` (replayed after reconnects). The same answer again changes
  nothing; a different one is a ``conflict``. A call's ``timeout_ms`` passing without an
  answer completes it with ``unavailable`` (the monitor); the agent may withdraw it
  (``tool.cancel`` → ``tool.cancelled``).

Ids: ``call_id`` is the agent's, unique per agent. The hub names each call ``tc_…`` (derived
from workspace, agent and call_id): that is the ``call_id`` on the app's side of the hub, so
two agents' ``c1`` never collide. A canvas opened by a call gets the instance id
``inst_…`` derived from that call, assigned when the call is recorded, so every app answers
``open`` with the same id.

Canvas calls take effect when an app answers them, in call order per instance (an answer
that skips an earlier pending call on the same instance is a ``conflict``); closing an
instance completes its later pending calls with ``not_found``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from lineup.domain import pending
from lineup.hub import sight
from lineup.hub.actors import AgentIdentity, Person
from lineup.hub.commands import (
    WITHDRAWN_REASON,
    Expired,
    Recorded,
    agents_conversation,
    agents_task,
    derived_id,
    refuse_if_cancelling,
)
from lineup.hub.recorder import Writing
from lineup.hub.translate import ToolOutcome, tool_call_pending
from lineup.protocol import builtin_tools as builtin
from lineup.protocol import facts
from lineup.protocol.codec import Decoded, describe_validation_error
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import (
    Conflict,
    ErrorCode,
    InvalidArgument,
    LineupError,
    NotFound,
    UnknownResult,
)
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id
from lineup.protocol.times import format_timestamp, ms_to_datetime
from lineup.protocol.tools import (
    ActionTool,
    AppTool,
    ToolCall,
    ToolList,
    ToolResult,
    ToolsetTool,
    validate_call,
)
from lineup.store import AppendResult, Reader
from lineup.store.records import ToolCallRecord, ToolDevice

if TYPE_CHECKING:
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.app_tools")

Registry = dict[str, ActionTool | ToolsetTool | AppTool]

CLIENT_TYPES = frozenset({"tool.list", "tool.result"})
"""Frames a person's app may send on ``/ws/client`` besides ``client.subscribe``."""

MAX_RESULT_BYTES = 64 * 1024
"""The largest ``result`` (or ``error``) an app may answer with, as compact JSON."""

PENDING = "pending"

TIMED_OUT = "This call timed out before your answer arrived; it can no longer be answered."


def tool_call_id(workspace_id: str, agent_id: str, call_id: str) -> str:
    return derived_id("tc", workspace_id, agent_id, call_id)


def canvas_instance_id(workspace_id: str, tool_call: str) -> str:
    return derived_id("inst", workspace_id, tool_call)


# --- discovery ---------------------------------------------------------------------------


def available_tools(read: Reader, workspace_id: str) -> tuple[list[dict[str, Any]], bool]:
    """The tools an agent in ``workspace_id`` may call, and whether they are the built-ins.

    The union of what the workspace's apps registered (the most recent registration of a
    name wins); the built-in catalogue when no app registered anything.
    """
    return tools_of(read.list_tool_devices(workspace_id))


def tools_of(devices: Sequence[ToolDevice]) -> tuple[list[dict[str, Any]], bool]:
    """:func:`available_tools` from the workspace's devices, already read."""
    union: dict[str, dict[str, Any]] = {}
    for device in devices:
        for tool in device.tools:
            union.setdefault(str(tool.get("name")), tool)
    if not union:
        return [dict(d) for d in builtin.BUILTIN_DEFINITIONS], True
    return list(union.values()), False


def registry(read: Reader, workspace_id: str) -> Registry:
    tools, builtins = available_tools(read, workspace_id)
    if builtins:
        return builtin.builtin_registry()
    try:
        listing = ToolList.model_validate({"tools": tools})
    except ValidationError:  # pragma: no cover - registrations are validated when recorded
        log.exception("registered tools of %s no longer parse; using the built-ins", workspace_id)
        listing = builtin.builtin_catalogue()
    return {tool.name: tool for tool in listing.tools}


def register_device(
    w: Writing,
    person: Person,
    device_id: str,
    listing: ToolList,
    *,
    name: str | None = None,
    event_id: str | None = None,
) -> Recorded:
    """Record what ``device_id`` offers; the same list again records nothing."""
    _check_device_id(device_id)
    tools = [tool.wire() for tool in listing.tools]
    names = [tool["name"] for tool in tools]
    if len(set(names)) != len(names):
        raise InvalidArgument("Each tool name may be registered once per device.")
    existing = w.read.get_tool_device(person.workspace_id, device_id)
    if (
        existing is not None
        and existing.tools == tools
        and existing.user_id == person.user_id
        and existing.name == name
    ):
        return Recorded(None, existing)
    fact = facts.ToolRegisteredPayload(
        device_id=device_id, user_id=person.user_id, tools=tools, name=name or None
    )
    result = w.append(person.workspace_id, fact, actor=person.actor, event_id=event_id)
    return Recorded(result, w.read.get_tool_device(person.workspace_id, device_id))


def _check_device_id(device_id: str) -> None:
    if not (1 <= len(device_id) <= 64) or not all(c.isalnum() or c in "_.:-" for c in device_id):
        raise InvalidArgument(
            "A device id is 1–64 letters, digits or _ . : -", details={"deviceId": device_id}
        )


# --- calls -------------------------------------------------------------------------------


def call_tool(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    task_id: str | None,
    conversation_id: str | None,
    call: ToolCall,
) -> Recorded:
    """Validate an agent's ``tool.call`` and record it as a pending ``tool.called``."""
    ws = agent.workspace_id
    if task_id is not None:
        task = agents_task(w.read, agent, task_id)
        refuse_if_cancelling(task)
        conversation_id = task.conversation_id
    else:
        conversation_id = agents_conversation(w.read, agent, None, conversation_id)
    validate_call(registry(w.read, ws), call)
    own_id = tool_call_id(ws, agent.agent_id, call.call_id)
    existing = w.read.get_tool_call(ws, own_id)
    if existing is not None:
        return _same_call_again(w, existing, call)
    instance_id = _canvas_target(w, agent, own_id, call) if call.name == "canvas" else None
    fact = facts.ToolCalledPayload(
        tool_call_id=own_id,
        call_id=call.call_id,
        agent_id=agent.agent_id,
        name=call.name,
        arguments=dict(call.arguments),
        target_agent_id=agent.agent_id,
        action=call.action,
        instance_id=instance_id,
        timeout_ms=call.timeout_ms,
        expires_at=None if call.timeout_ms is None else w.now_ms + call.timeout_ms,
    )
    result = w.append(
        ws,
        fact,
        actor=agent.actor,
        event_id=event_id,
        conversation_id=conversation_id,
        task_id=task_id,
    )
    return Recorded(result, own_id)


def _same_call_again(w: Writing, existing: ToolCallRecord, call: ToolCall) -> Recorded:
    """A call_id used before: the same call resent (acked as a duplicate), or a conflict."""
    same = (existing.name, existing.action, existing.arguments) == (
        call.name,
        call.action,
        dict(call.arguments),
    )
    if not same:
        raise Conflict(
            f"call_id {call.call_id!r} was already used for another call; "
            "use a new call_id for a new call.",
            details={"call_id": call.call_id, "toolCallId": existing.id},
        )
    original = w.read.read_events(existing.workspace_id, after=existing.sequence - 1, limit=1)
    if original and original[0].type == "tool.called":
        return Recorded(AppendResult(original[0], duplicate=True), existing.id)
    return Recorded(None, existing.id)  # its event compacted away: acked without a sequence


def _canvas_target(w: Writing, agent: AgentIdentity, own_id: str, call: ToolCall) -> str:
    """The instance a canvas call is about: a new one for ``open``, else an open one."""
    if call.action == "open":
        return canvas_instance_id(agent.workspace_id, own_id)
    instance_id = str(call.arguments.get("instance_id", ""))
    canvas = w.read.get_canvas(agent.workspace_id, instance_id)
    if canvas is None or canvas.agent_id != agent.agent_id:
        raise NotFound(
            f"No canvas instance {instance_id!r}; open one first.",
            details={"instance_id": instance_id},
        )
    if canvas.status != "open":
        raise NotFound(
            f"Canvas instance {instance_id!r} is closed; open a new one.",
            details={"instance_id": instance_id, "status": canvas.status},
        )
    if call.action == "draw" and canvas.draws >= builtin.MAX_DRAWS_PER_CANVAS:
        raise InvalidArgument(
            f"A canvas takes at most {builtin.MAX_DRAWS_PER_CANVAS} draws; open a new one.",
            details={"instance_id": instance_id, "limit": builtin.MAX_DRAWS_PER_CANVAS},
        )
    return instance_id


def complete_call(
    w: Writing,
    person: Person,
    tool_call: str,
    answer: ToolResult,
    *,
    device_id: str | None = None,
    event_id: str | None = None,
) -> Recorded:
    """A person's app answers a call: the first answer wins (recorded as ``tool.completed``)."""
    row = w.read.get_tool_call(person.workspace_id, tool_call)
    if row is None:
        raise NotFound(
            f"No tool call {tool_call!r} in this workspace.", details={"toolCallId": tool_call}
        )
    sight.check_acting(w.read, person, row.conversation_id, row.task_id)
    outcome = _outcome(row, answer)
    decision = pending.answer(
        tool_call_pending(row), outcome, by=person.actor, at_ms=w.now_ms, same=_same_outcome
    )
    if isinstance(decision, pending.Refused) and decision.record_expiry:
        refusal = Conflict(TIMED_OUT, details={"reason": "expired", "toolCallId": row.id})
        return Recorded(expire_call(w, row), Expired(row.id, refusal))
    if isinstance(decision, pending.NoOp):
        return Recorded(None, row)
    if not isinstance(decision, pending.Record):
        raise _answered_already(row)
    if row.name == "canvas" and row.instance_id and row.action != "open":
        earlier = w.read.earlier_pending_canvas_call(
            row.workspace_id, row.instance_id, row.sequence
        )
        if earlier is not None:
            raise Conflict(
                f"Answer canvas call {earlier.id!r} first: calls on one canvas are answered "
                "in the order they were made.",
                details={"toolCallId": earlier.id},
            )
    fact = facts.ToolCompletedPayload(
        tool_call_id=row.id,
        call_id=row.call_id,
        name=row.name,
        result=outcome.get("result"),
        error=outcome.get("error"),
        answered_by=person.actor,
        answered_by_name=person.display_name,
        answered_at=w.now_ms,
        target_agent_id=row.agent_id,
        action=row.action,
        device_id=device_id or None,
    )
    result = w.append(
        person.workspace_id,
        fact,
        actor=person.actor,
        event_id=event_id,
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )
    if row.name == "canvas" and row.action == "close" and "result" in outcome:
        _end_calls_on_closed_canvas(w, row)
    return Recorded(result, w.read.get_tool_call(person.workspace_id, row.id))


def _outcome(row: ToolCallRecord, answer: ToolResult) -> dict[str, Any]:
    """``{"result": …}`` or ``{"error": …}``, checked; ``invalid_argument`` otherwise."""
    if answer.name != row.name or (answer.action is not None and answer.action != row.action):
        raise InvalidArgument(
            f"This call is {row.name}{'.' + row.action if row.action else ''}; "
            f"the answer names {answer.name}{'.' + answer.action if answer.action else ''}.",
            details={"name": row.name, "action": row.action},
        )
    if (answer.result is None) == (answer.error is None):
        raise InvalidArgument("A tool result carries either a result or an error, not both.")
    if answer.error is not None:
        error = answer.error.wire()
        try:
            ErrorCode(error["code"])
        except ValueError:
            known = ", ".join(c.value for c in ErrorCode)
            raise InvalidArgument(
                f"Unknown error code {error['code']!r}; use one of: {known}."
            ) from None
        outcome: dict[str, Any] = {"error": error}
    else:
        assert answer.result is not None
        result = answer.result.wire()
        if row.name in builtin.BUILTIN_NAMES:
            builtin.check_result(
                row.name, row.action, row.arguments, result, instance_id=row.instance_id
            )
        outcome = {"result": result}
    size = len(json.dumps(outcome, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_RESULT_BYTES:
        raise InvalidArgument(
            f"The answer is {size} bytes; a tool result is at most {MAX_RESULT_BYTES} bytes.",
            details={"size": size, "limit": MAX_RESULT_BYTES},
        )
    return outcome


def _same_outcome(first: ToolOutcome, again: ToolOutcome) -> bool:
    """The same result message, or the same error: what the agent would see is the same."""
    if "result" in again:
        result = first.get("result")
        return result is not None and result.get("message") == again["result"].get("message")
    error, other = first.get("error"), again["error"]
    return error is not None and (error.get("code"), error.get("message")) == (
        other.get("code"),
        other.get("message"),
    )


def _answered_already(row: ToolCallRecord) -> Conflict:
    details: dict[str, Any] = {"toolCallId": row.id, "status": row.status}
    if row.status == "cancelled":
        details["reason"] = "cancelled"
        if row.cancel_reason == WITHDRAWN_REASON:
            message = "This call was withdrawn because its task was cancelled"
        else:
            why = f" ({row.cancel_reason.rstrip('.')})" if row.cancel_reason else ""
            message = f"The agent withdrew this call{why}"
        return Conflict(
            f"{message}; your answer was not recorded and did not reach the agent.",
            details=details,
        )
    if row.status == "expired":
        details["reason"] = "expired"
        return Conflict(TIMED_OUT, details=details)
    who = row.answered_by_name or row.answered_by or "another app"
    when = format_timestamp(ms_to_datetime(row.answered_at)) if row.answered_at else "earlier"
    details.update(answeredBy=row.answered_by, answeredByName=row.answered_by_name)
    details["answeredAt"] = when
    return Conflict(
        f"This call was already answered by {who} at {when}; the first answer stands.",
        details=details,
    )


def _end_calls_on_closed_canvas(w: Writing, closed: ToolCallRecord) -> None:
    assert closed.instance_id is not None
    for later in w.read.list_tool_calls(
        closed.workspace_id, statuses=[PENDING], instance_id=closed.instance_id
    ):
        if later.sequence <= closed.sequence:
            continue
        _system_completion(
            w,
            later,
            {"code": "not_found", "message": f"Canvas instance {closed.instance_id!r} is closed."},
            "closed",
        )


def expire_call(w: Writing, row: ToolCallRecord) -> AppendResult:
    """The call's ``timeout_ms`` passed with no answer: it completes with ``unavailable``."""
    error = {
        "code": ErrorCode.UNAVAILABLE.value,
        "message": f"No app answered within {row.timeout_ms} ms.",
    }
    return _system_completion(w, row, error, "expired", expired=True)


def _system_completion(
    w: Writing, row: ToolCallRecord, error: dict[str, Any], why: str, *, expired: bool = False
) -> AppendResult:
    fact = facts.ToolCompletedPayload(
        tool_call_id=row.id,
        call_id=row.call_id,
        name=row.name,
        error=error,
        answered_by="system",
        answered_at=w.now_ms,
        target_agent_id=row.agent_id,
        action=row.action,
        expired=True if expired else None,
    )
    return w.append(
        row.workspace_id,
        fact,
        actor="system",
        event_id=derived_id("evt", why, row.id),
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )


def cancel_call(
    w: Writing, agent: AgentIdentity, event_id: str, cancel: builtin.ToolCancel
) -> Recorded:
    """The agent withdraws a call: pending → ``tool.cancelled``; again → nothing."""
    row = w.read.get_tool_call(
        agent.workspace_id, tool_call_id(agent.workspace_id, agent.agent_id, cancel.call_id)
    )
    if row is None:
        raise NotFound(f"No tool call {cancel.call_id!r} of this agent.")
    decision = pending.withdraw(tool_call_pending(row), cancel.reason)
    if isinstance(decision, pending.NoOp):
        if decision.pending.status is pending.PendingStatus.CANCELLED:
            return Recorded(None, row.id)
        raise Conflict(
            f"Call {cancel.call_id!r} already ended ({row.status}); its tool.result is "
            "delivered to the agent.",
            details={"call_id": cancel.call_id, "status": row.status},
        )
    fact = facts.ToolCancelledPayload(
        tool_call_id=row.id,
        call_id=row.call_id,
        target_agent_id=row.agent_id,
        reason=cancel.reason or None,
    )
    result = w.append(
        agent.workspace_id,
        fact,
        actor=agent.actor,
        event_id=event_id,
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )
    return Recorded(result, row.id)


def expire_if_due(w: Writing, workspace_id: str, tool_call: str) -> bool:
    """The monitor's job for one overdue call; one answered or withdrawn meanwhile is left be."""
    row = w.read.get_tool_call(workspace_id, tool_call)
    if row is None:
        return False
    decision = pending.expire(tool_call_pending(row), w.now_ms)
    if not isinstance(decision, pending.Record):
        return False
    expire_call(w, row)
    return True


# --- the agents' socket: tool.list queries --------------------------------------------------


async def answer_query(
    hub: HubState, agent: AgentIdentity, envelope: Envelope, listing: ToolList
) -> Envelope:
    """An agent's ``tool.list`` with an empty list asks what it may call: the answer is a
    ``tool.list`` frame (not recorded) whose ``correlationId`` is the query's id."""
    if listing.tools:
        raise InvalidArgument(
            "Send tool.list with an empty list to ask which tools are available; "
            "an agent declares its own tools in agent.hello.",
        )
    tools, _ = await hub.store.read(lambda r: available_tools(r, agent.workspace_id))
    return Envelope(
        id=new_id("evt"),
        type="tool.list",
        occurred_at=ms_to_datetime(hub.clock()),
        workspace_id=agent.workspace_id,
        correlation_id=envelope.id,
        payload={"tools": tools},
    )


# --- the people's socket: tool.list (register) and tool.result --------------------------------


async def handle_client_frame(
    hub: HubState, person: Person, decoded: Decoded, device_id: str | None
) -> Ack | ErrorFrame:
    """One ``tool.list`` or ``tool.result`` from a person's app, answered by an ack or error.

    ``tool.list`` registers the app's tools for its device (the socket's ``deviceId`` query
    parameter, or ``deviceId`` in the payload). ``tool.result``'s ``call_id`` is the hub's
    ``toolCallId`` (``tc_…``), as the app saw it in ``tool.called``.
    """
    envelope = decoded.envelope
    try:
        if envelope.workspace_id != person.workspace_id:
            raise InvalidArgument("Send tools to the workspace this socket was opened for.")
        if envelope.type == "tool.list":
            listing: ToolList = decoded.payload
            device = device_id or (listing.model_extra or {}).get("deviceId")
            if not isinstance(device, str):
                raise InvalidArgument(
                    "Say which device registers: open the socket with ?deviceId=… "
                    "or put deviceId in the payload."
                )
            recorded = await hub.recorder.run(
                lambda w: register_device(w, person, device, listing, event_id=_event_id(envelope))
            )
        else:
            answer: ToolResult = decoded.payload
            recorded = await hub.recorder.run(
                lambda w: complete_call(
                    w,
                    person,
                    answer.call_id,
                    answer,
                    device_id=device_id,
                    event_id=_event_id(envelope),
                )
            )
            if isinstance(recorded.value, Expired):
                raise recorded.value.refusal
    except LineupError as exc:
        return ErrorFrame.from_error(exc, envelope.id)
    except Exception:
        log.exception("%s from a person's app failed", envelope.type)
        error = UnknownResult("The hub failed to process this frame; its outcome is unknown.")
        return ErrorFrame.from_error(error, envelope.id)
    return Ack(id=envelope.id, sequence=recorded.sequence, duplicate=recorded.duplicate)


def _event_id(envelope: Envelope) -> str:
    """Envelope ids are the people's socket's idempotency keys, scoped like HTTP keys."""
    return f"app.{envelope.id}"


def invalid_payload(error: ValidationError, what: str) -> InvalidArgument:
    message, problems = describe_validation_error(error)
    return InvalidArgument(f"Invalid {what}: {message}", details={"problems": problems})
