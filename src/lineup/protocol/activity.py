"""Transcript entries: what an agent does while it works, as it does it.

A person following an agent from a phone wants to see more than its messages: each tool it
calls with the arguments and the result, each command with its output as it streams and its
exit code, each file it changes as a diff, its reasoning summaries and the tokens it spends.
An agent reports these as *activities*: ``activity.started`` opens one (``activityId`` chosen
by the agent, unique within the workspace), ``activity.output`` appends streamed output to
it, ``activity.finished`` closes it; ``activity.usage`` reports tokens. All four are recorded
in the log, so a page opened later, or reconnecting, replays the whole transcript.

The log is not a file store: what an event carries inline is bounded, and anything larger —
a long command's whole output, a big diff, a large result — is uploaded as a hub file
(``POST /api/agent/artifacts``) and referenced by its address. Output deltas are coalesced by
the sender (a few per second at most, not one per byte), and a command's inline output stops
at :data:`MAX_INLINE_OUTPUT` characters: past that the rest goes in the file named by
``outputUrl`` when the command finishes.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field, model_validator

from lineup.protocol._model import WireModel
from lineup.protocol.envelope import Identifier
from lineup.protocol.errors import ErrorCode
from lineup.protocol.links import hub_file

MAX_INLINE_JSON = 64 * 1024
"""Bytes of a tool call's ``arguments`` or ``result`` (as compact JSON) carried inline."""
MAX_CHUNK = 16_000
"""Characters of one ``activity.output`` chunk."""
MAX_INLINE_OUTPUT = 64_000
"""Characters of an activity's output kept inline in the log (``offset`` + chunk length)."""
MAX_DIFF = 64_000
"""Characters of a diff carried inline; a larger one is a hub file (``diffUrl``)."""
MAX_TEXT = 16_000
"""Characters of a reasoning summary carried inline."""

ActivityKind = Literal["tool_call", "command", "file_change", "reasoning", "context", "error"]
ChangeKind = Literal["add", "modify", "delete"]
ActivityStatus = Literal["succeeded", "failed", "cancelled"]
OutputStream = Literal["stdout", "stderr"]


def _hub_file(url: str) -> str:
    if hub_file(url) is None:
        raise ValueError(
            "must be the address of a file stored in the hub "
            "(/api/workspaces/{workspaceId}/files/{fileId}, as POST /api/agent/artifacts answers)"
        )
    return url


HubFileUrl = Annotated[str, Field(max_length=300), AfterValidator(_hub_file)]
"""Where large content is: a file uploaded to the hub, shown to the workspace's members."""


def _bounded_json(value: Any) -> Any:
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_INLINE_JSON:
        raise ValueError(
            f"is {size} bytes as JSON, over the inline limit of {MAX_INLINE_JSON}; "
            "upload it (POST /api/agent/artifacts) and send its address instead"
        )
    return value


InlineJson = Annotated[Any, AfterValidator(_bounded_json)]


class ActivityStarted(WireModel):
    """An activity begins. ``kind`` says which fields matter:

    * ``tool_call``: ``name`` (required) and ``arguments``;
    * ``command``: ``command`` (required) and ``cwd``;
    * ``file_change``: ``path`` (required), ``change`` and the unified ``diff`` (or, when
      it is over :data:`MAX_DIFF`, its beginning in ``diff`` and the whole in ``diffUrl``);
    * ``reasoning``: ``text``, a summary of the agent's reasoning;
    * ``context``: ``text`` (required), what the model was given to work from — a line
      saying what it holds — ``snapshotUrl``, the whole of it as a hub file, so an answer
      can be traced to the inputs the model saw, and ``replyTo``, what the model answers
      with it (a person's message, a task): a turn's entries follow its context;
    * ``error``: ``code`` (the error taxonomy) and ``text`` (both required), something that
      went wrong which the person should see.

    A file change, a reasoning summary, a context and an error are complete when started;
    the others stay running until ``activity.finished``.
    """

    activity_id: Identifier
    kind: ActivityKind
    title: Annotated[str, Field(max_length=500)] | None = None
    """A one-line label to show instead of the generated one (``Read src/app.py``)."""
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    arguments: InlineJson | None = None
    command: Annotated[str, Field(min_length=1, max_length=8000)] | None = None
    cwd: Annotated[str, Field(max_length=4000)] | None = None
    path: Annotated[str, Field(min_length=1, max_length=4000)] | None = None
    change: ChangeKind | None = None
    diff: Annotated[str, Field(max_length=MAX_DIFF)] | None = None
    diff_url: HubFileUrl | None = None
    text: Annotated[str, Field(max_length=MAX_TEXT)] | None = None
    snapshot_url: HubFileUrl | None = None
    reply_to: Identifier | None = None
    code: ErrorCode | None = None

    @model_validator(mode="after")
    def _kind_fields(self) -> Self:
        for needed in _NEEDED.get(self.kind, ()):
            if getattr(self, needed) is None:
                raise ValueError(f"an activity of kind {self.kind!r} needs {needed!r}")
        return self


_NEEDED: dict[str, tuple[str, ...]] = {
    "tool_call": ("name",),
    "command": ("command",),
    "file_change": ("path",),
    "context": ("text",),
    "error": ("code", "text"),
}


class ActivityOutput(WireModel):
    """A piece of an activity's output as it streams (a command's, or more reasoning text).

    ``offset`` is the number of characters of output sent before this chunk: readers place
    chunks by it, so a resent chunk is never shown twice."""

    activity_id: Identifier
    chunk: Annotated[str, Field(min_length=1, max_length=MAX_CHUNK)]
    offset: Annotated[int, Field(ge=0)]
    stream: OutputStream | None = None
    """``stderr`` for a command's error stream; absent: standard output."""

    @model_validator(mode="after")
    def _inline_limit(self) -> Self:
        if self.offset + len(self.chunk) > MAX_INLINE_OUTPUT:
            raise ValueError(
                f"output past {MAX_INLINE_OUTPUT} characters is not kept inline; upload the "
                "whole output (POST /api/agent/artifacts) and send it as outputUrl in "
                "activity.finished"
            )
        return self


class ActivityFinished(WireModel):
    """An activity ends: a tool call with its ``result`` (or ``error``), a command with its
    ``exitCode`` (``null`` when it was killed or its status is unknown)."""

    activity_id: Identifier
    status: ActivityStatus
    result: InlineJson | None = None
    result_url: HubFileUrl | None = None
    """The whole result, when it was too large to send inline."""
    error: Annotated[str, Field(max_length=4000)] | None = None
    exit_code: int | None = None
    output_url: HubFileUrl | None = None
    """The whole output, when it ran past what was sent inline."""
    output_chars: Annotated[int, Field(ge=0)] | None = None
    """How many characters of output there were in all (inline or not)."""
    duration_ms: Annotated[int, Field(ge=0)] | None = None


class ActivityUsage(WireModel):
    """Tokens one model turn used (not a running total: readers add them up)."""

    input_tokens: Annotated[int, Field(ge=0)]
    output_tokens: Annotated[int, Field(ge=0)]
    cached_input_tokens: Annotated[int, Field(ge=0)] | None = None
    reasoning_tokens: Annotated[int, Field(ge=0)] | None = None
    context_window: Annotated[int, Field(ge=0)] | None = None
    """The model's context window, when known (to show how full it is)."""
    model: Annotated[str, Field(max_length=200)] | None = None
