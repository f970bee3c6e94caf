"""The hub's answer frames: every inbound event gets exactly one, an ack or an error.

They are deliberately not envelopes: they answer one, naming it by ``id``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from lineup.protocol._model import WireModel
from lineup.protocol.errors import ErrorCode, LineupError


class Ack(WireModel):
    """The event was accepted; ``sequence`` is its place in the log (none if not recorded)."""

    type: Literal["ack"] = "ack"
    id: str
    sequence: Annotated[int, Field(ge=1)] | None = None
    duplicate: bool = False
    ignored: bool = False
    warnings: list[str] | None = None

    def wire(self) -> dict[str, Any]:
        """As ``WireModel.wire`` (a test pins that), built by hand: the hub sends one ack per
        inbound event, and the generic dump is a visible share of that path."""
        if self.model_extra:
            return super().wire()
        out: dict[str, Any] = {"type": self.type, "id": self.id}
        if self.sequence is not None:
            out["sequence"] = self.sequence
        out["duplicate"] = self.duplicate
        out["ignored"] = self.ignored
        if self.warnings is not None:
            out["warnings"] = list(self.warnings)
        return out


def _id_required(schema: dict[str, Any]) -> None:
    """Every error names the frame it answers: ``id`` is always sent, ``null`` if unreadable."""
    required = schema.setdefault("required", [])
    if "id" not in required:
        required.insert(0, "id")


class ErrorFrame(WireModel):
    """The event was refused; nothing changed. ``retryable`` follows the taxonomy."""

    model_config = ConfigDict(json_schema_extra=_id_required)

    type: Literal["error"] = "error"
    id: str | None = None
    code: ErrorCode
    message: str
    retryable: bool = False
    details: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        """``id`` is always there: ``null`` when the frame answered was too broken to name."""
        out = super().wire()
        out.setdefault("id", None)
        return out

    @classmethod
    def from_error(cls, error: LineupError, envelope_id: str | None = None) -> ErrorFrame:
        return cls(
            id=envelope_id,
            code=error.code,
            message=error.message,
            retryable=error.retryable,
            details=error.details or None,
        )
