"""The default transport against a real ``websockets`` server on the loopback interface."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from http import HTTPStatus
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from lineup.sdk import ConnectionRefusedByHub, TransportClosed, TransportError, WebSocketTransport

GOOD = {"Authorization": "Bearer lnp_good"}


async def _echo_then_refuse(connection: ServerConnection) -> None:
    async for message in connection:
        if message == "revoke":
            await connection.close(4401, "unauthenticated")
            return
        await connection.send(f"echo {message}")


def _check_credential(connection: ServerConnection, request: Request) -> Response | None:
    if request.headers.get("Authorization") == "Bearer lnp_good":
        return None
    body = {
        "error": {
            "code": "unauthenticated",
            "message": "Unknown credential.",
            "details": {"diagnostic": "LNP-AUTH-UNKNOWN", "nextStep": "Pair again."},
        }
    }
    response = connection.respond(HTTPStatus.UNAUTHORIZED, json.dumps(body))
    return response


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    async with serve(
        _echo_then_refuse, "127.0.0.1", 0, process_request=_check_credential
    ) as running:
        yield running


def _url(server: Server) -> str:
    host, port = next(iter(server.sockets)).getsockname()[:2]
    return f"ws://{host}:{port}/ws/agent"


async def test_frames_go_both_ways_with_the_bearer_credential(server: Server):
    connection = await WebSocketTransport(ping_interval=None).connect(_url(server), GOOD)
    try:
        await connection.send("hello")
        assert await connection.recv() == "echo hello"
    finally:
        await connection.close()


async def test_a_refusal_close_code_reaches_recv(server: Server):
    connection = await WebSocketTransport(ping_interval=None).connect(_url(server), GOOD)
    await connection.send("revoke")
    with pytest.raises(TransportClosed) as caught:
        await connection.recv()
    assert caught.value.code == 4401
    await connection.close()


async def test_an_http_401_at_the_upgrade_is_a_refusal_with_the_hubs_diagnostic(server: Server):
    headers: dict[str, Any] = {"Authorization": "Bearer lnp_bad"}
    with pytest.raises(ConnectionRefusedByHub) as caught:
        await WebSocketTransport().connect(_url(server), headers)
    assert caught.value.code == "unauthenticated"
    assert caught.value.diagnostic == "LNP-AUTH-UNKNOWN"


async def test_a_closed_port_is_a_retryable_network_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises((OSError, TransportError)):
        await WebSocketTransport(open_timeout=5).connect(f"ws://127.0.0.1:{port}/ws", GOOD)
