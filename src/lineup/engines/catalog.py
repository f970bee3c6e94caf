"""The engines LineUp knows: which can run here, and what ``lineup engines doctor`` says of each.

An engine is *runnable* when LineUp has its driver (an :class:`~lineup.engines.runtime.
AgentRuntime`); the others are still reported — installed or not, their version, the one
command that adds them — from their binary alone. LineUp itself needs no Node.js: only the
engines that are Node programs do, and only when someone installs them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lineup.engines.claude_code import ClaudeCodeRuntime
from lineup.engines.codex import CodexRuntime
from lineup.engines.fake import FakeRuntime
from lineup.engines.pi import PiRuntime
from lineup.engines.runtime import AgentRuntime, EngineStatus


@dataclass(frozen=True, slots=True)
class KnownEngine:
    name: str
    binary: str
    install_hint: str


KNOWN: tuple[KnownEngine, ...] = (
    KnownEngine("codex", "codex", "npm install -g @openai/codex@0.171.0"),
    KnownEngine("pi", "pi", "npm install -g @mariozechner/pi-coding-agent@0.73.1"),
    KnownEngine("claude-code", "claude", "npm install -g @anthropic-ai/claude-code@2.1.332"),
)


def runtimes(*, fake: bool = False) -> dict[str, AgentRuntime]:
    """The engines LineUp has a driver for, installed or not; ``fake`` (the scriptable test
    engine, which needs no model) only when asked for."""
    found: dict[str, AgentRuntime] = {
        "codex": CodexRuntime(),
        "pi": PiRuntime(),
        "claude-code": ClaudeCodeRuntime(),
    }
    if fake:
        found["fake"] = FakeRuntime()
    return found


def locate(
    engine: KnownEngine,
    which: Callable[[str], str | None] = shutil.which,
    timeout: float = 10.0,
) -> EngineStatus:
    """An engine's status from its binary on ``PATH`` (``--version``'s first line)."""
    path = which(engine.binary)
    version = None
    if path is not None:
        try:
            done = subprocess.run(  # noqa: S603 - a binary found on PATH, no shell
                [path, "--version"], capture_output=True, text=True, timeout=timeout, check=False
            )
            lines = (done.stdout or done.stderr).strip().splitlines()
            version = lines[0].strip() if lines else None
        except (OSError, subprocess.TimeoutExpired):
            version = None
    return EngineStatus(
        engine=engine.name,
        installed=path is not None,
        version=version,
        path=path,
        install_hint=engine.install_hint,
    )


def statuses(
    which: Callable[[str], str | None] = shutil.which,
    drivers: Mapping[str, AgentRuntime] | None = None,
) -> list[EngineStatus]:
    """Every engine's status: the runnable ones (``drivers``, else this LineUp's) from their
    driver, the others located."""
    found = [r.status() for r in (runtimes() if drivers is None else drivers).values()]
    named = {s.engine for s in found}
    found += [locate(e, which) for e in KNOWN if e.name not in named]
    return found


def doctor_lines(found: list[EngineStatus], runnable: set[str]) -> list[str]:
    lines = []
    for status in found:
        if status.installed:
            where = f" ({status.path})" if status.path else ""
            drives = "" if status.engine in runnable else "  [no driver in this LineUp yet]"
            version = status.version or "unknown version"
            lines.append(f"{status.engine:<12} installed  {version}{where}{drives}")
        else:
            lines.append(f"{status.engine:<12} not installed  add it with: {status.install_hint}")
    return lines
