"""Older session files brought to the current version as they are read.

A file is never rewritten: it is read, each line migrated step by step (v1 → v2 → …) as a
plain JSON object, then checked as the current version's line. Each step is a pure function
of the lines, so an old file reads the same every time.

**Version 1** is the draft of seed 003 §1.4: every line carries ``"v": 1``; the header is
``{"v":1,"type":"header","sessionId","project"?,"ts"}``; entries carry ``ts`` in milliseconds
(the seed's ``tool_call`` and ``approval`` lines may have none) and are ``message`` (``role``,
``content``: text strings or ``{"type":…}`` blocks), ``tool_call`` (``capabilityId``,
``argsDigest``), ``tool_result`` (``executionId``, ``status``, ``jobId``), ``approval``
(``approvalId``, ``decision``) and ``summary`` (``covers``, ``text``).

**Version 2** writes times as ISO 8601 text under ``timestamp`` (as Pi's entries and LineUp's
wire do), keeps the version in the header alone, names every call (``name``), links a result
to its call (``callId``) and content blocks are typed (``text``, ``file``, ``rich``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lineup.protocol.session_file.tree import line_error
from lineup.protocol.times import format_timestamp, ms_to_datetime

Line = tuple[int, dict[str, Any]]
"""A line's number in its file and its JSON object."""

V1_TYPES = frozenset({"message", "tool_call", "tool_result", "approval", "summary"})
_FILE_BLOCKS = frozenset({"image", "attachment", "file", "ref"})
_FILE_KEYS = ("name", "mimeType", "size", "sha256", "url")


def _time(line: int, value: Any, fallback: str | None) -> str:
    if value is None:
        if fallback is None:
            raise line_error(line, "ts is missing (milliseconds since 1970)", field="ts")
        return fallback
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise line_error(line, "ts must be milliseconds since 1970 (a whole number)", field="ts")
    try:
        return format_timestamp(ms_to_datetime(value))
    except (OverflowError, OSError, ValueError):
        raise line_error(line, f"ts {value} is not a time LineUp can read", field="ts") from None


def _v1_block(line: int, block: Any) -> dict[str, Any]:
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise line_error(line, "a content block is text or an object with a type", field="content")
    kind = block["type"]
    if kind == "text":
        return {"type": "text", "text": block.get("text", "")}
    if kind in _FILE_BLOCKS:
        return {"type": "file", **{k: block[k] for k in _FILE_KEYS if k in block}}
    rest = {k: v for k, v in block.items() if k not in ("type", "text")}
    out: dict[str, Any] = {"type": "rich", "kind": kind}
    if "text" in block:
        out["text"] = block["text"]
    if rest:
        out["data"] = rest
    return out


def _first_text(lines: list[Line]) -> str | None:
    for _, obj in lines:
        if obj.get("type") == "message" and obj.get("role") == "user":
            for block in obj.get("content") or ():
                text = block if isinstance(block, str) else None
                if isinstance(block, dict) and block.get("type") == "text":
                    text = block.get("text")
                if isinstance(text, str) and text.strip():
                    return text.strip().splitlines()[0][:200]
    return None


def v1_to_v2(header: Line, entries: list[Line]) -> tuple[Line, list[Line]]:
    number, head = header
    started = _time(number, head.get("ts"), None)
    new_head: dict[str, Any] = {
        "type": "header",
        "v": 2,
        "sessionId": head.get("sessionId"),
        "timestamp": started,
        "title": head.get("title") or _first_text(entries) or f"Session {head.get('sessionId')}",
    }
    if head.get("project") is not None:
        new_head["project"] = head["project"]
    extra = set(head) - {"v", "type", "sessionId", "ts", "title", "project"}
    if extra:
        raise line_error(number, f"unknown field {sorted(extra)[0]!r} in a version 1 header")
    out: list[Line] = []
    previous = started
    calls: set[str] = set()
    for line, obj in entries:
        kind = obj.get("type")
        if kind not in V1_TYPES:
            raise line_error(
                line,
                f"type {kind!r} is not a line of version 1 "
                f"(those are {', '.join(sorted(V1_TYPES))})",
                field="type",
            )
        if obj.get("v", 1) != 1:
            raise line_error(line, "a version 1 file holds version 1 lines only", field="v")
        moved = {k: v for k, v in obj.items() if k not in ("v", "ts")}
        previous = _time(line, obj.get("ts"), previous)
        new: dict[str, Any] = {
            "type": kind,
            "id": moved.pop("id", None),
            "parentId": moved.pop("parentId", None),
            "timestamp": previous,
        }
        moved.pop("type")
        if kind == "message" and isinstance(moved.get("content"), list):
            moved["content"] = [_v1_block(line, b) for b in moved["content"]]
        elif kind == "tool_call":
            if "name" not in moved:
                moved = {"name": moved.get("capabilityId") or "tool", **moved}
            if isinstance(new["id"], str):
                calls.add(new["id"])
        elif kind == "tool_result" and new["parentId"] in calls and "callId" not in moved:
            moved = {"callId": new["parentId"], **moved}
        new.update(moved)
        out.append((line, new))
    return (number, new_head), out


MIGRATIONS: Mapping[int, Callable[[Line, list[Line]], tuple[Line, list[Line]]]] = {
    1: v1_to_v2,
}
"""Version → the step that makes it the next version."""


def migrate(header: Line, entries: list[Line], version: int) -> tuple[Line, list[Line]]:
    """A file's lines, read as ``version``, as lines of the current version."""
    while version in MIGRATIONS:
        header, entries = MIGRATIONS[version](header, entries)
        version += 1
    return header, entries


__all__ = ["MIGRATIONS", "V1_TYPES", "Line", "migrate", "v1_to_v2"]
