"""Reading and writing session files: bytes in, checked lines out, and back.

:func:`load` takes a whole file — LineUp's, of any version it knows, or Pi's — and answers
the current version's lines, or an ``invalid_argument`` naming the first bad line and what is
wrong with it. :func:`encode` writes lines in the one byte form a file has: UTF-8, one
compact JSON object per line (keys in the order of their models, no spaces), each line ended
by ``\\n``. Reading what :func:`encode` wrote gives the same lines, and writing them again the
same bytes.

Limits (:data:`MAX_FILE_BYTES`, :data:`MAX_LINES`, :data:`MAX_LINE_BYTES`) keep a reader's
memory and time bounded whatever it is sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from lineup.protocol.errors import InvalidArgument, PayloadTooLarge
from lineup.protocol.session_file import lines as ln
from lineup.protocol.session_file.migrations import Line, migrate
from lineup.protocol.session_file.scrub import Digester, scrub
from lineup.protocol.session_file.tree import check_tree, line_error

MAX_FILE_BYTES = 16 * 1024 * 1024
"""The largest file read: 16 MiB (a Pi file carries its images and tool output inline)."""
MAX_LINES = 20_000
"""The most entries a file may have (besides its header)."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""The longest single line."""
_MAX_DEPTH = 64
"""The deepest nesting of JSON values in a line."""

ENTRY: TypeAdapter[ln.Entry] = TypeAdapter(ln.AnyEntry)


@dataclass(frozen=True)
class SessionFile:
    """A session: its header and its entries in file order."""

    header: ln.Header
    entries: tuple[ln.Entry, ...]


@dataclass(frozen=True)
class Loaded:
    """A file read: its session as the current version, and what the file was."""

    session: SessionFile
    source_format: Literal["lineup", "pi"]
    source_version: int


# --- writing ------------------------------------------------------------------------------


def line_object(line: ln.LineModel) -> dict[str, Any]:
    """A line as its JSON object: camelCase keys in model order, empty optional fields left
    out, ``parentId`` always present."""
    obj = line.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(line, ln.Entry) and "parentId" not in obj:
        obj = {
            **{k: obj[k] for k in ("type", "id")},
            "parentId": None,
            **{k: v for k, v in obj.items() if k not in ("type", "id")},
        }
    return obj


_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
"""Characters some readers split lines at (Python's ``str.splitlines``, old JavaScript):
written escaped, so that ``\\n`` is the only line break a file holds in any reading."""
_ESCAPE_BREAKS = str.maketrans(_LINE_BREAKS)


def encode_line(line: ln.LineModel) -> str:
    """One line's text, without its ``\\n``."""
    text = json.dumps(line_object(line), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_ESCAPE_BREAKS)


def encode(session: SessionFile) -> bytes:
    """The file's bytes."""
    out = [encode_line(session.header)]
    out.extend(encode_line(entry) for entry in session.entries)
    return ("\n".join(out) + "\n").encode("utf-8")


# --- reading ------------------------------------------------------------------------------


def _not_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_strings(line: int, value: Any, depth: int = 0) -> None:
    """No NUL (PostgreSQL cannot store it) and no unpaired surrogate (not Unicode text)."""
    if depth > _MAX_DEPTH:
        raise line_error(line, f"values are nested more than {_MAX_DEPTH} deep")
    if isinstance(value, str):
        if "\x00" in value:
            raise line_error(line, "a text holds a NUL character (\\u0000), which LineUp refuses")
        if any("\ud800" <= ch <= "\udfff" for ch in value):
            raise line_error(line, "a text holds an unpaired surrogate (\\ud800–\\udfff)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(line, key, depth + 1)
            _check_strings(line, item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_strings(line, item, depth + 1)


def read_lines(data: bytes) -> list[Line]:
    """The file's non-blank lines as JSON objects, each with its line number."""
    if len(data) > MAX_FILE_BYTES:
        raise PayloadTooLarge(
            f"The file is {len(data):,} bytes; a session file may have {MAX_FILE_BYTES:,}.",
            details={"maxBytes": MAX_FILE_BYTES},
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise line_error(line, "the file is not UTF-8 text") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    found: list[Line] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        if len(found) > MAX_LINES:
            raise InvalidArgument(
                f"The file has more than {MAX_LINES:,} entries; a session file may have "
                f"{MAX_LINES:,}.",
                details={"line": number, "maxLines": MAX_LINES},
            )
        if len(raw) > MAX_LINE_BYTES or len(raw.encode("utf-8")) > MAX_LINE_BYTES:
            raise line_error(line=number, problem=f"the line is over {MAX_LINE_BYTES:,} bytes")
        try:
            value = json.loads(raw, parse_constant=_not_json_constant)
        except json.JSONDecodeError as exc:
            raise line_error(number, f"not JSON ({exc.msg} at column {exc.colno})") from None
        except ValueError as exc:
            raise line_error(number, f"not JSON ({exc})") from None
        except RecursionError:
            raise line_error(number, f"values are nested more than {_MAX_DEPTH} deep") from None
        if not isinstance(value, dict):
            raise line_error(number, "a line must be one JSON object ({…})")
        _check_strings(number, value)
        found.append((number, value))
    return found


def _problem(exc: ValidationError) -> tuple[str, str]:
    """The first error of a validation as ``(field, sentence)``."""
    first = exc.errors(include_url=False)[0]
    loc = [str(part) for part in first["loc"]]
    if loc and loc[0] in ln.ENTRY_TYPE_NAMES:
        loc = loc[1:]  # the union's tag
    field = ".".join(loc)
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "is not a field of this line type"
    elif first["type"] == "missing":
        message = "is missing"
    return field, f"{field}: {message}" if field else message


def parse_header(line: int, obj: dict[str, Any]) -> ln.Header:
    try:
        return scrub(ln.Header.model_validate(obj))
    except ValidationError as exc:
        field, problem = _problem(exc)
        raise line_error(line, f"header {problem}", field=field) from None


def parse_entry(line: int, obj: dict[str, Any], *, scrubbed: bool = False) -> ln.Entry:
    """One entry line as its model, scrubbed (unless it was when kept: ``scrubbed``); the
    error names the line and the field."""
    kind = obj.get("type")
    if kind not in ln.ENTRY_TYPE_NAMES:
        known = ", ".join(sorted(ln.ENTRY_TYPE_NAMES))
        shown = "missing" if kind is None else repr(kind)[:60]
        raise line_error(
            line, f"type {shown} is not an entry type (those are {known})", field="type"
        )
    try:
        entry = ENTRY.validate_python(obj)
    except ValidationError as exc:
        field, problem = _problem(exc)
        raise line_error(line, f"{kind} {problem}", field=field) from None
    return entry if scrubbed else scrub(entry)


def read_lineup(found: Sequence[Line]) -> Loaded:
    """A LineUp file's lines (header first) as the current version."""
    number, head = found[0]
    version = head.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise line_error(number, "the header's v (the format version) must be a whole number")
    if version > ln.FORMAT_VERSION:
        raise line_error(
            number,
            f"format version {version} is newer than this LineUp reads "
            f"(1 to {ln.FORMAT_VERSION}); upgrade LineUp to read it",
            field="v",
        )
    if version < 1:
        raise line_error(number, f"there is no format version {version}", field="v")
    (number, head), entries = migrate(found[0], list(found[1:]), version)
    header = parse_header(number, head)
    parsed = [parse_entry(line, obj) for line, obj in entries]
    check_tree(parsed, [line for line, _ in entries])
    return Loaded(SessionFile(header, tuple(parsed)), "lineup", version)


def load(data: bytes, digest: Digester) -> Loaded:
    """A whole file, LineUp's or Pi's, as a session of the current version. ``digest``
    makes the digests of what a Pi file carries in full (tool arguments, results)."""
    found = read_lines(data)
    if not found:
        raise InvalidArgument(
            "The file is empty: a session file starts with its header line.",
            details={"line": 1},
        )
    number, first = found[0]
    kind = first.get("type")
    if kind == "header":
        return read_lineup(found)
    if kind == "session":
        from lineup.protocol.session_file.pi import read_pi

        return read_pi(found, digest)
    raise line_error(
        number,
        "the first line must be the session's header: LineUp's "
        '{"type":"header","v":…} or Pi\'s {"type":"session",…}',
        field="type",
    )


def dump_session(session: SessionFile) -> SessionFile:
    """``session`` checked as a file would be when read: every line valid, scrubbed, and the
    tree sound. What the hub writes goes through here, so it never writes what it would
    refuse to read."""
    header = scrub(ln.Header.model_validate(session.header.model_dump()))
    entries = tuple(scrub(ENTRY.validate_python(e.model_dump())) for e in session.entries)
    check_tree(entries)
    return SessionFile(header, entries)


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LINES",
    "MAX_LINE_BYTES",
    "Loaded",
    "SessionFile",
    "dump_session",
    "encode",
    "encode_line",
    "line_object",
    "load",
    "parse_entry",
    "parse_header",
    "read_lines",
    "read_lineup",
]
