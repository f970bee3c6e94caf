"""The LAP/0.1 envelope (seed 001 §10): every WebSocket frame that carries an event.

The envelope ``id`` is the idempotency key: a sender that did not see the ack resends the same
id, and the hub answers with the original sequence instead of acting twice.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, ConfigDict, Field, field_serializer

from lineup.protocol._model import WireModel
from lineup.protocol.times import format_timestamp

PROTOCOL_VERSION: Literal["0.1"] = "0.1"

Identifier = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:\-]+$")]
EventType = Annotated[
    str, Field(min_length=3, max_length=64, pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
]


def _version_required(schema: dict[str, Any]) -> None:
    """Peers must say ``version`` (the codec refuses a frame without it); the default is only
    for envelopes this code builds."""
    required = schema.setdefault("required", [])
    if "version" not in required:
        required.insert(min(2, len(required)), "version")


class Envelope(WireModel):
    """One LAP event on the wire; ``payload`` is checked against the type's model by the codec."""

    model_config = ConfigDict(json_schema_extra=_version_required)

    id: Identifier
    type: EventType
    version: Literal["0.1"] = PROTOCOL_VERSION
    occurred_at: AwareDatetime
    workspace_id: Identifier
    conversation_id: Identifier | None = None
    task_id: Identifier | None = None
    sequence: Annotated[int, Field(ge=1)] | None = None
    correlation_id: Identifier | None = None
    payload: dict[str, Any] = Field(default_factory=dict)

    @field_serializer("occurred_at")
    def _serialize_time(self, value: datetime) -> str:
        return format_timestamp(value)


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def wire_size(value: Any) -> int:
    """Bytes of a JSON value as compact UTF-8 JSON: what the protocol's size limits measure."""
    return len(_COMPACT.encode(value).encode("utf-8"))


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(envelope: Envelope) -> str:
    """A digest of what an event says — type, where it belongs and its payload, not when it
    was sent — so a resend under the same id can be told from a different event that reused
    it."""
    content = [
        envelope.type,
        envelope.conversation_id,
        envelope.task_id,
        envelope.correlation_id,
        envelope.payload,
    ]
    return hashlib.sha256(_CANONICAL.encode(content).encode("utf-8")).hexdigest()[:32]
