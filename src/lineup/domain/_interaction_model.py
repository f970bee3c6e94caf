"""Shapes of an interaction request and its answer, shared by the rules and the lifecycle.

Import these from ``lineup.domain.interactions``; this module exists only to keep that one
readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class InteractionKind(StrEnum):
    APPROVAL = "approval"
    CHOICE = "choice"
    INPUT = "input"
    REVIEW = "review"


#: The answer id that carries free text when a choice allows "other".
OTHER_OPTION_ID = "other"

#: The option an approval's edited input goes with.
APPROVE_OPTION_ID = "approve"


@dataclass(frozen=True, slots=True)
class Option:
    id: str
    label: str
    style: str | None = None
    recommended: bool = False


@dataclass(frozen=True, slots=True)
class InteractionRequest:
    """What the agent asks; fields that do not apply to ``kind`` must keep their defaults."""

    id: str
    kind: InteractionKind
    title: str
    description: str | None = None
    risk: str | None = None  # "low" | "medium" | "high"
    options: tuple[Option, ...] = ()
    allow_other: bool = False  # choice only
    multiple: bool = False  # choice only
    input_format: str | None = None  # input only: "text" | "email" | "url" | "number" | "integer"
    pattern: str | None = None  # input only: the whole answer must match
    expires_at_ms: int | None = None  # None: wait for the person as long as it takes
    editable_input: bool = False  # approval only: the answer may carry the edited input


@dataclass(frozen=True, slots=True)
class InteractionResponse:
    """The person's answer. ``text`` is the input, the "other" text, or an approval/review note;
    ``input`` the action's input as the person edited it before allowing it."""

    option_id: str | None = None
    option_ids: tuple[str, ...] | None = None
    text: str | None = None
    input: Mapping[str, Any] | None = field(default=None, hash=False)


def default_approval_options() -> tuple[Option, ...]:
    return (
        Option("approve", "Approve", style="primary"),
        Option("reject", "Reject", style="danger"),
    )


def default_review_options() -> tuple[Option, ...]:
    return (
        Option("approve", "Approve", style="primary"),
        Option("request_changes", "Request changes"),
    )
