"""What ``codex app-server`` says, in LineUp's runtime terms — no process, no I/O.

:class:`CodexEventMapper` turns the app-server's notifications (``item/started``,
``item/agentMessage/delta``, ``item/commandExecution/outputDelta``, ``turn/completed`` …, as
``codex app-server generate-json-schema`` describes them for 0.171) into
:class:`~lineup.engines.runtime.RuntimeEvent` values, and remembers the items of the turn so
an approval request — which names only an item — can be shown with its command or diff.
:func:`codex_config` writes the ``config.toml`` that keeps Codex offline but for the model.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any, Literal

from lineup.engines.runtime import (
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

API_KEY_ENV = "LINEUP_MODEL_API_KEY"
"""The variable that carries the model key to Codex (named by ``env_key``, never in argv)."""

PROVIDER = "lineup"

_ERROR_CODES: Mapping[str, ErrorCode] = {
    "contextWindowExceeded": ErrorCode.INVALID_ARGUMENT,
    "badRequest": ErrorCode.INVALID_ARGUMENT,
    "sessionBudgetExceeded": ErrorCode.RATE_LIMITED,
    "usageLimitExceeded": ErrorCode.RATE_LIMITED,
    "rateLimitExceeded": ErrorCode.RATE_LIMITED,
    "serverOverloaded": ErrorCode.UNAVAILABLE,
    "flexUnavailable": ErrorCode.UNAVAILABLE,
    "policyCapacityUnavailable": ErrorCode.UNAVAILABLE,
    "internalServerError": ErrorCode.UNAVAILABLE,
    "httpConnectionFailed": ErrorCode.UNAVAILABLE,
    "responseStreamConnectionFailed": ErrorCode.UNAVAILABLE,
    "responseStreamDisconnected": ErrorCode.UNAVAILABLE,
    "responseTooManyFailedAttempts": ErrorCode.UNAVAILABLE,
    "modelNotFound": ErrorCode.NOT_FOUND,
    "unauthorized": ErrorCode.UNAUTHENTICATED,
    "cyberPolicy": ErrorCode.FORBIDDEN,
    "bioPolicy": ErrorCode.FORBIDDEN,
    "misalignmentPolicyViolation": ErrorCode.FORBIDDEN,
    "inferenceHookDenied": ErrorCode.FORBIDDEN,
    "tooManyDenials": ErrorCode.FORBIDDEN,
    "sandboxError": ErrorCode.FORBIDDEN,
}


def error_code(info: Any) -> ErrorCode:
    """The taxonomy code of a ``codexErrorInfo`` (a string, or an object of one key)."""
    if isinstance(info, Mapping) and info:
        info = next(iter(info))
    if isinstance(info, str):
        return _ERROR_CODES.get(info, ErrorCode.UNKNOWN_RESULT)
    return ErrorCode.UNKNOWN_RESULT


def unified_diff(path: str, kind: str, diff: str) -> str:
    """A unified diff with headers, whatever Codex gave: a hunk body for an update, the new
    file's content for an add, the old content for a delete."""
    if diff.startswith("--- ") or diff.startswith("diff "):
        return diff
    name = path.lstrip("/")
    if kind == "modify":
        if "@@" in diff:
            return f"--- a/{name}\n+++ b/{name}\n{diff}"
        return diff
    lines = diff.splitlines(keepends=True)
    if kind == "add":
        made = difflib.unified_diff([], lines, "/dev/null", f"b/{name}")
    else:
        made = difflib.unified_diff(lines, [], f"a/{name}", "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n" for line in made)


def change_kind(kind: Any) -> Literal["add", "modify", "delete"]:
    name = kind.get("type") if isinstance(kind, Mapping) else kind
    if name == "add":
        return "add"
    if name == "delete":
        return "delete"
    return "modify"


def _content_text(items: Any) -> str:
    if not isinstance(items, list):
        return "" if items is None else str(items)
    parts = []
    for item in items:
        if isinstance(item, Mapping):
            parts.append(str(item.get("text", "")) if "text" in item else json.dumps(item))
        else:
            parts.append(str(item))
    return "".join(parts)


def _arguments(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"input": value}
        return parsed if isinstance(parsed, Mapping) else {"input": parsed}
    return {} if value is None else {"input": value}


class CodexEventMapper:
    """The events of one thread, turn by turn. Feed it every notification in order."""

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd
        """Paths under it are reported relative to it."""
        self.thread_id: str | None = None
        self.turn_id: str | None = None
        self.items: dict[str, Mapping[str, Any]] = {}
        """The turn's items by id, as last reported (started, then completed)."""
        self._streamed: set[str] = set()
        self._error_reported = False

    def notification(self, method: str, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        handler = _HANDLERS.get(method)
        return handler(self, params) if handler is not None else []

    def relative(self, path: str) -> str:
        if self.cwd:
            root = self.cwd.rstrip("/") + "/"
            if path.startswith(root):
                return path[len(root) :]
        return path

    # --- what an approval request names -------------------------------------------------

    def command_of(self, item_id: str) -> tuple[str | None, str | None]:
        item = self.items.get(item_id) or {}
        command, cwd = item.get("command"), item.get("cwd")
        return (str(command) if command else None, str(cwd) if cwd else None)

    def diff_of(self, item_id: str) -> str | None:
        item = self.items.get(item_id) or {}
        changes = [c for c in item.get("changes") or [] if isinstance(c, Mapping)]
        if not changes:
            return None
        return "".join(
            unified_diff(
                self.relative(str(c.get("path", ""))),
                change_kind(c.get("kind")),
                str(c.get("diff", "")),
            )
            for c in changes
        )

    # --- notifications ------------------------------------------------------------------

    def _thread_started(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        thread = params.get("thread") or {}
        if isinstance(thread, Mapping) and thread.get("id"):
            self.thread_id = str(thread["id"])
        return []

    def _turn_started(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        turn = params.get("turn") or {}
        self.turn_id = str(turn.get("id", ""))
        self.items.clear()
        self._streamed.clear()
        self._error_reported = False
        return [TurnStarted(turn_id=self.turn_id)]

    def _turn_completed(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        turn = params.get("turn") or {}
        status = str(turn.get("status", "completed"))
        events: list[RuntimeEvent] = []
        error = turn.get("error")
        if status == "failed" and isinstance(error, Mapping) and not self._error_reported:
            events.append(
                EngineError(
                    code=error_code(error.get("codexErrorInfo")),
                    message=str(error.get("message", "the turn failed")),
                )
            )
        final: Literal["completed", "interrupted", "failed"] = (
            "interrupted"
            if status == "interrupted"
            else "failed"
            if status == "failed"
            else "completed"
        )
        events.append(
            TurnFinished(
                turn_id=str(turn.get("id", self.turn_id or "")),
                status=final,
                native_session_id=str(params.get("threadId") or self.thread_id or "") or None,
            )
        )
        return events

    def _error(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        if params.get("willRetry"):
            return []
        error = params.get("error") or {}
        self._error_reported = True
        return [
            EngineError(
                code=error_code(error.get("codexErrorInfo")),
                message=str(error.get("message", "Codex reported an error")),
            )
        ]

    def _item_started(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        item = params.get("item") or {}
        item_id = str(item.get("id", ""))
        self.items[item_id] = item
        kind = item.get("type")
        if kind == "commandExecution":
            return [
                CommandStarted(
                    item_id=item_id,
                    command=str(item.get("command", "")),
                    cwd=str(item.get("cwd") or ""),
                )
            ]
        if kind == "dynamicToolCall":
            name = str(item.get("tool", ""))
            if item.get("namespace"):
                name = f"{item['namespace']}.{name}"
            return [
                ToolCallStarted(
                    call_id=item_id, name=name, arguments=_arguments(item.get("arguments"))
                )
            ]
        if kind == "mcpToolCall":
            name = f"mcp__{item.get('server', '')}__{item.get('tool', '')}"
            return [
                ToolCallStarted(
                    call_id=item_id, name=name, arguments=_arguments(item.get("arguments"))
                )
            ]
        return []

    def _item_completed(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        item = params.get("item") or {}
        item_id = str(item.get("id", ""))
        started = item_id in self.items
        self.items[item_id] = item
        kind = item.get("type")
        events: list[RuntimeEvent] = []
        if kind == "agentMessage":
            events.append(MessageDone(item_id=item_id, text=str(item.get("text", ""))))
        elif kind == "reasoning":
            summary = [str(s) for s in item.get("summary") or [] if s]
            if summary:
                events.append(ReasoningSummary(item_id=item_id, text="\n\n".join(summary)))
        elif kind == "commandExecution":
            if not started:
                events.append(
                    CommandStarted(
                        item_id=item_id,
                        command=str(item.get("command", "")),
                        cwd=str(item.get("cwd") or ""),
                    )
                )
            output = item.get("aggregatedOutput")
            if output and item_id not in self._streamed:
                events.append(CommandOutput(item_id=item_id, chunk=str(output)))
            code = item.get("exitCode")
            finished = item.get("status") == "completed" or code is not None
            events.append(
                CommandFinished(
                    item_id=item_id, exit_code=int(code) if finished and code is not None else None
                )
            )
        elif kind == "fileChange":
            if item.get("status") == "completed":
                for change in item.get("changes") or []:
                    path = self.relative(str(change.get("path", "")))
                    kind_ = change_kind(change.get("kind"))
                    events.append(
                        FileChange(
                            item_id=item_id,
                            path=path,
                            kind=kind_,
                            diff=unified_diff(path, kind_, str(change.get("diff", ""))),
                        )
                    )
        elif kind == "dynamicToolCall":
            if not started:
                events.extend(self._item_started(params))
            events.append(
                ToolCallFinished(
                    call_id=item_id,
                    ok=bool(item.get("success")) and item.get("status") == "completed",
                    result=_content_text(item.get("contentItems")),
                )
            )
        elif kind == "mcpToolCall":
            if not started:
                events.extend(self._item_started(params))
            error = item.get("error")
            result = item.get("result") or {}
            text = (
                str(error.get("message", ""))
                if isinstance(error, Mapping)
                else _content_text(result.get("content"))
            )
            events.append(
                ToolCallFinished(
                    call_id=item_id,
                    ok=error is None and item.get("status") == "completed",
                    result=text,
                )
            )
        return events

    def _message_delta(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        return [
            MessageDelta(item_id=str(params.get("itemId", "")), text=str(params.get("delta", "")))
        ]

    def _command_output(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        item_id = str(params.get("itemId", ""))
        self._streamed.add(item_id)
        return [CommandOutput(item_id=item_id, chunk=str(params.get("delta", "")))]

    def _token_usage(self, params: Mapping[str, Any]) -> list[RuntimeEvent]:
        usage = params.get("tokenUsage") or {}
        last = usage.get("last") or {}
        window = usage.get("modelContextWindow")
        return [
            TokenUsage(
                input_tokens=int(last.get("inputTokens", 0)),
                output_tokens=int(last.get("outputTokens", 0)),
                cached_input_tokens=int(last.get("cachedInputTokens", 0)),
                context_window=int(window) if window is not None else None,
            )
        ]


_HANDLERS = {
    "thread/started": CodexEventMapper._thread_started,
    "turn/started": CodexEventMapper._turn_started,
    "turn/completed": CodexEventMapper._turn_completed,
    "error": CodexEventMapper._error,
    "item/started": CodexEventMapper._item_started,
    "item/completed": CodexEventMapper._item_completed,
    "item/agentMessage/delta": CodexEventMapper._message_delta,
    "item/commandExecution/outputDelta": CodexEventMapper._command_output,
    "thread/tokenUsage/updated": CodexEventMapper._token_usage,
}


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a TOML basic string


def codex_config(
    model: ModelEndpoint, *, approval_policy: str, sandbox: str, model_name: str | None = None
) -> str:
    """``config.toml`` for a session's ``CODEX_HOME``: the model provider is LineUp's
    endpoint, and everything that would reach beyond it — analytics, feedback, update
    checks, plugins and apps (which fetch from GitHub and the vendor), web search — is off.
    The key is not in it: Codex reads it from the variable ``env_key`` names."""
    env_key = f"env_key = {_toml(API_KEY_ENV)}\n" if model.api_key else ""
    return f"""\
model = {_toml(model_name or model.model)}
model_provider = "{PROVIDER}"
approval_policy = {_toml(approval_policy)}
sandbox_mode = {_toml(sandbox)}
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.{PROVIDER}]
name = "LineUp"
base_url = {_toml(model.base_url)}
wire_api = "responses"
{env_key}request_max_retries = 0
stream_max_retries = 0

[agents]
enabled = false

[features]
plugins = false
apps = false
remote_plugin = false
goals = false
tool_suggest = false
shell_snapshot = false
image_generation = false
"""


__all__ = [
    "API_KEY_ENV",
    "CodexEventMapper",
    "change_kind",
    "codex_config",
    "error_code",
    "unified_diff",
]
