"""The asyncio client against a loopback WuKongIM peer, over TCP and WebSocket: the
handshake, waiting for answers, acks, pings, the end of a connection."""

from __future__ import annotations

import asyncio

import pytest

from lineup.relay.wukongim import Disconnect, Recvack, encode
from lineup.relay.wukongim.client import ConnectionEnded, ConnectionRefused, Message, connect
from tests.support.wukongim_peer import Serve, tcp_peer, ws_peer

PEERS = pytest.mark.parametrize("serve_peer", [tcp_peer, ws_peer], ids=["tcp", "websocket"])


@PEERS
async def test_a_message_sent_is_acknowledged_and_one_received_is_decrypted_and_acked(
    serve_peer: Serve,
) -> None:
    async with serve_peer() as (url, peers):
        client = await connect(url, "agent-1", "token-1")
        try:
            ack = await client.send("person", 1, b"echo")
            assert (ack.reason_code, ack.message_id) == (1, 1001)
            message = await asyncio.wait_for(client.recv(), 10)
            assert isinstance(message, Message) and message.content == b'{"echo":true}'
            await client.ack(message)
            await asyncio.wait_for(peers[0].got_recvack.wait(), 10)
            assert peers[0].recvacks == [Recvack(77, 5)]
            assert peers[0].sent == [b"echo"]
            assert peers[0].connect is not None and peers[0].connect.uid == "agent-1"
            await client.ping()
        finally:
            await client.close()


@PEERS
async def test_a_refused_token_is_a_final_refusal(serve_peer: Serve) -> None:
    async with serve_peer(refuse=True) as (url, _):
        with pytest.raises(ConnectionRefused) as refused:
            await connect(url, "agent-1", "wrong")
        assert refused.value.reason_code == 2


async def test_a_message_whose_key_does_not_match_is_dropped_not_delivered() -> None:
    async with tcp_peer() as (url, peers):
        client = await connect(url, "agent-1", "token-1")
        try:
            await client.send("person", 1, b"hello")
            await peers[0].push(b"forged", forged=True)
            await peers[0].push(b"genuine")
            message = await asyncio.wait_for(client.recv(), 10)
            assert isinstance(message, Message) and message.content == b"genuine"
            assert client.rejected == 1
        finally:
            await client.close()


async def test_disconnect_from_the_server_ends_the_session_with_its_reason() -> None:
    async with tcp_peer() as (url, peers):
        client = await connect(url, "agent-1", "token-1")
        try:
            await client.send("person", 1, b"hello")
            await peers[0].write(encode(Disconnect(0, "logged in elsewhere")))
            with pytest.raises(ConnectionEnded, match="logged in elsewhere"):
                await asyncio.wait_for(client.recv(), 10)
            with pytest.raises(ConnectionEnded):
                await client.send("person", 1, b"after")
        finally:
            await client.close()


async def test_a_server_that_negotiates_version_4_decides_the_layouts() -> None:
    async with tcp_peer(server_version=4) as (url, peers):
        client = await connect(url, "agent-1", "token-1", version=4)
        try:
            assert client.version == 4 and client.connack.node_id == 7
            await client.send("person", 1, b"echo")  # the peer reads it with expire
            assert peers[0].last_send is not None and peers[0].last_send.channel_id == "person"
            message = await asyncio.wait_for(client.recv(), 10)
            assert isinstance(message, Message) and message.content == b'{"echo":true}'
        finally:
            await client.close()


async def test_a_server_that_does_not_negotiate_is_spoken_to_in_version_2() -> None:
    async with tcp_peer() as (url, _):
        client = await connect(url, "agent-1", "token-1", version=4)
        try:
            assert client.version == 2 and client.connack.server_version is None
        finally:
            await client.close()


async def test_a_server_that_stops_answering_pings_ends_the_session() -> None:
    async with tcp_peer(answer_pings=False) as (url, peers):
        client = await connect(url, "agent-1", "token-1", ping_interval=0.05)
        try:
            with pytest.raises(ConnectionEnded, match="no PONG"):
                await asyncio.wait_for(client.recv(), 10)
            assert peers[0].pings >= 1
        finally:
            await client.close()
