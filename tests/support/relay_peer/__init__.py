"""The relay test peer: one Node process that is a loopback WuKongIM server and a
TangSengDaoDao API stub (``server.mjs`` here; ``make relay-peer`` installs its one
dependency, ``ws``).

:func:`running_peer` starts it and returns its addresses; the :func:`relay_peer` fixture is
that for one test (import it into a test module or a conftest). Users are made through the
stub's test endpoint, and each comes with a token the WuKongIM side accepts.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.mjs"
START_SECONDS = 20.0


@dataclass(frozen=True)
class PeerUser:
    uid: str
    token: str
    name: str
    username: str
    password: str


@dataclass
class RelayPeer:
    """A running peer: ``ws`` (``ws://127.0.0.1:P/``), ``tcp``, ``api`` addresses."""

    ws: str
    tcp: str
    api: str
    process: subprocess.Popen[bytes]
    log: list[str] = field(default_factory=list)
    users: dict[str, PeerUser] = field(default_factory=dict)
    """The users added, by uid (the last token each was given)."""

    def add_user(
        self, uid: str, *, name: str | None = None, password: str = "secret-pass"
    ) -> PeerUser:
        """A TSDD user (``POST /test/users``) and a token WuKongIM accepts for it."""
        answer = httpx.post(
            f"{self.api}/test/users",
            json={"uid": uid, "username": uid, "password": password, "name": name or uid},
            timeout=10,
        )
        answer.raise_for_status()
        body = answer.json()
        self.users[uid] = PeerUser(uid, body["token"], body["name"], uid, password)
        return self.users[uid]

    def stats(self) -> dict[str, Any]:
        """The peer's counters (``GET /test/stats``)."""
        answer = httpx.get(f"{self.api}/test/stats", timeout=10)
        answer.raise_for_status()
        return answer.json()  # type: ignore[no-any-return]

    def files(self) -> list[dict[str, Any]]:
        """What was stored through TSDD's file API (``GET /test/files``): each ``path``
        (``file/preview/…``), ``size``, ``type``, ``filename``, ``uploader`` and ``sha256``."""
        answer = httpx.get(f"{self.api}/test/files", timeout=10)
        answer.raise_for_status()
        return answer.json()["files"]  # type: ignore[no-any-return]

    def addresses(self) -> dict[str, str]:
        return {"ws": self.ws, "tcp": self.tcp, "api": self.api}


def require_peer() -> str:
    """The ``node`` binary; fails (not skips) when the peer's dependency is not installed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the relay test peer runs under Node")
    if not (HERE / "node_modules" / "ws").exists():
        pytest.fail(
            "the relay test peer is not installed: run `make relay-peer` "
            "(npm ci in tests/support/relay_peer)"
        )
    return node


@contextlib.contextmanager
def running_peer(static_dir: Path | None = None) -> Iterator[RelayPeer]:
    """Start the peer (serving ``static_dir`` too, when given); stop it afterwards."""
    node = require_peer()
    command = [node, str(SERVER)]
    if static_dir is not None:
        command += ["--static", str(static_dir)]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    log: list[str] = []
    drain = threading.Thread(target=_drain, args=(process, log), daemon=True)
    try:
        first = _first_line(process)
        addresses = json.loads(first)
        drain.start()
        yield RelayPeer(addresses["ws"], addresses["tcp"], addresses["api"], process, log)
    finally:
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        if drain.is_alive():
            drain.join(5)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _first_line(process: subprocess.Popen[bytes]) -> str:
    assert process.stdout is not None
    line: list[bytes] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()))  # type: ignore[union-attr]
    reader.start()
    reader.join(START_SECONDS)
    if not line or not line[0]:
        process.kill()
        err = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise RuntimeError(f"the relay test peer did not start: {err[-2000:]}")
    return line[0].decode()


def _drain(process: subprocess.Popen[bytes], log: list[str]) -> None:
    assert process.stderr is not None
    for raw in process.stderr:
        log.append(raw.decode(errors="replace").rstrip())


@pytest.fixture
def relay_peer() -> Iterator[RelayPeer]:
    """A fresh relay test peer for one test."""
    with running_peer() as peer:
        yield peer
