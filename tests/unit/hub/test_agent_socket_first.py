"""Served beneath the middleware stack, the agents' socket still refuses a NUL in its
address before the handshake, as the request guard does for every other socket; anything
else goes to the app."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from lineup.hub.app import AGENT_SOCKET_PATH, AgentSocketFirst


def _scope(path: str, query: bytes = b"", kind: str = "websocket") -> dict[str, Any]:
    return {"type": kind, "path": path, "query_string": query, "headers": [], "root_path": ""}


def test_a_nul_in_the_agent_socket_address_is_refused_and_other_scopes_reach_the_app() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    app.state = SimpleNamespace(hub=SimpleNamespace(settings=SimpleNamespace(direct=None)))  # type: ignore[attr-defined]
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        raise AssertionError("nothing is read from a refused socket")

    served = AgentSocketFirst(app)  # type: ignore[arg-type]
    asyncio.run(served(_scope(AGENT_SOCKET_PATH, b"x=%00"), receive, send))
    assert sent == [{"type": "websocket.close", "code": 1008}] and reached == []
    asyncio.run(served(_scope("/ws/client"), receive, send))
    asyncio.run(served(_scope(AGENT_SOCKET_PATH, kind="http"), receive, send))
    assert reached == ["/ws/client", AGENT_SOCKET_PATH]
