"""What a person answered, as typed values (seed 001 §7.3).

Every answer records who decided and when (``by``, ``by_name``, ``at``) next to the decision,
as the card in LineUp does once it is answered.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lineup.protocol.events import InteractionResolved
from lineup.protocol.interaction import InteractionOption

logger = logging.getLogger("lineup.sdk")

APPROVE = "approve"
REJECT = "reject"
REQUEST_CHANGES = "request_changes"

_IDENTIFIER = re.compile(r"^[A-Za-z0-9_.:\-]{1,128}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Answered:
    """Who answered an interaction, and when."""

    interaction_id: str
    by: str
    by_name: str | None
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval(Answered):
    """The answer to :meth:`~lineup.sdk.TaskContext.ask_approval`; ``note`` is optional.

    ``input`` is set when the card offered an ``editable_input`` and the person allowed the
    action with that input changed: use it instead of the one asked about."""

    approved: bool
    note: str | None = None
    input: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice(Answered):
    """The answer to :meth:`~lineup.sdk.TaskContext.ask_choice`.

    ``option_ids`` and ``labels`` are the chosen options (one unless ``multiple``);
    ``other`` is the person's own text when the request allowed it.
    """

    option_ids: tuple[str, ...]
    labels: tuple[str, ...]
    other: str | None = None

    @property
    def option_id(self) -> str | None:
        """The (first) chosen option's id, or None when the person wrote their own."""
        return self.option_ids[0] if self.option_ids else None

    @property
    def label(self) -> str | None:
        """The (first) chosen option's label, or else the person's own text."""
        return self.labels[0] if self.labels else self.other


@dataclass(frozen=True, slots=True, kw_only=True)
class InputAnswer(Answered):
    """The answer to :meth:`~lineup.sdk.TaskContext.ask_input`."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Review(Answered):
    """The answer to :meth:`~lineup.sdk.TaskContext.ask_review`: approved, or changes asked."""

    approved: bool
    comment: str | None = None

    @property
    def changes_requested(self) -> bool:
        return not self.approved


def choice_options(
    options: Sequence[str | tuple[str, str]], recommended: str | None
) -> list[InteractionOption]:
    """Options as the card shows them; plain labels get ids (the label itself when it can)."""
    if not 2 <= len(options) <= 5:
        raise ValueError("A choice offers 2 to 5 options.")
    built: list[InteractionOption] = []
    seen: set[str] = set()
    for number, option in enumerate(options, start=1):
        if isinstance(option, tuple):
            option_id, label = option
        else:
            label = option
            option_id = option if _IDENTIFIER.match(option) else f"option-{number}"
        if option_id in seen:
            option_id = f"option-{number}"
        if option_id in seen:
            raise ValueError(f"Option id {option_id!r} is used twice.")
        seen.add(option_id)
        built.append(InteractionOption(id=option_id, label=label))
    if recommended is not None:
        matches = [o for o in built if recommended in (o.id, o.label)]
        if not matches:
            raise ValueError(f"The recommended option {recommended!r} is not one of the options.")
        built = [
            o.model_copy(update={"recommended": True}) if o is matches[0] else o for o in built
        ]
    return built


def _when(resolved: InteractionResolved) -> datetime:
    return datetime.fromtimestamp(resolved.responded_at / 1000, tz=UTC)


def _picked(resolved: InteractionResolved) -> list[str]:
    response = resolved.response
    if response.option_ids:
        return list(response.option_ids)
    return [response.option_id] if response.option_id else []


def approval_from(resolved: InteractionResolved) -> Approval:
    return Approval(
        approved=APPROVE in _picked(resolved),
        note=resolved.response.text or None,
        input=dict(resolved.response.input) if resolved.response.input is not None else None,
        interaction_id=resolved.interaction_id,
        by=resolved.responded_by,
        by_name=resolved.responded_by_name,
        at=_when(resolved),
    )


def review_from(resolved: InteractionResolved) -> Review:
    return Review(
        approved=APPROVE in _picked(resolved),
        comment=resolved.response.text or None,
        interaction_id=resolved.interaction_id,
        by=resolved.responded_by,
        by_name=resolved.responded_by_name,
        at=_when(resolved),
    )


def input_from(resolved: InteractionResolved) -> InputAnswer:
    return InputAnswer(
        text=resolved.response.text or "",
        interaction_id=resolved.interaction_id,
        by=resolved.responded_by,
        by_name=resolved.responded_by_name,
        at=_when(resolved),
    )


def choice_from(resolved: InteractionResolved, options: Sequence[InteractionOption]) -> Choice:
    labels = {o.id: o.label for o in options}
    picked = tuple(i for i in _picked(resolved) if i in labels)
    unknown = [i for i in _picked(resolved) if i not in labels]
    if unknown:
        logger.warning(
            "interaction %s: answer names unknown options %s", resolved.interaction_id, unknown
        )
    return Choice(
        option_ids=picked,
        labels=tuple(labels[i] for i in picked),
        other=resolved.response.text or None,
        interaction_id=resolved.interaction_id,
        by=resolved.responded_by,
        by_name=resolved.responded_by_name,
        at=_when(resolved),
    )
