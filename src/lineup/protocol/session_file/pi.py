"""Pi's session files read as LineUp sessions.

Pi (``@mariozechner/pi-coding-agent``, docs/session-format.md) writes the shape LineUp's
format follows: one session per JSONL file, a header line, then entries with ``id``,
``parentId`` and an ISO ``timestamp`` making a tree with branches in place. What Pi keeps in
full, LineUp does not: a tool call's arguments become their digest, a tool result or a
command's output a summary and a digest, an image its checksum and size. So reading a Pi file
maps each Pi entry to one or more LineUp entries:

* the first keeps the Pi entry's id, so ids that other entries name (``parentId``,
  ``targetId``, ``fromId``, ``firstKeptEntryId``) still name it; the others are numbered
  after it (``<id>/1``, ``<id>/2`` …) and follow it in a chain, and the Pi entry's children
  follow the last of them;
* an assistant message → ``message`` (its text), a ``reasoning`` per thinking block, a
  ``tool_call`` per tool call, and ``usage``;
* a tool result → ``tool_result`` linked to its call; a ``!`` command (``bashExecution``)
  → ``command`` and ``tool_result``;
* ``compaction`` and ``branch_summary`` → ``summary`` with the ids it covers;
* ``model_change`` and ``thinking_level_change`` → ``model_change``; ``label``,
  ``session_info`` → the same; extension messages (``custom_message``, role ``custom``)
  → a system ``message``; extension state (``custom``) → ``custom`` with a digest.

Pi's versions 1 (a list without ids) and 2 (``hookMessage``) are migrated as Pi migrates
them, except that version 1's ids are numbered (``00000001`` …) rather than random.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from lineup.protocol.session_file import lines as ln
from lineup.protocol.session_file.codec import Loaded, SessionFile, parse_entry, parse_header
from lineup.protocol.session_file.migrations import Line
from lineup.protocol.session_file.scrub import (
    Digester,
    bytes_sha256,
    fit,
    summarise,
    text_digest,
    value_digest,
)
from lineup.protocol.session_file.tree import check_tree, line_error, path_to

PI_VERSIONS = (1, 2, 3)
"""The versions of Pi's format read (Pi 0.73 writes 3)."""

_FIRST = "\x00first"
"""Stands for the id of the first entry made of the same Pi entry (no real id has a NUL)."""


def read_pi(found: Sequence[Line], digest: Digester) -> Loaded:
    number, head = found[0]
    version = head.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise line_error(number, "Pi's header version must be a whole number", field="version")
    if version > PI_VERSIONS[-1]:
        raise line_error(
            number,
            f"Pi session version {version} is newer than LineUp reads (up to {PI_VERSIONS[-1]})",
            field="version",
        )
    if not isinstance(head.get("id"), str) or not head["id"]:
        raise line_error(number, "Pi's header has no session id", field="id")
    entries = _migrated(list(found[1:]), version)
    reader = _Reader(digest)
    for line, obj in entries:
        reader.entry(line, obj)
    origin: dict[str, Any] = {"format": "pi", "version": version, "sessionId": head["id"]}
    if isinstance(head.get("cwd"), str) and head["cwd"]:
        origin["cwd"] = head["cwd"]
    header = parse_header(
        number,
        {
            "type": "header",
            "v": ln.FORMAT_VERSION,
            "sessionId": head["id"],
            "timestamp": head.get("timestamp") or reader.first_time or 0,
            "title": reader.title(head["id"]),
            "origin": origin,
        },
    )
    check_tree(reader.out, reader.numbers)
    return Loaded(SessionFile(header, tuple(reader.out)), "pi", version)


def _migrated(entries: list[Line], version: int) -> list[Line]:
    if version < 2:
        out: list[Line] = []
        previous: str | None = None
        ids: list[str | None] = [None]  # Pi's indexes count the header as 0
        for index, (line, obj) in enumerate(entries, start=1):
            ident = f"{index:08x}"
            moved = {**obj, "id": ident, "parentId": previous}
            ids.append(ident)
            previous = ident
            out.append((line, moved))
        for i, (line, obj) in enumerate(out):
            kept = obj.get("firstKeptEntryIndex")
            if obj.get("type") == "compaction" and isinstance(kept, int):
                moved = {k: v for k, v in obj.items() if k != "firstKeptEntryIndex"}
                if 0 < kept < len(ids):
                    moved["firstKeptEntryId"] = ids[kept]
                out[i] = (line, moved)
        entries = out
    if version < 3:
        entries = [(line, _hook_renamed(obj)) for line, obj in entries]
    return entries


def _hook_renamed(obj: dict[str, Any]) -> dict[str, Any]:
    message = obj.get("message")
    if (
        obj.get("type") == "message"
        and isinstance(message, dict)
        and message.get("role") == "hookMessage"
    ):
        return {**obj, "message": {**message, "role": "custom"}}
    return obj


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


class _Reader:
    """Maps Pi entries one by one, remembering what later entries refer to."""

    def __init__(self, digest: Digester) -> None:
        self.digest = digest
        self.out: list[ln.Entry] = []
        self.numbers: list[int] = []
        self.last_of: dict[str, str] = {}
        """Pi entry id → the last LineUp entry made of it (its children follow that)."""
        self.calls: dict[str, str] = {}
        """Pi tool call id → the ``tool_call`` entry."""
        self.name: str | None = None
        self.first_user_text: str | None = None
        self.first_time: str | None = None

    def title(self, session_id: str) -> str:
        if self.name:
            return self.name
        if self.first_user_text:
            return self.first_user_text
        return f"Pi session {session_id[:8]}"

    # --- one Pi entry -------------------------------------------------------------------

    def entry(self, line: int, obj: dict[str, Any]) -> None:
        ident = obj.get("id")
        if not isinstance(ident, str) or not ident:
            raise line_error(line, "a Pi entry needs an id (text)", field="id")
        if ident in self.last_of:
            raise line_error(line, f"the id {ident!r} is already the id of an entry above")
        parent = obj.get("parentId")
        if parent is not None and (not isinstance(parent, str) or parent not in self.last_of):
            raise line_error(
                line, f"parentId {parent!r} names no entry above this line", field="parentId"
            )
        when = obj.get("timestamp")
        if when is None and isinstance(obj.get("message"), dict):
            when = obj["message"].get("timestamp")
        if when is None:
            when = self.first_time
        if when is None:
            raise line_error(line, "a Pi entry needs a timestamp", field="timestamp")
        self.first_time = self.first_time or (when if isinstance(when, str) else None)
        made = self._lines(line, obj)
        parent_line = None if parent is None else self.last_of[parent]
        for i, fields in enumerate(made):
            if fields.get("callId") == _FIRST:
                fields["callId"] = ident
            entry = parse_entry(
                line,
                {
                    "type": fields.pop("type"),
                    "id": ident if i == 0 else f"{ident}/{i}",
                    "parentId": parent_line,
                    "timestamp": when,
                    **fields,
                },
            )
            if isinstance(entry, ln.ToolCallEntry) and entry.source_id:
                self.calls[entry.source_id] = entry.id
            self.out.append(entry)
            self.numbers.append(line)
            parent_line = entry.id
        assert parent_line is not None
        self.last_of[ident] = parent_line

    def _lines(self, line: int, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """The LineUp entries (as JSON objects, without their place) one Pi entry makes."""
        kind = obj.get("type")
        if kind == "message":
            message = obj.get("message")
            if not isinstance(message, dict):
                raise line_error(line, "a Pi message entry needs a message object", field="message")
            return self._message(line, message, obj)
        if kind == "model_change":
            return [
                _some(type="model_change", provider=obj.get("provider"), model=obj.get("modelId"))
            ]
        if kind == "thinking_level_change":
            return [_some(type="model_change", thinkingLevel=obj.get("thinkingLevel"))]
        if kind == "compaction":
            return [self._compaction(obj)]
        if kind == "branch_summary":
            return [self._branch_summary(line, obj, obj.get("summary"))]
        if kind == "custom_message":
            return [self._extension_message(obj.get("customType"), obj.get("content"))]
        if kind == "label":
            return [_some(type="label", targetId=obj.get("targetId"), label=obj.get("label"))]
        if kind == "session_info" and isinstance(obj.get("name"), str) and obj["name"].strip():
            self.name = fit(obj["name"].strip(), 500)
            return [{"type": "session_info", "name": obj["name"]}]
        custom = obj.get("customType") if kind == "custom" else f"pi:{kind}"
        data = obj.get("data") if kind == "custom" else obj
        return [
            _some(
                type="custom",
                customType=str(custom or "custom")[: ln.MAX_ID],
                digest=None if data is None else value_digest(self.digest, data),
            )
        ]

    def _message(
        self, line: int, message: dict[str, Any], entry: dict[str, Any]
    ) -> list[dict[str, Any]]:
        role = message.get("role")
        if role == "user":
            text = _text_of(message.get("content"))
            if self.first_user_text is None and text.strip():
                self.first_user_text = fit(text.strip().splitlines()[0], 200)
            return [
                {
                    "type": "message",
                    "role": "user",
                    "content": self._content(message.get("content")),
                }
            ]
        if role == "assistant":
            return self._assistant(line, message)
        if role == "toolResult":
            content = message.get("content")
            call = message.get("toolCallId")
            return [
                _some(
                    type="tool_result",
                    callId=self.calls.get(call) if isinstance(call, str) else None,
                    status="failed" if message.get("isError") else "succeeded",
                    summary=summarise(_text_of(content)),
                    digest=value_digest(self.digest, content if content is not None else []),
                    sourceId=call if isinstance(call, str) else None,
                )
            ]
        if role == "bashExecution":
            return self._bash(line, message)
        if role == "custom":
            return [self._extension_message(message.get("customType"), message.get("content"))]
        if role == "branchSummary":
            return [self._branch_summary(line, message, message.get("summary"))]
        if role == "compactionSummary":
            return [
                _some(
                    type="summary",
                    covers=[],
                    text=str(message.get("summary") or ""),
                    kind="compaction",
                    tokensBefore=message.get("tokensBefore"),
                )
            ]
        return [
            _some(
                type="custom",
                customType=f"pi:message:{str(role)[:100]}",
                digest=value_digest(self.digest, message),
            )
        ]

    def _assistant(self, line: int, message: dict[str, Any]) -> list[dict[str, Any]]:
        content = message.get("content")
        if content is None:
            content = []
        if not isinstance(content, list):
            raise line_error(
                line, "an assistant message's content is a list of blocks", field="content"
            )
        texts: list[dict[str, Any]] = []
        thoughts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for block in content:
            if not isinstance(block, dict):
                raise line_error(line, "a content block is an object with a type", field="content")
            kind = block.get("type")
            if kind == "text":
                texts.append({"type": "text", "text": str(block.get("text") or "")})
            elif kind == "thinking":
                thought = block.get("thinking")
                if isinstance(thought, str) and thought.strip():
                    thoughts.append({"type": "reasoning", "text": thought})
            elif kind == "toolCall":
                name = block.get("name")
                if not isinstance(name, str) or not name:
                    raise line_error(line, "a toolCall block needs a name", field="content")
                calls.append(
                    _some(
                        type="tool_call",
                        name=name,
                        argsDigest=value_digest(self.digest, block.get("arguments", {})),
                        sourceId=block.get("id") if isinstance(block.get("id"), str) else None,
                    )
                )
            else:
                texts.append(self._block(block))
        stop = message.get("stopReason")
        error = message.get("errorMessage")
        if not error and stop in ("error", "aborted"):
            error = stop
        model = message.get("model")
        made = [
            _some(
                type="message",
                role="assistant",
                content=texts,
                model=model if isinstance(model, str) and model else None,
                error=error if isinstance(error, str) and error else None,
            ),
            *thoughts,
            *calls,
        ]
        usage = message.get("usage")
        if isinstance(usage, dict) and _count(usage.get("input")) is not None:
            made.append(
                _some(
                    type="usage",
                    inputTokens=_count(usage.get("input")),
                    outputTokens=_count(usage.get("output")) or 0,
                    cachedInputTokens=_count(usage.get("cacheRead")),
                    model=model if isinstance(model, str) and model else None,
                )
            )
        return made

    def _bash(self, line: int, message: dict[str, Any]) -> list[dict[str, Any]]:
        command = message.get("command")
        if not isinstance(command, str) or not command:
            raise line_error(line, "a bashExecution message needs its command", field="command")
        output = message.get("output")
        output = output if isinstance(output, str) else ""
        code = message.get("exitCode")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        status = "cancelled" if message.get("cancelled") else "succeeded" if code == 0 else "failed"
        return [
            {"type": "command", "command": fit(command, ln.MAX_COMMAND)},
            _some(
                type="tool_result",
                callId=_FIRST,
                status=status,
                summary=summarise(output),
                digest=text_digest(output),
                exitCode=code,
                outputChars=len(output),
            ),
        ]

    def _compaction(self, obj: dict[str, Any]) -> dict[str, Any]:
        parent = obj.get("parentId")
        path = path_to(self.out, self.last_of.get(parent) if isinstance(parent, str) else None)
        kept = obj.get("firstKeptEntryId")
        kept = kept if isinstance(kept, str) and kept in path else None
        covers = path[: path.index(kept)] if kept is not None else path
        return _some(
            type="summary",
            covers=covers,
            text=str(obj.get("summary") or ""),
            kind="compaction",
            firstKeptId=kept,
            tokensBefore=_count(obj.get("tokensBefore")),
        )

    def _branch_summary(self, line: int, obj: dict[str, Any], summary: Any) -> dict[str, Any]:
        source = obj.get("fromId")
        from_line = self.last_of.get(source) if isinstance(source, str) else None
        parent = obj.get("parentId")
        here = set(path_to(self.out, self.last_of.get(parent) if isinstance(parent, str) else None))
        covers = [i for i in path_to(self.out, from_line) if i not in here]
        return _some(
            type="summary",
            covers=covers,
            text=str(summary or ""),
            kind="branch",
            fromId=source if from_line is not None else None,
        )

    def _extension_message(self, custom_type: Any, content: Any) -> dict[str, Any]:
        author: dict[str, Any] = {"kind": "system"}
        if isinstance(custom_type, str) and custom_type:
            author["name"] = custom_type[: ln.MAX_NAME]
        return {
            "type": "message",
            "role": "system",
            "author": author,
            "content": self._content(content),
        }

    def _content(self, content: Any) -> list[dict[str, Any]]:
        if content is None:
            return []
        if isinstance(content, str):
            return [{"type": "text", "text": fit(content, ln.MAX_TEXT)}]
        if not isinstance(content, list):
            return [{"type": "text", "text": fit(str(content), ln.MAX_TEXT)}]
        return [
            self._block(b) if isinstance(b, dict) else {"type": "text", "text": str(b)}
            for b in content
        ]

    def _block(self, block: dict[str, Any]) -> dict[str, Any]:
        kind = block.get("type")
        if kind == "text":
            return {"type": "text", "text": fit(str(block.get("text") or ""), ln.MAX_TEXT)}
        if kind == "image":
            made: dict[str, Any] = {"type": "file"}
            if isinstance(block.get("mimeType"), str) and block["mimeType"]:
                made["mimeType"] = block["mimeType"][:200]
            data = block.get("data")
            if isinstance(data, str):
                try:
                    raw = base64.b64decode(data, validate=True)
                except (binascii.Error, ValueError):
                    raw = None
                if raw is not None:
                    made["size"] = len(raw)
                    made["sha256"] = bytes_sha256(raw)
            return made
        return {"type": "rich", "kind": str(kind or "unknown")[:64]}


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)


def _some(**fields: Any) -> dict[str, Any]:
    """The fields that have a value: an absent field is left out, never ``null``."""
    return {k: v for k, v in fields.items() if v is not None}


__all__ = ["PI_VERSIONS", "read_pi"]
