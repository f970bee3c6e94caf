"""Between the wire (protocol models), the rules (domain) and the rows (store)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lineup import domain
from lineup.domain import interactions, pending
from lineup.protocol import errors
from lineup.protocol.interaction import Interaction, InteractionResponse
from lineup.protocol.times import datetime_to_ms
from lineup.store import records


def lineup_error(error: domain.DomainError) -> errors.LineupError:
    return errors.error_from_code(error.code, error.message, error.details or None)


@contextmanager
def domain_rules() -> Iterator[None]:
    """Re-raise a broken domain rule as the taxonomy error a client understands."""
    try:
        yield
    except domain.DomainError as exc:
        raise lineup_error(exc) from None


def task_state(task: records.Task) -> domain.TaskState:
    return domain.TaskState(
        status=domain.TaskStatus(task.status),
        progress=task.progress,
        summary=task.summary,
        error=task.error if isinstance(task.error, str) else None,
        cancel_requested=bool(task.cancel_requested),
        cancel_reason=task.cancel_reason,
    )


def interaction_request(wire: Interaction) -> domain.InteractionRequest:
    kind = domain.InteractionKind(wire.type.value)
    options = tuple(
        domain.Option(o.id, o.label, style=o.style, recommended=o.recommended)
        for o in wire.options or ()
    )
    if not options and kind is domain.InteractionKind.APPROVAL:
        options = domain.default_approval_options()
    if not options and kind is domain.InteractionKind.REVIEW:
        options = domain.default_review_options()
    return domain.InteractionRequest(
        id=wire.id,
        kind=kind,
        title=wire.title,
        description=wire.description,
        risk=wire.risk.value if wire.risk else None,
        options=options,
        allow_other=wire.allow_other,
        multiple=wire.multiple,
        input_format=wire.format.value if wire.format else None,
        pattern=wire.pattern,
        expires_at_ms=datetime_to_ms(wire.expires_at) if wire.expires_at else None,
        editable_input=wire.editable_input is not None,
    )


def with_default_options(wire: Interaction) -> Interaction:
    """Approval and review cards always show their two buttons, even if the agent sent none."""
    if wire.options:
        return wire
    request = interaction_request(wire)
    if not request.options:
        return wire
    options = [
        {"id": o.id, "label": o.label, **({"style": o.style} if o.style else {})}
        for o in request.options
    ]
    return Interaction.model_validate({**wire.wire(), "options": options})


def response_to_domain(response: InteractionResponse) -> domain.InteractionResponse:
    return domain.InteractionResponse(
        option_id=response.option_id,
        option_ids=tuple(response.option_ids) if response.option_ids is not None else None,
        text=response.text,
        input=response.input,
    )


def response_to_wire(response: domain.InteractionResponse) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if response.option_id is not None:
        body["optionId"] = response.option_id
    if response.option_ids is not None:
        body["optionIds"] = list(response.option_ids)
    if response.text is not None:
        body["text"] = response.text
    if response.input is not None:
        body["input"] = dict(response.input)
    return body


def interaction_state(row: records.Interaction) -> domain.InteractionState:
    wire = Interaction.model_validate(row.request)
    stored = row.response if isinstance(row.response, dict) else None
    response = response_to_domain(InteractionResponse.model_validate(stored)) if stored else None
    return domain.InteractionState(
        request=interaction_request(wire),
        status=domain.InteractionStatus(row.status),
        response=response,
        responded_by=row.responded_by,
        responded_at_ms=row.responded_at,
    )


ToolOutcome = dict[str, Any]
"""A tool call's answer as the lifecycle sees it: ``{"result": …}`` or ``{"error": …}``."""

_TOOL_CALL_STATUSES = {
    "pending": pending.PendingStatus.OPEN,
    "completed": pending.PendingStatus.ANSWERED,
    "failed": pending.PendingStatus.ANSWERED,  # answered with an error
    "expired": pending.PendingStatus.EXPIRED,
    "cancelled": pending.PendingStatus.CANCELLED,
}


def tool_call_pending(row: records.ToolCallRecord) -> pending.Pending[ToolOutcome]:
    """A tool call on a person's app as a pending request (answered once, like a card)."""
    status = _TOOL_CALL_STATUSES[row.status]
    outcome: ToolOutcome | None = None
    if status is pending.PendingStatus.ANSWERED:
        outcome = {"error": row.error} if row.error is not None else {"result": row.result}
    return pending.Pending(
        status=status,
        answer=outcome,
        answered_by=row.answered_by,
        answered_at_ms=row.answered_at,
        expires_at_ms=row.expires_at,
        cancel_reason=row.cancel_reason,
    )


def interaction_pending(
    row: records.Interaction,
) -> pending.Pending[domain.InteractionResponse]:
    return interactions.as_pending(interaction_state(row))
