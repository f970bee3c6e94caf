"""Hermes Agent's gateway as a real process, in its own virtualenv, with the LineUp plugin
installed by ``lineup hermes install`` and its model a :class:`ScriptedModel` on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.processes import ROOT
from tests.e2e.scripted_model import Reply

HERMES_VENV = Path(os.environ.get("LINEUP_HERMES_VENV") or ROOT / ".venv-hermes")
"""Where ``make`` puts Hermes Agent (pinned) and an editable lineup: ``.venv-hermes``."""

LOOPBACK_ONLY = Path(__file__).with_name("loopback_only")


GREETING = ("Hello ", "from ", "Hermes", ", streamed.")


def chores(scratch: Path) -> Callable[[list[dict[str, Any]]], Reply]:
    """Greets; asked to clean, runs ``rm -rf`` on the scratch directory until it is gone
    (so a turn Hermes resumes after a restart asks again), then says it is done; asked for
    the report, writes it and sends the file."""
    report = scratch.parent / "report.txt"

    def script(messages: list[dict[str, Any]]) -> Reply:
        asked = [str(m.get("content")) for m in messages if m.get("role") == "user"]
        if not asked:  # Hermes's side requests (a session title, …)
            return Reply.text("Chores")
        person = [t for t in asked if any(word in t for word in ("clean", "hello", "report"))]
        if person and "report" in person[-1]:
            if not report.exists():
                return Reply.call("terminal", command=f"printf 'Q3 figures' > {report}")
            return Reply.text("The report is ready.\n", f"MEDIA:{report}")
        if not person or "clean" not in person[-1]:
            return Reply.text(*GREETING)
        if scratch.exists():
            return Reply.call("terminal", command=f"rm -rf {scratch}")
        return Reply.text("Cleaned ", "the scratch directory.")

    return script


def config_yaml(model_url: str) -> str:
    """Hermes's configuration for the tests: the scripted model, no retries, approvals by a
    person (with room to answer), replies streamed, nothing of Hermes's own online."""
    return f"""\
model:
  provider: custom
  default: scripted-model
  base_url: {model_url}
  api_key: test-key
  context_length: 128000
security:
  allow_lazy_installs: false
  tirith_enabled: false
agent:
  api_max_retries: 0
  max_turns: 8
approvals:
  mode: manual
  timeout: 600
display:
  tool_progress: "off"
  interim_assistant_messages: false
streaming:
  enabled: true
  transport: edit
  edit_interval: 0.05
  buffer_threshold: 1
memory:
  memory_enabled: false
  user_profile_enabled: false
terminal:
  backend: local
  timeout: 30
network:
  force_ipv4: false
"""


@dataclass
class HermesGateway:
    home: Path
    model_url: str
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    @property
    def bin(self) -> Path:
        return HERMES_VENV / "bin"

    @property
    def network_log(self) -> Path:
        return self.home / "non-loopback.log"

    @property
    def log(self) -> Path:
        return self.home / "gateway.out"

    def environment(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in {"PATH", "LANG", "TZ", "TMPDIR"}}
        return {
            **keep,
            "HOME": str(self.home),
            "HERMES_HOME": str(self.home / ".hermes"),
            "PYTHONPATH": str(LOOPBACK_ONLY),
            "LOOPBACK_ONLY_LOG": str(self.network_log),
            "PATH": f"{self.bin}:{keep.get('PATH', '/usr/bin:/bin')}",
            "NO_PROXY": "*",
            **self.env,
        }

    def install(self, hub_url: str, code: str) -> str:
        """``lineup hermes install`` from Hermes's environment, as the docs say; its output."""
        hermes_home = self.home / ".hermes"
        hermes_home.mkdir(parents=True, exist_ok=True)
        (hermes_home / "config.yaml").write_text(config_yaml(self.model_url))
        done = subprocess.run(
            [str(self.bin / "lineup"), "hermes", "install", "--hub", hub_url, "--code", code],
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def start(self) -> HermesGateway:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [str(self.bin / "hermes"), "gateway", "run"],
                env=self.environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.home,
                start_new_session=True,
            )
        return self

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)

    def tail(self) -> str:
        parts = [self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""]
        logs = self.home / ".hermes" / "logs"
        for name in ("gateway.log", "errors.log"):
            if (logs / name).exists():
                parts.append(f"--- {name}\n" + (logs / name).read_text(errors="replace")[-3000:])
        return "\n".join(parts)
