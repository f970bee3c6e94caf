"""LAP/0.1, the LineUp Agent Protocol: pure models, validation and codec; no I/O."""

from lineup.protocol.codec import (
    MAX_FRAME_BYTES,
    Answer,
    Decoded,
    DecodeResult,
    Ignored,
    Rejected,
    decode_answer,
    decode_frame,
    decode_object,
    encode,
)
from lineup.protocol.envelope import PROTOCOL_VERSION, Envelope
from lineup.protocol.errors import ErrorCode, LineupError
from lineup.protocol.events import CATALOG, DOWNLINK_TYPES, Sender
from lineup.protocol.facts import RECORDED_TYPES
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id, new_ulid
from lineup.protocol.interaction import Interaction, InteractionResponse, InteractionType
from lineup.protocol.times import format_timestamp

__all__ = [
    "CATALOG",
    "DOWNLINK_TYPES",
    "MAX_FRAME_BYTES",
    "PROTOCOL_VERSION",
    "RECORDED_TYPES",
    "Ack",
    "Answer",
    "DecodeResult",
    "Decoded",
    "Envelope",
    "ErrorCode",
    "ErrorFrame",
    "Ignored",
    "Interaction",
    "InteractionResponse",
    "InteractionType",
    "LineupError",
    "Rejected",
    "Sender",
    "decode_answer",
    "decode_frame",
    "decode_object",
    "encode",
    "format_timestamp",
    "new_id",
    "new_ulid",
]
