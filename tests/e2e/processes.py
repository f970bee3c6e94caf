"""Real processes for end-to-end tests: a hub (`lineup serve`) and agents (`lineup
demo-agent`), with bounded waits and no fixed sleeps."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[2]
LINEUP = str(Path(sys.executable).with_name("lineup"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChildProcess:
    """A test's child process: killed as a crash would, or stopped as a person would."""

    process: subprocess.Popen[bytes] | None

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@dataclass
class HubProcess(ChildProcess):
    home: Path
    database_url: str | None
    port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    open_files: tuple[int, int] | None = None
    """The (soft, hard) RLIMIT_NOFILE the hub starts with; None: the test runner's."""

    tls: bool = False
    """Serve https with the self-signed certificate the hub makes (``--tls-self-signed``)."""
    launcher: tuple[str, ...] = ()
    """A command the hub is started under (a tracer); the hub is then its first child."""

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def certificate(self) -> Path:
        """The self-signed certificate a TLS hub made (its own authority, for clients)."""
        return self.home / "tls" / "cert.pem"

    def _limit_open_files(self) -> None:
        if self.open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, self.open_files)

    def start(self) -> HubProcess:
        environment = {
            **os.environ,
            "LINEUP_HOME": str(self.home),
            "LINEUP_HEARTBEAT_INTERVAL": "0.5",
            "LINEUP_GRACE_PERIOD": "120",
            **self.env,
        }
        environment.pop("LINEUP_DATABASE_URL", None)
        if self.database_url:
            environment["LINEUP_DATABASE_URL"] = self.database_url
        self.log = self.home / f"hub-{self.port}.log"
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    *self.launcher,
                    LINEUP,
                    "serve",
                    "--port",
                    str(self.port),
                    "--log-level",
                    "info",
                    *(["--tls-self-signed"] if self.tls else []),
                ],
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=self._limit_open_files if self.open_files else None,
            )
        until(self._ready, "the hub to be ready")
        return self

    def _ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the hub exited: {self.tail()}")
        try:
            # readiness only: whom to trust is what the TLS tests are about
            return httpx.get(f"{self.url}/readyz", timeout=1, verify=False).status_code == 200
        except httpx.TransportError:
            return False

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log else ""


@dataclass
class AgentProcess(ChildProcess):
    hub_url: str
    state_dir: Path
    code: str | None = None
    extra: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    env: dict[str, str] = field(default_factory=dict)

    def start(self) -> AgentProcess:
        args = [LINEUP, "demo-agent", "--hub", self.hub_url, "--state-dir", str(self.state_dir)]
        if self.code:
            args += ["--code", self.code]
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with (self.state_dir / "agent.log").open("ab") as log:
            self.process = subprocess.Popen(
                [*args, *self.extra],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
            )
        return self

    def tail(self) -> str:
        path = self.state_dir / "agent.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""
