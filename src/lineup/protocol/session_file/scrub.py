"""What keeps secrets and bulk out of a session file: redaction, summaries and digests.

A session file leaves the hub — it is downloaded, mailed, kept on a laptop — so what it says
in free text goes through the same :class:`~lineup.protocol.redaction.Redactor` rules as an
agent's log lines (``password=…``, bearer tokens, LineUp's own tokens, secret-looking query
parameters and JSON keys …), and what it would hold in bulk is cut to a summary beside the
digest of the whole. Every reader and writer applies these on the way in and out, so a line
is the same whichever way it came.

Redaction is applied until nothing changes (:func:`clean_text`): then cleaning clean text
changes nothing, which is what lets an exported file be imported and exported again byte for
byte. Digests are ``sha256:`` and the hex SHA-256 of:

* a JSON value (a tool's arguments, a result): its RFC 8785 canonical form, the digest
  governance binds approvals to — made by a :data:`Digester` the caller passes, since the
  canonical form lives with governance (``lineup.core.canonical.digest``);
* text (a command's output, a diff): its UTF-8 bytes (:func:`text_digest`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from lineup.protocol.redaction import Redactor
from lineup.protocol.session_file import lines

Digester = Callable[[Any], str]
"""A JSON value → ``sha256:<hex>`` of its RFC 8785 canonical form."""

SUMMARY_CHARS = 2000
"""Characters of a result, an output or a diff a written file keeps, before redaction."""

_REDACTOR = Redactor()
_PASSES = 8
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with secrets taken out (until nothing more changes) and any unpaired
    surrogate, which UTF-8 cannot hold, replaced by U+FFFD."""
    text = _LONE_SURROGATE.sub("\ufffd", text)
    for _ in range(_PASSES):
        cleaner = _REDACTOR.text(text)
        if cleaner == text:
            break
        text = cleaner
    return text


def clean_value(value: Any) -> Any:
    """A JSON value with every string cleaned and the values of secret-looking keys
    (``apiKey``, ``password`` …) replaced, until nothing more changes."""
    for _ in range(_PASSES):
        cleaner = _fix_strings(_REDACTOR.value(value, _REDACTOR.marked_values(value)))
        if cleaner == value:
            break
        value = cleaner
    return value


def _fix_strings(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_fix_strings(k): _fix_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fix_strings(v) for v in value]
    return value


def clean_optional(text: str | None) -> str | None:
    return None if text is None else clean_text(text)


def fit(text: str, limit: int) -> str:
    """``text`` cleaned and, when that is over ``limit`` characters, cut (``…`` marks the
    cut) until it is not. What it returns it returns unchanged: cleaning cannot lengthen it
    again, as cleaning a cut ``[redac`` could if the cut came after cleaning."""
    cut = text
    cleaned = clean_text(cut)
    while len(cleaned) > limit:
        over = len(cleaned) - limit
        cut = cut[: max(0, len(cut) - over - 16)]
        cleaned = clean_text(cut + "…")
    return cleaned


def summarise(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The beginning of ``text``, at most ``limit`` characters, cleaned."""
    return fit(text, limit)


def json_text(value: Any) -> str:
    """A JSON value as compact text; a string as itself."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def summarise_value(value: Any, limit: int = SUMMARY_CHARS) -> str:
    """A JSON value (a result) as a summary: secret-looking keys emptied, then its compact
    JSON text cut and cleaned."""
    return summarise(json_text(clean_value(value)), limit)


def text_digest(text: str) -> str:
    """``sha256:`` of the UTF-8 bytes of ``text``."""
    data = text.encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def value_digest(digest: Digester, value: Any) -> str:
    """``digest(value)``; a value the canonical form cannot hold (an integer past 2**53, a
    non-finite number) is digested as its compact JSON text instead, so writing a file never
    fails on it."""
    try:
        return digest(value)
    except (ValueError, TypeError):
        return text_digest(json_text(value))


__all__ = [
    "SUMMARY_CHARS",
    "Digester",
    "bytes_sha256",
    "clean_optional",
    "clean_text",
    "clean_value",
    "fit",
    "json_text",
    "scrub",
    "summarise",
    "summarise_value",
    "text_digest",
    "value_digest",
]


# --- whole lines ----------------------------------------------------------------------------

_FREE_TEXT: dict[type[lines.LineModel], dict[str, int]] = {
    lines.Header: {"title": 500},
    lines.MessageEntry: {"error": lines.MAX_DETAIL},
    lines.ToolCallEntry: {"title": lines.MAX_NAME},
    lines.CommandEntry: {"command": lines.MAX_COMMAND, "title": lines.MAX_NAME},
    lines.ToolResultEntry: {"summary": lines.MAX_DETAIL, "error": lines.MAX_DETAIL},
    lines.FileChangeEntry: {"summary": lines.MAX_DETAIL, "title": lines.MAX_NAME},
    lines.ReasoningEntry: {"text": lines.MAX_TEXT},
    lines.InteractionEntry: {"title": lines.MAX_NAME, "summary": lines.MAX_DETAIL},
    lines.AnswerEntry: {"text": lines.MAX_DETAIL},
    lines.ApprovalRequestEntry: {"summary": lines.MAX_DETAIL, "impact": lines.MAX_DETAIL},
    lines.ApprovalEntry: {"reason": lines.MAX_DETAIL},
    lines.FileEntry: {"summary": lines.MAX_DETAIL, "name": lines.MAX_NAME},
    lines.SummaryEntry: {"text": lines.MAX_TEXT},
    lines.LabelEntry: {"label": lines.MAX_NAME},
    lines.SessionInfoEntry: {"name": lines.MAX_NAME},
}
"""Per line type, the fields a person wrote or an agent said (cleaned, with their limits).
Ids, digests, times and enumerations are left alone: cleaning them could only break the
references between lines."""

M = TypeVar("M", bound=lines.LineModel)


def scrub(line: M) -> M:
    """``line`` with its free text cleaned (:func:`fit` to each field's limit), so that no
    secret in plain text is written, and a line already scrubbed comes back unchanged."""
    update: dict[str, Any] = {}
    for name, limit in _FREE_TEXT.get(type(line), {}).items():
        value = getattr(line, name)
        if isinstance(value, str):
            update[name] = fit(value, limit)
    if isinstance(line, lines.MessageEntry):
        update["content"] = [_block(b) for b in line.content]
        if line.author is not None and line.author.name is not None:
            update["author"] = line.author.model_copy(
                update={"name": fit(line.author.name, lines.MAX_NAME)}
            )
    elif isinstance(line, lines.InteractionEntry) and line.options:
        update["options"] = [
            o.model_copy(update={"label": fit(o.label, lines.MAX_NAME)}) for o in line.options
        ]
    elif isinstance(line, lines.ToolResultEntry | lines.FileChangeEntry) and line.ref:
        update["ref"] = _file(line.ref)
    return line.model_copy(update=update) if update else line


def _block(block: lines.TextBlock | lines.FileBlock | lines.RichBlock) -> Any:
    if isinstance(block, lines.TextBlock):
        return block.model_copy(update={"text": fit(block.text, lines.MAX_TEXT)})
    if isinstance(block, lines.RichBlock):
        update: dict[str, Any] = {}
        if block.text is not None:
            update["text"] = fit(block.text, lines.MAX_TEXT)
        if block.data is not None:
            update["data"] = clean_value(block.data)
        return block.model_copy(update=update)
    return _file(block)


F = TypeVar("F", lines.FileRef, lines.FileBlock)


def _file(ref: F) -> F:
    if ref.name is None:
        return ref
    return ref.model_copy(update={"name": fit(ref.name, lines.MAX_NAME)})
