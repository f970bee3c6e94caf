"""Slow and silent connections against a real ``lineup serve``: one address cannot use up the
hub's files, and a client that never finishes its headers is let go."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import HubProcess

SOFT, HARD = 64, 256
CAP = 20


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    process = HubProcess(
        tmp_path_factory.mktemp("edge") / "hub",
        None,
        env={"LINEUP_HEADER_TIMEOUT": "1", "LINEUP_MAX_CONNECTIONS_PER_ADDRESS": str(CAP)},
        open_files=(SOFT, HARD),
    )
    process.home.mkdir()
    process.start()
    try:
        yield process
    finally:
        process.stop()


def _open_files_limit(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-files limit in /proc")


def _half_open(port: int, source: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=15, source_address=(source, 0))
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: hub\r\n")  # the headers never end
    return sock


def test_the_hub_raises_its_open_files_limit_to_the_hard_limit(hub: HubProcess):
    assert hub.process is not None
    assert _open_files_limit(hub.process.pid) == (HARD, HARD)


def test_many_half_open_connections_from_one_address_do_not_stop_healthz(hub: HubProcess):
    """More unfinished requests than the hub has files: without a per-address cap the hub
    could accept no new connection, and /healthz would fail."""
    with ExitStack() as stack:
        held = [stack.enter_context(_half_open(hub.port, "127.0.0.1")) for _ in range(HARD + 50)]
        # another address is still served
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(transport=transport, timeout=10) as other:
            assert other.get(f"{hub.url}/healthz").status_code == 200
        # the connections over the cap were told so and closed, not kept
        refused = held[-1].recv(200)
        assert refused.startswith(b"HTTP/1.1 503"), refused


def test_a_connection_that_never_finishes_its_headers_is_closed(hub: HubProcess):
    with _half_open(hub.port, "127.0.0.1") as slow:
        assert slow.recv(100) == b""  # closed by the hub (within the 1 s header timeout)
    with socket.create_connection(("127.0.0.1", hub.port), timeout=15) as silent:
        assert silent.recv(100) == b""  # a connection that sends nothing at all, too


def test_a_64_mib_body_is_refused_before_it_is_read_and_the_connection_closed(hub: HubProcess):
    with socket.create_connection(("127.0.0.1", hub.port), timeout=15) as client:
        client.sendall(
            b"POST /api/pairing/redeem HTTP/1.1\r\nHost: hub\r\n"
            b"Content-Type: application/json\r\nContent-Length: 67108864\r\n\r\n{"
        )
        answer = b""
        while chunk := client.recv(4096):  # until the hub closes the connection
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer
    assert b'"invalid_argument"' in answer
