"""One interface for every hosted engine: what a driver offers, and what it reports.

Codex, Pi and Claude Code speak different protocols over their pipes; a driver translates
one of them into this module's terms, and everything above it — the process manager, the
hosted agent that turns events into LineUp messages, transcript entries and approval cards —
is written once. Nothing here does I/O: these are the types a driver and its host exchange.

A session is one long-lived engine process (or one conversation of it) working in one
directory. Each :meth:`RuntimeSession.turn` sends a person's message and yields
:class:`RuntimeEvent` values until the turn ends; while a turn runs the engine may ask its
host for things it cannot decide alone — an approval, a LineUp tool's result — through the
:class:`RuntimeHost` it was started with.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from lineup.protocol.errors import ErrorCode

# --- what a session is started with --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """The model the engine talks to: an OpenAI- or Anthropic-compatible endpoint.

    The key is handed to the driver in memory and reaches the engine through its environment
    or its config file, never its arguments (``ps`` shows those to every user)."""

    api: Literal["openai-responses", "openai-chat", "anthropic-messages"]
    base_url: str
    model: str
    api_key: str | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A LineUp tool offered to the engine (an interaction, an app tool, a capability)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """One past exchange, to rebuild a session from LineUp's own history."""

    user: str
    assistant: str


def history_text(history: Sequence[Turn]) -> str:
    """Past turns as text an engine reads before the new message: a rebuilt session has no
    native memory of them, only LineUp's record."""
    lines = ["The conversation so far (recorded by LineUp; continue from it):"]
    for turn in history:
        lines.append(f"User: {turn.user}")
        lines.append(f"Assistant: {turn.assistant}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class SessionSpec:
    cwd: str
    """The working directory, already checked against the configured allowed roots."""
    model: ModelEndpoint
    state_dir: str
    """A directory of the session's own for the engine's home and config (never the user's)."""
    tools: Sequence[ToolSpec] = ()
    instructions: str | None = None
    resume_hint: str | None = None
    """The engine's own session id from a previous process: a hint, tried first."""
    history: Sequence[Turn] = ()
    """What LineUp recorded, replayed into a fresh session when the hint does not resume."""
    env: Mapping[str, str] = field(default_factory=dict)


# --- what a session reports ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn_id: str


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """A piece of the assistant's reply as it streams (``item_id`` groups the pieces)."""

    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class MessageDone:
    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningSummary:
    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """Any tool the engine runs — its own (read, edit, web) or LineUp's — with its input."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    call_id: str
    ok: bool
    result: str


@dataclass(frozen=True, slots=True)
class CommandStarted:
    item_id: str
    command: str
    cwd: str


@dataclass(frozen=True, slots=True)
class CommandOutput:
    item_id: str
    chunk: str


@dataclass(frozen=True, slots=True)
class CommandFinished:
    item_id: str
    exit_code: int | None
    """``None`` when the command was killed or its status is unknown."""


@dataclass(frozen=True, slots=True)
class FileChange:
    item_id: str
    path: str
    kind: Literal["add", "modify", "delete"]
    diff: str
    """A unified diff of the change."""


@dataclass(frozen=True, slots=True)
class TokenUsage:
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    context_window: int | None = None


@dataclass(frozen=True, slots=True)
class EngineError:
    """Something went wrong that the person should see, in the error taxonomy."""

    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class TurnFinished:
    turn_id: str
    status: Literal["completed", "interrupted", "failed"]
    native_session_id: str | None = None
    """The engine's id for the session, kept as the next process's resume hint."""


RuntimeEvent = (
    TurnStarted
    | MessageDelta
    | MessageDone
    | ReasoningSummary
    | ToolCallStarted
    | ToolCallFinished
    | CommandStarted
    | CommandOutput
    | CommandFinished
    | FileChange
    | TokenUsage
    | EngineError
    | TurnFinished
)


# --- what a session asks of its host -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """The engine wants to do something its policy says a person must allow."""

    request_id: str
    kind: Literal["command", "file_change", "tool"]
    title: str
    tool: str | None = None
    input: Mapping[str, Any] | None = None
    command: str | None = None
    cwd: str | None = None
    diff: str | None = None
    reason: str | None = None
    editable: bool = False
    """Whether the engine accepts the input changed by the person (Claude Code does)."""


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    allow: bool
    updated_input: Mapping[str, Any] | None = None
    """Allowed with this input instead of the requested one (only when ``editable``)."""
    reason: str | None = None
    """Why not, told to the engine with a denial."""


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """The engine called one of the :class:`ToolSpec` tools LineUp offered."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    text: str
    ok: bool = True


class RuntimeHost(Protocol):
    """What a driver calls while a turn runs; answers may take as long as a person does.

    A call is cancelled (``asyncio.CancelledError``) when the turn is interrupted."""

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision: ...

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome: ...


class RuntimeSession(Protocol):
    @property
    def native_session_id(self) -> str | None:
        """The engine's own id for this session, once it has one (a resume hint)."""
        ...

    def turn(self, text: str) -> AsyncIterator[RuntimeEvent]:
        """Send the person's message and report the turn until its :class:`TurnFinished`."""
        ...

    async def steer(self, text: str) -> None:
        """A follow-up message while a turn runs (queued for the next turn where the engine
        cannot take it mid-turn)."""
        ...

    async def interrupt(self) -> None:
        """Stop the running turn; it ends with ``TurnFinished(status="interrupted")``."""
        ...

    async def close(self) -> None:
        """End the session and its process (terminate, then kill after a grace period)."""
        ...

    @property
    def pid(self) -> int | None:
        """The engine process's id, for the process manager's watchdog and accounting."""
        ...


@dataclass(frozen=True, slots=True)
class EngineStatus:
    """What ``lineup engines doctor`` prints for one engine."""

    engine: str
    installed: bool
    version: str | None
    path: str | None
    install_hint: str
    """The one command that installs it, e.g. ``npm install -g @openai/codex@0.171.0``."""


class AgentRuntime(Protocol):
    """One engine (Codex, Pi, Claude Code, the fake one): finds its binary, starts sessions."""

    name: str

    def status(self) -> EngineStatus: ...

    async def start(self, spec: SessionSpec, host: RuntimeHost) -> RuntimeSession: ...


__all__ = [
    "AgentRuntime",
    "ApprovalDecision",
    "ApprovalRequest",
    "CommandFinished",
    "CommandOutput",
    "CommandStarted",
    "EngineError",
    "EngineStatus",
    "FileChange",
    "MessageDelta",
    "MessageDone",
    "ModelEndpoint",
    "ReasoningSummary",
    "RuntimeEvent",
    "RuntimeHost",
    "RuntimeSession",
    "SessionSpec",
    "TokenUsage",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolInvocation",
    "ToolOutcome",
    "ToolSpec",
    "Turn",
    "TurnFinished",
    "TurnStarted",
]
