"""The loopback guard the end-to-end tests rely on when they assert that a process under test
(Hermes's gateway, ``lineup relay``) reached nothing beyond this machine: loaded the way those
tests load it, it refuses and records a name lookup and a connection that would leave the
machine, and lets loopback through. Without this, "nothing was recorded" could also mean
"the guard never ran"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.hermes import HERMES_VENV, HermesGateway
from tests.e2e.relay import LOOPBACK_ONLY

PROBE = """
import socket

listener = socket.create_server(("127.0.0.1", 0))
socket.create_connection(listener.getsockname(), timeout=5).close()  # loopback: allowed
for attempt in (lambda: socket.getaddrinfo("example.org", 443),
                lambda: socket.socket().connect(("192.0.2.1", 80))):
    try:
        attempt()
    except OSError as refused:
        print(refused)
    else:
        print("not refused")
"""

REFUSED = ["lookup example.org", "connect ('192.0.2.1', 80)"]


def _probe(python: Path | str, env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [str(python), "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_guard_refuses_and_records_what_would_leave_the_machine(tmp_path: Path) -> None:
    """As ``lineup relay`` runs under it: this interpreter, the guard first on the path."""
    log = tmp_path / "refused.log"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(LOOPBACK_ONLY), "LOOPBACK_ONLY_LOG": str(log)}
    said = _probe(sys.executable, env)
    assert said == [f"loopback only: refused {what}" for what in REFUSED]
    assert log.read_text().splitlines() == REFUSED


@pytest.mark.skipif(
    not (HERMES_VENV / "bin" / "python").exists(),
    reason=f"Hermes Agent is not installed in {HERMES_VENV} (make hermes-venv)",
)
def test_the_guard_runs_in_hermess_interpreter_as_the_gateway_is_started(tmp_path: Path) -> None:
    gateway = HermesGateway(tmp_path / "hermes", "http://127.0.0.1:9/v1")
    gateway.home.mkdir()
    said = _probe(gateway.bin / "python", gateway.environment())
    assert said == [f"loopback only: refused {what}" for what in REFUSED]
    assert gateway.network_log.read_text().splitlines() == REFUSED
