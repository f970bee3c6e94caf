"""Raw frames in, typed events or a precise error out — never an exception to the caller.

This is LineUp's sans-I/O core: the hub's gateway, the SDK and direct mode all pass every
frame through :func:`decode_frame` and send what :func:`encode` gives back.

Limits: a frame is at most :data:`MAX_FRAME_BYTES` (256 KiB) of UTF-8 JSON, nested at most
:data:`MAX_DEPTH` levels; ``NaN`` and ``Infinity`` are not JSON and are refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from lineup.protocol._model import unknown_fields
from lineup.protocol.envelope import PROTOCOL_VERSION, Envelope
from lineup.protocol.errors import InvalidArgument, LineupError
from lineup.protocol.events import CATALOG, Sender, payload_model
from lineup.protocol.frames import Ack, ErrorFrame

MAX_FRAME_BYTES = 256 * 1024
MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Decoded:
    """A valid event: the envelope, its typed payload, and any fields this version ignores."""

    envelope: Envelope
    payload: Any
    unknown_fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ignored:
    """A well-formed envelope of a type this version does not know (seed 001 §10)."""

    envelope: Envelope
    warning: str


@dataclass(frozen=True, slots=True)
class Rejected:
    error: ErrorFrame


@dataclass(frozen=True, slots=True)
class Answer:
    """An ack or error frame, as a peer of the hub receives it."""

    frame: Ack | ErrorFrame


DecodeResult = Decoded | Ignored | Rejected


def _reject(message: str, envelope_id: str | None = None, **details: Any) -> Rejected:
    error = InvalidArgument(message, details=details or None)
    return Rejected(ErrorFrame.from_error(error, envelope_id))


def _article(sender: Sender) -> str:
    return "An" if sender is Sender.AGENT else "A"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _may_have_shape_problem(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether decoded ``text`` could fail :func:`_shape_problem`, judged from the text.

    Strict JSON carries a NUL only as the escape ``\\u0000``, and nesting deeper than
    ``limit`` needs more than ``limit`` brackets; most frames have neither, and these scans
    run in C where the walk over the decoded value would not.
    """
    return "\\u0000" in text or text.count("{") + text.count("[") > limit


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _shape_problem(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """Nesting beyond ``limit``, or a NUL character (no database stores one in text)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return f"The frame is nested deeper than {limit} levels."
        if isinstance(item, str):
            if "\x00" in item:
                return "The frame contains a NUL character (\\u0000), which LineUp does not store."
        elif isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
            stack.extend((key, depth + 1) for key in item)
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return None


def describe_validation_error(
    error: ValidationError, prefix: str = ""
) -> tuple[str, list[dict[str, str]]]:
    """A one-line sentence for a person, plus every problem as ``{path, problem}`` — the one
    shape ``details.problems`` has everywhere (frames, HTTP requests, tool arguments)."""
    problems = []
    for item in error.errors(include_url=False):
        path = ".".join(str(part) for part in item["loc"])
        problems.append(
            {"path": f"{prefix}{path}" if path else prefix.rstrip("."), "problem": item["msg"]}
        )
    if not problems:
        return "invalid value", []
    first = problems[0]
    where = f"{first['path']}: " if first["path"] else ""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}{first['problem']}{more}", problems[:20]


def parse_json(raw: str | bytes, max_bytes: int = MAX_FRAME_BYTES) -> Any:
    """Strict JSON within the size limit; raises ``InvalidArgument`` otherwise."""
    # A character is at most four bytes in UTF-8: only a long text needs encoding to be sure.
    if isinstance(raw, bytes):
        size = len(raw)
    else:
        size = len(raw) if len(raw) * 4 <= max_bytes else len(raw.encode("utf-8"))
    if size > max_bytes:
        raise InvalidArgument(
            f"The frame is {size} bytes; the limit is {max_bytes} bytes.",
            details={"size": size, "limit": max_bytes},
        )
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        data = _DECODER.decode(text)
    except UnicodeDecodeError:
        raise InvalidArgument("The frame is not valid UTF-8.") from None
    except (ValueError, RecursionError) as exc:
        raise InvalidArgument(f"The frame is not valid JSON: {exc}".rstrip()) from None
    return data


def refuse_binary() -> Rejected:
    """The answer to a binary WebSocket message: LAP frames are JSON in text messages, and a
    peer that sends bytes should hear so rather than have them guessed at as UTF-8."""
    return _reject(
        "A frame must be a WebSocket text message holding JSON; binary messages are not read."
    )


def decode_frame(
    raw: str | bytes, sender: Sender, *, max_bytes: int = MAX_FRAME_BYTES
) -> DecodeResult:
    """Decode one inbound frame from ``sender``; every outcome is a value, never a raise."""
    try:
        data = parse_json(raw, max_bytes)
    except LineupError as exc:
        return Rejected(ErrorFrame.from_error(exc))
    text = raw if isinstance(raw, str) else raw.decode("utf-8")
    return decode_object(data, sender, check_shape=_may_have_shape_problem(text))


def decode_object(data: Any, sender: Sender, *, check_shape: bool = True) -> DecodeResult:
    """Validate a parsed frame. ``check_shape=False`` only when its text showed it cannot be
    too deep or hold a NUL (see ``_may_have_shape_problem``)."""
    if not isinstance(data, dict):
        return _reject("A frame must be a JSON object (an envelope).")
    raw_id = data.get("id")
    envelope_id = raw_id if isinstance(raw_id, str) and len(raw_id) <= 128 else None
    problem = _shape_problem(data) if check_shape else None
    if problem is not None:
        return _reject(problem, envelope_id if envelope_id and "\x00" not in envelope_id else None)
    version = data.get("version")
    if version is not None and version != PROTOCOL_VERSION:
        return _reject(
            f"Protocol version {version!r} is not supported; this peer speaks "
            f"LAP/{PROTOCOL_VERSION}.",
            envelope_id,
            supported=[PROTOCOL_VERSION],
        )
    try:
        envelope = Envelope.model_validate(data)
    except ValidationError as exc:
        message, problems = describe_validation_error(exc)
        return _reject(f"Invalid envelope: {message}", envelope_id, problems=problems)
    except (TypeError, ValueError, RecursionError) as exc:  # pragma: no cover - defensive
        return _reject(f"Invalid envelope: {exc}", envelope_id)
    if version is None:
        return _reject(
            f'The frame has no version; LAP/{PROTOCOL_VERSION} frames say "version": '
            f'"{PROTOCOL_VERSION}".',
            envelope.id,
            supported=[PROTOCOL_VERSION],
        )
    spec = CATALOG.get(envelope.type)
    if spec is None:
        return Ignored(
            envelope,
            f"Event type {envelope.type!r} is unknown to LAP/{PROTOCOL_VERSION}; ignored.",
        )
    if sender not in spec.senders:
        return _reject(
            f"{_article(sender)} {sender.value} may not send {envelope.type!r}.",
            envelope.id,
            type=envelope.type,
        )
    model = payload_model(envelope.type, sender)
    assert model is not None
    try:
        payload = model.model_validate(envelope.payload)
    except ValidationError as exc:
        message, problems = describe_validation_error(exc, "payload.")
        return _reject(
            f"Invalid {envelope.type} payload: {message}", envelope.id, problems=problems
        )
    except (TypeError, ValueError, RecursionError) as exc:
        return _reject(f"Invalid {envelope.type} payload: {exc}", envelope.id)
    found = [f for f in unknown_fields(envelope)]
    if isinstance(payload, BaseModel):
        found.extend(unknown_fields(payload, "payload."))
    return Decoded(envelope, payload, tuple(found))


def decode_answer(raw: str | bytes) -> Answer | DecodeResult:
    """For hub peers: an ack/error frame, or an event the hub sent."""
    try:
        data = parse_json(raw)
    except LineupError as exc:
        return Rejected(ErrorFrame.from_error(exc))
    if isinstance(data, dict) and data.get("type") in ("ack", "error"):
        try:
            frame: Ack | ErrorFrame = (
                Ack.model_validate(data)
                if data["type"] == "ack"
                else ErrorFrame.model_validate(data)
            )
        except ValidationError as exc:
            message, problems = describe_validation_error(exc)
            return _reject(f"Invalid answer frame: {message}", None, problems=problems)
        return Answer(frame)
    return decode_object(data, Sender.HUB)


def encode(frame: Envelope | Ack | ErrorFrame) -> str:
    """Compact JSON for the wire."""
    return _ENCODER.encode(frame.wire())


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
