"""The interaction card an agent asks a person to answer (seed 001 §7.3, §10.4).

A card reads as: why you (``why``) → impact (``impact``) → what you can do (``options``) →
details (``details``, collapsed). The answer is a small structured object, never free JSON, so
the hub can tell "the same answer again" from "a different answer" (a conflict).
"""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, Field, field_serializer

from lineup.protocol._model import WireModel
from lineup.protocol.envelope import Identifier
from lineup.protocol.links import LinkUrl
from lineup.protocol.times import format_timestamp

ShortText = Annotated[str, Field(min_length=1, max_length=200)]
LongText = Annotated[str, Field(max_length=20_000)]

MAX_INPUT_JSON = 64 * 1024
"""Bytes (compact UTF-8 JSON) of an approval's editable input, and of the edited input."""


def _bounded_object(value: dict[str, Any]) -> dict[str, Any]:
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_INPUT_JSON:
        raise ValueError(f"is {size} bytes as JSON, over the limit of {MAX_INPUT_JSON}")
    return value


InputObject = Annotated[dict[str, Any], AfterValidator(_bounded_object)]
"""A JSON object of at most :data:`MAX_INPUT_JSON` bytes: an action's input."""


class InteractionType(StrEnum):
    APPROVAL = "approval"
    CHOICE = "choice"
    INPUT = "input"
    REVIEW = "review"


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class InputFormat(StrEnum):
    TEXT = "text"
    EMAIL = "email"
    URL = "url"
    NUMBER = "number"
    INTEGER = "integer"


class InteractionOption(WireModel):
    id: Identifier
    label: ShortText
    style: Literal["primary", "secondary", "danger"] | None = None
    recommended: bool = False
    description: LongText | None = None


class Attachment(WireModel):
    name: ShortText
    url: LinkUrl
    mime_type: Annotated[str, Field(max_length=200)] | None = None


class Interaction(WireModel):
    """A request for a person's decision; ``id`` is chosen by the agent and unique."""

    id: Identifier
    type: InteractionType
    title: ShortText
    description: LongText | None = None
    why: LongText | None = None
    impact: LongText | None = None
    risk: Risk | None = None
    options: Annotated[list[InteractionOption], Field(max_length=5)] | None = None
    allow_other: bool = False
    multiple: bool = False
    format: InputFormat | None = None
    pattern: Annotated[str, Field(max_length=500)] | None = None
    placeholder: Annotated[str, Field(max_length=200)] | None = None
    content: LongText | None = None
    attachments: Annotated[list[Attachment], Field(max_length=20)] | None = None
    details: dict[str, Any] | None = None
    editable_input: InputObject | None = None
    """An approval only: the input of the action asked about (a tool's arguments), which the
    person may change before allowing it; the answer then carries the changed ``input``."""
    expires_at: AwareDatetime | None = None

    @field_serializer("expires_at")
    def _serialize_expiry(self, value: datetime | None) -> str | None:
        return None if value is None else format_timestamp(value)


class InteractionResponse(WireModel):
    """The person's answer: an option, several options, and/or text (input, note, comment);
    for an approval with ``editableInput``, allowed with ``input`` changed by the person."""

    option_id: Identifier | None = None
    option_ids: Annotated[list[Identifier], Field(max_length=5)] | None = None
    text: LongText | None = None
    input: InputObject | None = None
    """The action's input as the person edited it (with ``optionId`` ``approve`` only)."""
