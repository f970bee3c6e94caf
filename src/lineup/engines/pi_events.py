"""What ``pi --mode rpc`` says, in LineUp's runtime terms — no process, no I/O.

:class:`PiEventMapper` turns Pi's RPC events (``agent_start``, ``message_update``,
``tool_execution_*``, ``agent_end`` …, as Pi 0.73's ``docs/rpc.md`` describes them) and the
reports of LineUp's Pi extension into :class:`~lineup.engines.runtime.RuntimeEvent` values.
A LineUp turn is one Pi *agent run* (``agent_start`` … ``agent_end``); Pi's own
``turn_start``/``turn_end`` mark each model call inside it. The run is not over at
``agent_end`` when Pi compacts its context and retries: the driver asks Pi a question after
``agent_end`` and calls :meth:`PiEventMapper.settle` with the answer, by which time a
compaction that follows has announced itself.

The rest are the pure parts of the driver: the ``models.json`` and ``settings.json`` that
point Pi at the session's endpoint and nothing else, the error taxonomy of Pi's error
messages, the questions LineUp's extension asks (an approval, with the diff of a file
change), and unified diffs of what edit and write did.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lineup.engines import engine_questions as questions
from lineup.engines.codex_events import API_KEY_ENV
from lineup.engines.engine_questions import AskedQuestion
from lineup.engines.runtime import (
    ApprovalRequest,
    CommandFinished,
    CommandOutput,
    CommandStarted,
    EngineError,
    FileChange,
    MessageDelta,
    MessageDone,
    ModelEndpoint,
    ReasoningSummary,
    RuntimeEvent,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode

PROVIDER = "lineup"
"""The only provider in a session's ``models.json``."""

BRIDGE = "lineup.bridge"
"""The title of the extension's questions and the prefix of its reports."""

NO_KEY = "none"
"""What Pi is given as the key of an endpoint without one (it insists on some value)."""

PI_APIS: Mapping[str, str] = {
    "openai-chat": "openai-completions",
    "openai-responses": "openai-responses",
    "anthropic-messages": "anthropic-messages",
}

SHELL = "bash"
FILE_TOOLS = frozenset({"edit", "write"})

# --- configuration --------------------------------------------------------------------------


def pi_models(model: ModelEndpoint) -> dict[str, Any]:
    """``models.json``: the session's endpoint as the only provider. The key is not in it:
    ``apiKey`` names the environment variable that holds it (Pi reads a name it finds in its
    environment as that variable's value)."""
    return {
        "providers": {
            PROVIDER: {
                "baseUrl": model.base_url,
                "api": PI_APIS[model.api],
                "apiKey": API_KEY_ENV if model.api_key else NO_KEY,
                "models": [{"id": model.model, "name": model.model, "input": ["text"]}],
            }
        }
    }


def pi_settings(model: ModelEndpoint) -> dict[str, Any]:
    """``settings.json``: the endpoint's model by default, no install ping, no retries (a
    retried run would outlive the turn LineUp reported, and a dead endpoint should fail
    now), and every queued follow-up delivered at the next chance."""
    return {
        "defaultProvider": PROVIDER,
        "defaultModel": model.model,
        "quietStartup": True,
        "enableInstallTelemetry": False,
        "retry": {"enabled": False, "provider": {"maxRetries": 0}},
        "steeringMode": "all",
        "followUpMode": "all",
    }


# --- errors ---------------------------------------------------------------------------------

_ERROR_PATTERNS: Sequence[tuple[re.Pattern[str], ErrorCode]] = (
    (
        re.compile(r"context (length|window|overflow)|too many tokens|prompt is too long", re.I),
        ErrorCode.INVALID_ARGUMENT,
    ),
    (
        re.compile(r"\b401\b|unauthori[sz]ed|invalid (api )?key|no api key", re.I),
        ErrorCode.UNAUTHENTICATED,
    ),
    (re.compile(r"\b403\b|forbidden|permission denied", re.I), ErrorCode.FORBIDDEN),
    (re.compile(r"\b404\b|not found|does not exist", re.I), ErrorCode.NOT_FOUND),
    (re.compile(r"\b429\b|rate.?limit|quota", re.I), ErrorCode.RATE_LIMITED),
    (re.compile(r"\b400\b|\b422\b|bad request|invalid", re.I), ErrorCode.INVALID_ARGUMENT),
    (
        re.compile(
            r"\b5\d\d\b|overloaded|connection|econn|fetch failed|socket|timed? ?out|network"
            r"|unavailable|terminated",
            re.I,
        ),
        ErrorCode.UNAVAILABLE,
    ),
)


def error_code(message: str) -> ErrorCode:
    """The taxonomy code of one of Pi's error messages (the provider's status and text)."""
    for pattern, code in _ERROR_PATTERNS:
        if pattern.search(message):
            return code
    return ErrorCode.UNKNOWN_RESULT


# --- file changes ---------------------------------------------------------------------------


def relative(path: str, cwd: str | None) -> str:
    if cwd:
        root = cwd.rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root) :]
    return path


def file_diff(path: str, before: str | None, after: str | None) -> str:
    """A unified diff from one content to the other (``None``: the file is not there)."""
    name = path.lstrip("/")
    made = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        "/dev/null" if before is None else f"a/{name}",
        "/dev/null" if after is None else f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in made)


def apply_edits(text: str, edits: Any) -> str:
    """Pi's ``edit`` tool's replacements (each ``oldText`` once, in order), to show what an
    edit will do before it runs; one whose text is not found changes nothing here (Pi then
    fails the edit)."""
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, Mapping):
            old, new = str(edit.get("oldText", "")), str(edit.get("newText", ""))
            if old and old in text:
                text = text.replace(old, new, 1)
    return text


def _state(value: Any) -> tuple[bool, str | None, int]:
    """``(exists, text, size)`` of the extension's report of a file (``text`` is ``None``
    for a file too large or not a regular file)."""
    if not isinstance(value, Mapping):
        return (False, None, 0)
    text = value.get("text")
    return (
        bool(value.get("exists")),
        str(text) if text is not None else None,
        int(value.get("size") or 0),
    )


def _change(path: str, before: Any, after: Any) -> tuple[Literal["add", "modify"], str]:
    existed, old, old_size = _state(before)
    exists, new, new_size = _state(after)
    kind: Literal["add", "modify"] = "modify" if existed else "add"
    if (existed and old is None) or (exists and new is None):
        size = max(old_size, new_size)
        return kind, f"--- a/{path}\n+++ b/{path}\n(too large to show: {size} bytes)\n"
    return kind, file_diff(path, old if existed else None, new if exists else None)


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """The extension asks LineUp's host to run one of LineUp's tools."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]


def bridge_request(title: Any, placeholder: Any) -> Mapping[str, Any] | None:
    """The extension's request in an ``input`` dialog, or ``None`` for a person's question."""
    if title != BRIDGE or not isinstance(placeholder, str):
        return None
    try:
        request = json.loads(placeholder)
    except ValueError:
        return None
    return request if isinstance(request, Mapping) else None


def tool_request(request: Mapping[str, Any]) -> ToolRequest:
    arguments = request.get("arguments")
    return ToolRequest(
        call_id=str(request.get("call_id", "")),
        name=str(request.get("name", "")),
        arguments=arguments if isinstance(arguments, Mapping) else {},
    )


def approval_request(request: Mapping[str, Any], cwd: str | None) -> ApprovalRequest:
    """What the person is asked before Pi runs a tool the policy names: a command with its
    working directory, a file change with its diff, or another tool with its input — each
    editable, as LineUp's extension runs the call with the input the person allowed."""
    tool = str(request.get("tool", ""))
    raw = request.get("input")
    tool_input: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    call_id = str(request.get("call_id", ""))
    where = str(request.get("cwd") or cwd or "")
    if tool == SHELL:
        command = str(tool_input.get("command", ""))
        return ApprovalRequest(
            request_id=call_id,
            kind="command",
            title=f"Run {command}" if command else "Run a command",
            tool=tool,
            input=tool_input,
            command=command,
            cwd=where,
            editable=True,
        )
    change = request.get("change")
    if tool in FILE_TOOLS and isinstance(change, Mapping):
        path = relative(str(change.get("path", "")), where)
        before = change.get("before")
        existed, old, _ = _state(before)
        if tool == "write":
            after_text = str(tool_input.get("content", ""))
        else:
            after_text = apply_edits(old or "", tool_input.get("edits"))
        _, diff = _change(
            path, before, {"exists": True, "text": after_text, "size": len(after_text)}
        )
        verb = "Change" if existed else "Create"
        return ApprovalRequest(
            request_id=call_id,
            kind="file_change",
            title=f"{verb} {path}",
            tool=tool,
            input=tool_input,
            cwd=where,
            diff=diff,
            editable=True,
        )
    return ApprovalRequest(
        request_id=call_id,
        kind="tool",
        title=f"Use {tool}",
        tool=tool,
        input=tool_input,
        cwd=where,
        editable=True,
    )


def question_tool(request: Mapping[str, Any]) -> AskedQuestion | None:
    """A person-facing dialog of Pi's as a call of LineUp's question tools: ``select`` as
    ``ask_choice`` (``ask_input`` listing the options when there are more than a card
    takes), ``input`` and ``editor`` as ``ask_input``. ``None`` for a select with nothing
    to choose."""
    method = str(request.get("method", ""))
    title = str(request.get("title") or "")
    if method == "select":
        options = request.get("options")
        return questions.choice(title, [str(o) for o in options or []])
    placeholder = request.get("placeholder")
    prefill = request.get("prefill")
    return questions.text(
        title,
        placeholder=str(placeholder) if placeholder else None,
        prefill=str(prefill) if prefill else None,
    )


# --- events ---------------------------------------------------------------------------------

_EXIT = re.compile(r"(?:\n\n)?Command exited with code (-?\d+)\s*$")
_STOPPED = re.compile(r"(?:\n\n)?Command (?:aborted|timed out after \d+ seconds)\s*$")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(part.get("text", ""))
        for part in content
        if isinstance(part, Mapping) and part.get("type") == "text"
    )


def command_result(text: str, is_error: bool) -> tuple[str, int | None]:
    """A bash result's output and exit code: Pi puts the code only in the text it gives the
    model (``Command exited with code N``); ``None`` when the command was stopped."""
    if not is_error:
        return ("" if text == "(no output)" else text), 0
    if match := _EXIT.search(text):
        return text[: match.start()], int(match.group(1))
    if match := _STOPPED.search(text):
        return text[: match.start()], None
    return text, None


@dataclass
class _Command:
    command: str
    started: bool = False
    shown: str = ""


class PiEventMapper:
    """One Pi session's events, turn by turn. Feed it every event line in order."""

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd
        self.session_id: str | None = None
        self.turns = 0
        self.turn_id: str | None = None
        self.interrupting = False
        """Set by the driver when it asked Pi to abort: the run ends ``interrupted``."""
        self._ending: list[Mapping[str, Any]] | None = None
        self._compacting = False
        self._messages = 0
        self._texts: dict[str, str] = {}
        self._commands: dict[str, _Command] = {}

    @property
    def running(self) -> bool:
        return self.turn_id is not None

    @property
    def ending(self) -> bool:
        """Whether ``agent_end`` came and the driver should ask Pi whether it is idle."""
        return self._ending is not None and not self._compacting

    def event(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        kind = event.get("type")
        if kind == "extension_ui_request":
            return self._report(event)
        handler = _HANDLERS.get(str(kind))
        return handler(self, event) if handler is not None else []

    def settle(self) -> list[RuntimeEvent]:
        """The run's end, once Pi is known to go no further (nothing when it goes on)."""
        if self._ending is None or self._compacting or self.turn_id is None:
            return []
        messages, self._ending = self._ending, None
        last = next(
            (
                m
                for m in reversed(messages)
                if isinstance(m, Mapping) and m.get("role") == "assistant"
            ),
            None,
        )
        stop = last.get("stopReason") if last is not None else None
        events: list[RuntimeEvent] = []
        status: Literal["completed", "interrupted", "failed"] = "completed"
        if stop == "aborted" or self.interrupting:
            status = "interrupted"
        elif stop == "error":
            status = "failed"
            message = str((last or {}).get("errorMessage") or "the model call failed")
            events.append(EngineError(code=error_code(message), message=message))
        events.append(
            TurnFinished(turn_id=self.turn_id, status=status, native_session_id=self.session_id)
        )
        self.turn_id = None
        self.interrupting = False
        return events

    # --- a run ------------------------------------------------------------------------

    def _agent_start(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        self._ending = None
        if self.turn_id is not None:
            return []  # Pi goes on after compacting: the same LineUp turn
        self.turns += 1
        self.turn_id = f"turn-{self.turns}"
        self._messages = 0
        self._texts.clear()
        self._commands.clear()
        return [TurnStarted(turn_id=self.turn_id)]

    def _agent_end(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        messages = event.get("messages")
        self._ending = list(messages) if isinstance(messages, list) else []
        return []

    def _compaction_start(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        self._compacting = True
        return []

    def _compaction_end(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        self._compacting = False
        if event.get("willRetry"):
            self._ending = None  # Pi starts the run again on the compacted context
        return self.settle()

    # --- the reply ----------------------------------------------------------------------

    def _message_start(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        message = event.get("message") or {}
        if message.get("role") == "assistant":
            self._messages += 1
        return []

    def _item(self, update: Mapping[str, Any]) -> str:
        return f"{self.turn_id or 'turn'}/{self._messages}/{update.get('contentIndex', 0)}"

    def _message_update(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        update = event.get("assistantMessageEvent") or {}
        kind = update.get("type")
        item = self._item(update)
        if kind == "text_delta":
            delta = str(update.get("delta", ""))
            self._texts[item] = self._texts.get(item, "") + delta
            return [MessageDelta(item_id=item, text=delta)] if delta else []
        if kind == "text_end":
            text = update.get("content")
            return [
                MessageDone(
                    item_id=item, text=str(text) if text is not None else self._texts.get(item, "")
                )
            ]
        if kind == "thinking_end":
            text = str(update.get("content") or "")
            return [ReasoningSummary(item_id=item, text=text)] if text.strip() else []
        return []

    def _message_end(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        message = event.get("message") or {}
        usage = message.get("usage")
        if message.get("role") != "assistant" or not isinstance(usage, Mapping):
            return []
        used = TokenUsage(
            input_tokens=int(usage.get("input") or 0),
            output_tokens=int(usage.get("output") or 0),
            cached_input_tokens=int(usage.get("cacheRead") or 0),
        )
        return [used] if used.input_tokens or used.output_tokens else []

    # --- tools --------------------------------------------------------------------------

    def _tool_start(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        call_id = str(event.get("toolCallId", ""))
        name = str(event.get("toolName", ""))
        args = event.get("args")
        arguments: Mapping[str, Any] = args if isinstance(args, Mapping) else {}
        if name == SHELL:
            # shown as a command once it runs: a call the person declines never does
            self._commands[call_id] = _Command(command=str(arguments.get("command", "")))
            return []
        return [ToolCallStarted(call_id=call_id, name=name, arguments=arguments)]

    def permitted(self, call_id: str, arguments: Mapping[str, Any]) -> None:
        """The person allowed a call with ``arguments`` of their own: a command is reported
        as it will run."""
        command = self._commands.get(call_id)
        if command is not None and not command.started:
            command.command = str(arguments.get("command", ""))

    def _command_started(self, call_id: str, command: _Command) -> list[RuntimeEvent]:
        if command.started:
            return []
        command.started = True
        return [CommandStarted(item_id=call_id, command=command.command, cwd=self.cwd or "")]

    def _tool_update(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        call_id = str(event.get("toolCallId", ""))
        command = self._commands.get(call_id)
        if command is None:
            return []
        events = self._command_started(call_id, command)
        text = _text((event.get("partialResult") or {}).get("content"))
        events.extend(self._output(call_id, command, text))
        return events

    def _output(self, call_id: str, command: _Command, text: str) -> list[RuntimeEvent]:
        """Pi sends the whole output so far each time (its tail, once it is long)."""
        chunk = text[len(command.shown) :] if text.startswith(command.shown) else "\n[…]\n" + text
        command.shown = text
        return [CommandOutput(item_id=call_id, chunk=chunk)] if chunk else []

    def _tool_end(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        call_id = str(event.get("toolCallId", ""))
        name = str(event.get("toolName", ""))
        is_error = bool(event.get("isError"))
        text = _text((event.get("result") or {}).get("content"))
        command = self._commands.pop(call_id, None)
        if command is None:
            return [ToolCallFinished(call_id=call_id, ok=not is_error, result=text)]
        if not command.started:  # blocked before it ran: declined, or outside the policy
            return [
                ToolCallStarted(call_id=call_id, name=name, arguments={"command": command.command}),
                ToolCallFinished(call_id=call_id, ok=False, result=text),
            ]
        output, code = command_result(text, is_error)
        events = self._output(call_id, command, output) if output.startswith(command.shown) else []
        events.append(CommandFinished(item_id=call_id, exit_code=code))
        return events

    def _report(self, event: Mapping[str, Any]) -> list[RuntimeEvent]:
        """A report of LineUp's extension: a file edit or write that succeeded."""
        message = event.get("message")
        if event.get("method") != "notify" or not isinstance(message, str):
            return []
        if not message.startswith(BRIDGE + " "):
            return []
        try:
            report = json.loads(message[len(BRIDGE) + 1 :])
        except ValueError:
            return []
        if not isinstance(report, Mapping) or report.get("op") != "file_change":
            return []
        path = relative(str(report.get("path", "")), self.cwd)
        kind, diff = _change(path, report.get("before"), report.get("after"))
        return [FileChange(item_id=str(report.get("call_id", "")), path=path, kind=kind, diff=diff)]


_HANDLERS = {
    "agent_start": PiEventMapper._agent_start,
    "agent_end": PiEventMapper._agent_end,
    "compaction_start": PiEventMapper._compaction_start,
    "compaction_end": PiEventMapper._compaction_end,
    "message_start": PiEventMapper._message_start,
    "message_update": PiEventMapper._message_update,
    "message_end": PiEventMapper._message_end,
    "tool_execution_start": PiEventMapper._tool_start,
    "tool_execution_update": PiEventMapper._tool_update,
    "tool_execution_end": PiEventMapper._tool_end,
}


__all__ = [
    "BRIDGE",
    "PROVIDER",
    "PiEventMapper",
    "ToolRequest",
    "apply_edits",
    "approval_request",
    "bridge_request",
    "command_result",
    "error_code",
    "file_diff",
    "pi_models",
    "pi_settings",
    "question_tool",
    "relative",
    "tool_request",
]
