"""``lineup relay`` as a real process for the end-to-end and browser tests: the SDK agent of
every mode (``tests.support.relay_agent``) hosted in relay mode against the relay test peer,
each step of its handlers written to a log, and every connection or name lookup beyond
loopback refused and recorded (``tests/e2e/loopback_only``)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.processes import ROOT, ChildProcess
from tests.support.relay_peer import PeerUser, RelayPeer

LOOPBACK_ONLY = Path(__file__).with_name("loopback_only")


@dataclass
class RelayAgentProcess(ChildProcess):
    peer: RelayPeer
    bot: PeerUser
    home: Path
    people: tuple[str, ...] = ("ana",)
    process: subprocess.Popen[bytes] | None = None

    @property
    def steps(self) -> list[str]:
        """The handler steps the agent took, one line each, across its runs."""
        path = self.home / "steps.log"
        return path.read_text().splitlines() if path.exists() else []

    @property
    def refused(self) -> str:
        """What the loopback guard refused (empty: nothing beyond loopback was tried)."""
        path = self.home / "loopback.log"
        return path.read_text() if path.exists() else ""

    def start(self) -> None:
        env = {
            **os.environ,
            "LINEUP_HOME": str(self.home),
            "LINEUP_RELAY_TOKEN": self.bot.token,
            "RELAY_AGENT_LOG": str(self.home / "steps.log"),
            "LOOPBACK_ONLY_LOG": str(self.home / "loopback.log"),
            "PYTHONPATH": os.pathsep.join(
                [str(LOOPBACK_ONLY), str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
            ),
        }
        env.pop("LINEUP_MODE", None)
        self.home.mkdir(parents=True, exist_ok=True)
        with (self.home / "agent.log").open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "lineup", "relay",
                 "--server", self.peer.tcp, "--api", self.peer.api, "--uid", self.bot.uid,
                 "--people", ",".join(self.people),
                 "--module", "tests.support.relay_agent:build_agent", "--log-level", "info"],
                env=env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def tail(self) -> str:
        return (self.home / "agent.log").read_text(errors="replace")[-4000:]
