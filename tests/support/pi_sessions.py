"""A session file written by the real Pi (``tests/engines``, ``make engines``), offline.

:func:`record_pi_session` drives Pi in RPC mode against the scripted model: it names the
session, runs a prompt whose answer calls Pi's ``bash`` tool, runs a person's ``!`` command,
and sends a message holding a password. Then Pi's own ``SessionManager`` (the package's
code, not a copy) compacts that branch, goes back to an earlier entry with a branch summary
and continues there with a message carrying an image, and labels the first prompt — so the
file has every kind of line Pi writes, and two branches, the new one active. The fixture
``tests/data/sessions/pi-0.73.1.jsonl`` was made with it (``python -m
tests.support.pi_sessions OUT``).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.scripted_model import ScriptedModel, Step

ROOT = Path(__file__).resolve().parents[2]
PI_PACKAGE = ROOT / "tests/engines/node_modules/@mariozechner/pi-coding-agent"
PI_CLI = PI_PACKAGE / "dist/cli.js"
FIXTURE = ROOT / "tests/data/sessions/pi-0.73.1.jsonl"

PNG_1x1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)

_BRANCH = """
import { SessionManager } from %(module)s;
const [file, dir] = process.argv.slice(1);
const sm = SessionManager.open(file, dir);
const entries = sm.getEntries();
const users = entries.filter((e) => e.type === "message" && e.message.role === "user");
const done = entries.find(
  (e) => e.type === "message" && e.message.role === "assistant" &&
         e.message.content.some((c) => c.type === "text" && c.text.startsWith("Done")));
sm.appendCompaction("The person asked for a greeting; the shell said hello.", users[1].id, 1234);
sm.branchWithSummary(done.id, "Tried the shell, then shared a password.");
const now = Date.now();
sm.appendMessage({role: "user", content: [{type: "text", text: "Now draw it: üñï 👋"},
  {type: "image", data: %(png)s, mimeType: "image/png"}], timestamp: now});
sm.appendMessage({role: "assistant", content: [{type: "thinking", thinking: "A wave will do."},
  {type: "text", text: "Here is a wave: 👋"}], api: "openai-completions", provider: "mock",
  model: "mock-model", usage: {input: 12, output: 7, cacheRead: 0, cacheWrite: 0,
  totalTokens: 19, cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0}},
  stopReason: "stop", timestamp: now + 1});
sm.appendLabelChange(users[0].id, "start");
"""


def pi_installed() -> bool:
    return PI_CLI.is_file()


def _settings(agent_dir: Path, model_url: str) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "mock": {
                "baseUrl": model_url,
                "api": "openai-completions",
                "apiKey": "dummy",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": "mock-model",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": 128000,
                        "maxTokens": 4096,
                    }
                ],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    settings = {
        "defaultProvider": "mock",
        "defaultModel": "mock-model",
        "enableInstallTelemetry": False,
        "quietStartup": True,
    }
    (agent_dir / "settings.json").write_text(json.dumps(settings))


class _Rpc:
    """Pi's RPC mode: JSON lines in, JSON lines out (split on ``\\n`` only, as Pi says)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        pending = b""
        for chunk in iter(lambda: self.process.stdout.read1(65536), b""):  # type: ignore[union-attr]
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if line.strip():
                    self.lines.put(json.loads(line))

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(command) + "\n").encode())
        self.process.stdin.flush()

    def wait(
        self, wanted: Callable[[dict[str, Any]], bool], what: str, timeout: float = 60
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                event = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if wanted(event):
                return
        raise AssertionError(f"Pi: timed out waiting for {what}")


def record_pi_session(home: Path) -> Path:
    """Record a session with the real Pi under ``home``; returns its file."""
    agent_dir, sessions, work = home / "agent", home / "sessions", home / "work"
    sessions.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    script = [
        Step.shell("echo hello-from-pi"),
        Step.text("Done: the shell said hello-from-pi."),
        Step.text("I will not repeat secrets."),
    ]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
    }
    with ScriptedModel(script) as model:
        _settings(agent_dir, model.base_url)
        process = subprocess.Popen(
            [
                "node",
                str(PI_CLI),
                "--mode",
                "rpc",
                "--session-dir",
                str(sessions),
                "--no-extensions",
                "--no-skills",
                "--no-context-files",
                "--no-prompt-templates",
                "--no-themes",
                "--provider",
                "mock",
                "--model",
                "mock-model",
            ],
            cwd=work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        rpc = _Rpc(process)
        try:
            rpc.send({"id": "1", "type": "set_session_name", "name": "Greeting check"})
            rpc.wait(lambda e: e.get("id") == "1", "the session's name")
            rpc.send({"id": "2", "type": "prompt", "message": "Say hello with the shell"})
            rpc.wait(lambda e: e.get("type") == "agent_end", "the first turn")
            rpc.send({"id": "3", "type": "bash", "command": "echo user-ran"})
            rpc.wait(lambda e: e.get("id") == "3", "the ! command")
            rpc.send({"id": "4", "type": "prompt", "message": "My password=hunter2, keep it"})
            rpc.wait(lambda e: e.get("type") == "agent_end", "the second turn")
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
            rpc.reader.join(15)  # it ends at the pipe's end, once Pi has exited
            if process.stdout is not None:
                process.stdout.close()
    (file,) = sessions.rglob("*.jsonl")
    branch = _BRANCH % {
        "module": json.dumps((PI_PACKAGE / "dist/index.js").as_uri()),
        "png": json.dumps(PNG_1x1),
    }
    subprocess.run(
        ["node", "--input-type=module", "-e", branch, str(file), str(file.parent)],
        check=True,
        env=env,
        cwd=work,
        timeout=60,
        capture_output=True,
    )
    return file


if __name__ == "__main__":
    import shutil
    import tempfile

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE
    with tempfile.TemporaryDirectory() as scratch:
        recorded = record_pi_session(Path(scratch))
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(recorded, out)
    print(f"wrote {out}")
