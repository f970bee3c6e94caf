"""The engines the hosted-agent conformance tests run, each as an :class:`EngineCase`: how to
make it do what a scenario needs — a plain reply, a LineUp question, a command that needs a
person's approval and leaves an effect, an approval whose input the person edits, a turn that
waits for the person — so the scenarios are written once, engine-neutral. The fake engine is
scripted by markers in the message; a real engine by the scripted model's answers
(``tests/support/scripted_model.py``) in the dialect it speaks:

=============  ==================  ==========================================================
engine         dialect             a command needing approval
=============  ==================  ==========================================================
fake           (markers)           ``[approve:CMD]``
codex          openai-responses    ``exec_command`` asking to leave the sandbox (escalation)
pi             openai-chat         ``bash``, which LineUp's extension asks before (ask_before)
claude-code    anthropic-messages  ``Bash``, which Claude Code asks about (``can_use_tool``)
=============  ==================  ==========================================================

Claude Code offers LineUp's tools as MCP tools, so its model calls them
``mcp__lineup__<tool>``; the others call them by name. A new engine joins the suites by
adding its case to :data:`CASES`; a case whose engine is not installed is skipped with the
command that installs it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineup.engines.claude_code import ClaudeCodeRuntime, find_claude
from lineup.engines.codex import CodexRuntime, find_codex
from lineup.engines.fake import FakeRuntime
from lineup.engines.fake_engine import EFFECTS_FILE
from lineup.engines.pi import PiRuntime, find_pi
from lineup.engines.runtime import AgentRuntime
from tests.support.scripted_model import ScriptedModel, Step

ROOT = Path(__file__).resolve().parents[2]
VENDORED_CODEX = (
    ROOT
    / "tests/mcp-conformance/node_modules/@openai/codex-linux-x64/vendor"
    / "x86_64-unknown-linux-musl/bin/codex"
)
VENDORED_PI = ROOT / "tests/engines/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
VENDORED_CLAUDE = ROOT / "tests/engines/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
PI_QUESTIONS = ROOT / "tests/support/pi_questions.ts"
"""An operator's Pi extension whose tool asks the person through Pi's own dialogs."""

DIALECTS = {
    "codex": "openai-responses",
    "pi": "openai-chat",
    "claude-code": "anthropic-messages",
}
"""The model API each real engine is pointed at (Pi speaks all three; its driver tests use
Chat Completions by default)."""

BINARY_ENV = {
    "codex": "LINEUP_CODEX_BIN",
    "pi": "LINEUP_PI_BIN",
    "claude-code": "LINEUP_CLAUDE_BIN",
}


@dataclass(frozen=True)
class Edit:
    """An approval whose input the person edits: the message that makes the engine ask, the
    input the card offers, the person's edit, and the effect the edited input leaves."""

    message: str
    proposed: dict[str, Any]
    edited: dict[str, Any]
    effect: str


@dataclass(frozen=True)
class OwnQuestion:
    """The engine asking the person of its own accord (not through LineUp's tools): the
    message that makes it ask, the choice card's title, the option the person picks, whether
    a confirmation (an approval card) follows, and what its model is told of the answer."""

    message: str
    title: str
    pick: str
    confirm: bool
    told: str


@dataclass
class EngineCase:
    """One engine, and how a scenario makes it act."""

    name: str
    model: ScriptedModel | None = None
    binary: Path | None = None
    editable: bool = False
    """Whether its approval requests carry an input the person may edit."""
    effects_file: str = EFFECTS_FILE

    # --- setting it up ------------------------------------------------------------------

    def runtime(self, launcher: Sequence[str] = ()) -> AgentRuntime:
        if self.name == "fake":
            return FakeRuntime()
        assert self.binary is not None
        if self.name == "pi":  # with an operator's extension that asks through Pi's dialogs
            return PiRuntime(str(self.binary), launcher=launcher, extensions=[PI_QUESTIONS])
        if self.name == "claude-code":
            return ClaudeCodeRuntime(str(self.binary), launcher=launcher)
        return CodexRuntime(str(self.binary), launcher=launcher)

    def model_settings(self) -> dict[str, Any]:
        if self.model is None:
            return {"api": "openai-responses", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
        api = DIALECTS[self.name]
        base = self.model.root_url if api == "anthropic-messages" else self.model.base_url
        return {"api": api, "baseUrl": base, "model": "mock-model"}

    def environment(self) -> dict[str, str]:
        """What ``lineup serve`` needs in its environment to find the engine."""
        if self.name == "fake":
            return {"LINEUP_ENGINE_FAKE": "1"}
        return {BINARY_ENV[self.name]: str(self.binary)}

    def tool(self, name: str) -> str:
        """What the engine's model calls LineUp's tool ``name``."""
        return f"mcp__lineup__{name}" if self.name == "claude-code" else name

    def call(self, name: str, /, **arguments: Any) -> Step:
        """The model calling LineUp's tool ``name`` (a question, an app tool, a capability)."""
        return Step(kind="call", name=self.tool(name), arguments=arguments)

    # --- scripts --------------------------------------------------------------------------

    def plain(self, text: str) -> tuple[str, str]:
        """A message and a piece of the reply it gets."""
        if self.model is None:
            return text, f"You said: {text}"
        reply = f"Noted: {text}"
        self.model.then(Step.text(reply[:6], reply[6:]))
        return text, reply

    def question(self, title: str) -> tuple[str, str]:
        """A message whose turn asks the person ``title`` (LineUp's ask_input), and a piece
        of the reply that ends the turn."""
        if self.model is None:
            return f"[tool:ask_input {json.dumps({'title': title})}]", "ask_input said:"
        self.model.then(self.call("ask_input", title=title), Step.text("Thanks for answering."))
        return "Ask me something.", "Thanks for answering."

    def choice(self, title: str, options: list[str]) -> tuple[str, str]:
        """A message whose turn asks the person to choose (LineUp's ask_choice), and a piece
        of the reply that ends the turn."""
        arguments = {"title": title, "options": options}
        if self.model is None:
            return f"[tool:ask_choice {json.dumps(arguments)}]", "ask_choice said:"
        self.model.then(self.call("ask_choice", **arguments), Step.text("Thanks for choosing."))
        return "Let me choose.", "Thanks for choosing."

    def app_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """A message whose turn calls a tool of the person's LineUp app (call_app_tool), and
        a piece of the reply that ends the turn."""
        call = {"name": name, "arguments": arguments}
        if self.model is None:
            return f"[tool:call_app_tool {json.dumps(call)}]", "call_app_tool said:"
        self.model.then(self.call("call_app_tool", **call), Step.text("The app answered."))
        return "Check with the app.", "The app answered."

    def answer_reached(self, reply: str, answer: str) -> bool:
        """Whether the person's answer reached the engine (its model, for a real one)."""
        if self.model is None:
            return answer in reply
        return any(answer in output for output in self.model.tool_outputs())

    def steered(self, reply: str, text: str) -> bool:
        """Whether a message steered into a running turn reached the engine in that turn."""
        if self.model is None:
            return f"steered: {text}" in reply
        return text in self.model.model_requests()[-1].text()

    def command_step(self, command: str) -> Step:
        """The model running ``command`` with the engine's shell tool, asking a person first
        (Codex asks only for a command that wants to leave its sandbox; Pi's extension and
        Claude Code ask before every command)."""
        return Step.shell(command, escalated=True)

    def shell(self, effect: str) -> str:
        """The command that appends ``effect`` to the effects file."""
        return f"echo {shlex.quote(effect)} >> {self.effects_file}"

    def command(self, effect: str, *, then_wait: bool = False) -> tuple[str, str]:
        """A message whose turn asks to run a command that appends ``effect`` to the effects
        file, and (``then_wait``) then waits for a person's answer; and the card's title."""
        if self.model is None:
            return f"[approve:{effect}]" + ("[hang]" if then_wait else ""), f"Run {effect}?"
        self.model.then(self.command_step(self.shell(effect)))
        if then_wait:
            self.model.then(self.call("ask_input", title="Shall I go on?"))
        else:
            self.model.then(Step.text(f"Finished with {effect}."))
        return f"Please run {effect}.", "Run"

    def allowed_reply(self, effect: str) -> str:
        """A piece of the reply once the command of :meth:`command` was allowed and ran."""
        return f"ran {effect}" if self.model is None else f"Finished with {effect}."

    def declined_reply(self, effect: str, reason: str) -> str:
        if self.model is None:
            return f"did not run {effect} ({reason})"
        return f"Finished with {effect}."

    def declined_reached(self, reason: str) -> bool:
        """Whether the person's reason for declining reached the engine."""
        if self.model is None:
            return True  # the fake engine's reply quotes it: checked by declined_reply
        if self.name == "codex":
            return True  # Codex takes a bare "decline": the reason stays with LineUp
        return any(reason in output for output in self.model.tool_outputs())

    def edit(self, proposed: str, edited: str) -> Edit:
        """An approval whose input the person edits from ``proposed`` to ``edited`` (engines
        that take an edited input)."""
        assert self.editable
        if self.model is None:
            asked = {"path": "notes.txt", "text": proposed}
            changed = {"path": "notes.txt", "text": edited}
            return Edit(
                f"[approve-tool:write {json.dumps(asked)}]",
                asked,
                changed,
                f"write {json.dumps(changed, sort_keys=True)}",
            )
        self.model.then(Step.shell(self.shell(proposed)), Step.text("Noted as you edited it."))
        return Edit(
            "Note it down.",
            {"command": self.shell(proposed)},
            {"command": self.shell(edited)},
            edited,
        )

    def own_question(self) -> OwnQuestion | None:
        """The engine's own question to the person, or ``None`` for an engine that has none
        LineUp can see: the fake engine asks only through LineUp's tools, and Codex offers
        its ``request_user_input`` tool in its Plan mode only, which LineUp does not use."""
        assert self.model is not None or self.name == "fake"
        if self.name == "pi":  # the extension's tool: ctx.ui.select, then ctx.ui.confirm
            self.model.then(Step.call("pick_colour"), Step.text("Blue then."))
            return OwnQuestion(
                "Let me pick a colour.", "Pick a colour", "blue", True, "picked blue, sure: true"
            )
        if self.name == "claude-code":  # AskUserQuestion, answered as an edited input
            question = {
                "question": "Which colour?",
                "header": "Colour",
                "options": [
                    {"label": "red", "description": "Loud"},
                    {"label": "blue", "description": "Calm"},
                ],
                "multiSelect": False,
            }
            self.model.then(
                Step.call("AskUserQuestion", questions=[question]), Step.text("Blue then.")
            )
            return OwnQuestion(
                "Let me pick a colour.", "Which colour?", "blue", False, '"Which colour?"="blue"'
            )
        return None

    def waits(self) -> str:
        """A message (or task) whose turn waits, mid-turn, until stopped."""
        if self.model is None:
            return "Wait for my word [hang]"
        self.model.then(self.call("ask_input", title="Shall I go on?"))
        return "Wait for my word"

    def after_restart(self, text: str) -> tuple[str, str]:
        """A message to a restarted session; the reply shows it was given the record."""
        if self.model is None:
            return text, f"You said: {text}"
        return self.plain(text)

    def remembers(self, earlier: str) -> bool:
        """Whether the engine was given ``earlier`` (said before its process restarted)."""
        if self.model is None:
            return True  # the fake engine counts the turns it was given: checked by the reply
        return earlier in self.model.model_requests()[-1].text()


def codex_binary() -> Path | None:
    return find_codex(str(VENDORED_CODEX)) if VENDORED_CODEX.exists() else find_codex()


def pi_binary() -> Path | None:
    return find_pi(str(VENDORED_PI)) if VENDORED_PI.exists() else find_pi()


def claude_binary() -> Path | None:
    return find_claude(str(VENDORED_CLAUDE)) if VENDORED_CLAUDE.exists() else find_claude()


CASES = ("fake", "codex", "pi", "claude-code")
"""Every engine the hosted conformance suites run."""

INSTALL = {
    "codex": "the Codex CLI is not installed: run `make mcp-hosts` (or set LINEUP_CODEX_BIN)",
    "pi": "Pi is not installed: run `make engines` (or set LINEUP_PI_BIN)",
    "claude-code": "Claude Code is not installed: run `make engines` (or set LINEUP_CLAUDE_BIN)",
}

_BINARIES = {"codex": codex_binary, "pi": pi_binary, "claude-code": claude_binary}


def binary(name: str) -> Path | None:
    """The program of the real engine ``name`` on this machine, or None when it cannot run."""
    if name not in _BINARIES:
        raise ValueError(f"no engine case {name!r}")
    found = _BINARIES[name]()
    if found is not None and name == "pi" and not PiRuntime(str(found)).status().installed:
        return None  # the script is there, Node is not
    return found


def make_case(name: str, model: ScriptedModel | None) -> EngineCase | None:
    """The case for ``name``, or None when its engine is not installed here."""
    if name == "fake":
        return EngineCase("fake", editable=True)
    program = binary(name)
    if program is None:
        return None
    return EngineCase(name, model=model, binary=program, editable=name != "codex")
