"""The line-delimited JSON-RPC peer the engine drivers share, over in-memory streams."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from lineup.engines.jsonrpc import JsonRpcPeer, PeerGone, RpcError


class Wire:
    """What the peer writes, line by line."""

    def __init__(self) -> None:
        self.lines: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def write(self, data: bytes) -> None:
        for line in data.decode().splitlines():
            self.lines.put_nowait(json.loads(line))

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


def peer_with(handler: Any = None) -> tuple[JsonRpcPeer, asyncio.StreamReader, Wire, list[Any]]:
    reader = asyncio.StreamReader()
    wire = Wire()
    notes: list[Any] = []

    async def no_requests(method: str, params: Mapping[str, Any]) -> Any:
        raise AssertionError(method)

    peer = JsonRpcPeer(
        reader,
        wire,  # type: ignore[arg-type]
        on_notification=lambda m, p: notes.append((m, dict(p))),
        on_request=handler or no_requests,
    )
    peer.start()
    return peer, reader, wire, notes


def feed(reader: asyncio.StreamReader, message: Mapping[str, Any]) -> None:
    reader.feed_data((json.dumps(message) + "\n").encode())


async def test_a_response_answers_its_request_and_notifications_arrive_in_order() -> None:
    peer, reader, wire, notes = peer_with()
    asking = asyncio.create_task(peer.request("thread/start", {"cwd": "/w"}))
    sent = await wire.lines.get()
    assert sent == {"id": 1, "method": "thread/start", "params": {"cwd": "/w"}}
    feed(reader, {"method": "a", "params": {"n": 1}})
    reader.feed_data(b"not json from a stray print\n")
    feed(reader, {"id": 1, "result": {"thread": {"id": "t"}}})
    assert await asyncio.wait_for(asking, 5) == {"thread": {"id": "t"}}
    assert notes == [("a", {"n": 1})]
    assert peer.unparsed == ["not json from a stray print"]


async def test_an_error_response_raises_with_its_code() -> None:
    peer, reader, wire, _ = peer_with()
    asking = asyncio.create_task(peer.request("turn/steer"))
    await wire.lines.get()
    feed(reader, {"id": 1, "error": {"code": -32600, "message": "no active turn"}})
    with pytest.raises(RpcError) as raised:
        await asyncio.wait_for(asking, 5)
    assert raised.value.code == -32600


async def test_a_pending_request_fails_when_the_peer_goes_away() -> None:
    peer, reader, wire, _ = peer_with()
    asking = asyncio.create_task(peer.request("turn/start"))
    await wire.lines.get()
    reader.feed_eof()
    with pytest.raises(PeerGone):
        await asyncio.wait_for(asking, 5)
    assert peer.closed.is_set()


async def test_a_cancelled_incoming_request_is_answered_as_cancelled_or_left_unanswered() -> None:
    entered = asyncio.Event()
    cancelled: list[str] = []

    async def slow(method: str, params: Mapping[str, Any]) -> Any:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(method)
            raise

    peer, reader, wire, _ = peer_with(slow)
    feed(reader, {"id": 0, "method": "item/tool/call", "params": {}})
    await asyncio.wait_for(entered.wait(), 5)
    assert await peer.cancel_incoming() == 1
    assert (await wire.lines.get())["error"]["code"] == -32800
    entered.clear()
    feed(reader, {"id": 1, "method": "item/tool/call", "params": {}})
    await asyncio.wait_for(entered.wait(), 5)
    assert await peer.cancel_incoming(reply=False) == 1
    assert cancelled == ["item/tool/call", "item/tool/call"]
    assert wire.lines.empty()


async def test_an_incoming_request_gets_its_handlers_result() -> None:
    async def answer(method: str, params: Mapping[str, Any]) -> Any:
        return {"echo": params["x"]}

    _peer, reader, wire, _ = peer_with(answer)
    feed(reader, {"id": "r1", "method": "item/tool/call", "params": {"x": 7}})
    assert await asyncio.wait_for(wire.lines.get(), 5) == {"id": "r1", "result": {"echo": 7}}
