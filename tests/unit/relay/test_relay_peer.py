"""The relay test peer is a WuKongIM server both clients speak to: the Python client as two
users (over TCP and over WebSocket), and the official JS SDK over a real WebSocket."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import httpx
import pytest

from lineup.relay import media
from lineup.relay.wukongim.client import ConnectionRefused, Message, connect
from lineup.relay.wukongim.codec import Flags
from tests.support.relay_agent import CHART, REPORT
from tests.support.relay_peer import HERE, RelayPeer, relay_peer  # noqa: F401
from tests.support.wukongim import SCRIPTS, require_sdk

AMR = b"#!AMR\n" + bytes([0x3C] + [0] * 31) * 60
"""1.2 s of AMR-NB at 12.2 kbit/s (60 frames of 32 bytes, 20 ms each)."""


async def _next_message(client: Any) -> Message:
    async with asyncio.timeout(10):
        while True:
            item = await client.recv()
            if isinstance(item, Message):
                return item


@pytest.mark.parametrize("transport", ["tcp", "ws"])
async def test_a_message_from_one_python_user_reaches_the_other(
    relay_peer: RelayPeer,  # noqa: F811
    transport: str,
) -> None:
    ana, bot = relay_peer.add_user("ana"), relay_peer.add_user("bot")
    url = relay_peer.tcp if transport == "tcp" else relay_peer.ws
    sender = await connect(url, ana.uid, ana.token)
    receiver = await connect(url, bot.uid, bot.token)
    try:
        ack = await sender.send("bot", 1, b'{"type":1,"content":"hello"}')
        assert ack.reason_code == 1 and ack.message_seq == 1
        message = await _next_message(receiver)
        assert json.loads(message.content) == {"type": 1, "content": "hello"}
        assert message.packet.from_uid == "ana" and message.packet.channel_id == "ana"
        assert message.packet.message_id == ack.message_id
        await receiver.ack(message)
    finally:
        await sender.close()
        await receiver.close()


async def test_a_persisted_message_waits_for_its_receiver_and_is_redelivered_until_acked(
    relay_peer: RelayPeer,  # noqa: F811
) -> None:
    ana, bot = relay_peer.add_user("ana"), relay_peer.add_user("bot")
    sender = await connect(relay_peer.tcp, ana.uid, ana.token)
    await sender.send("bot", 1, b'{"type":1,"content":"while you were away"}')
    first = await connect(relay_peer.ws, bot.uid, bot.token)
    kept = await _next_message(first)
    await first.close()  # not acknowledged: it comes again
    second = await connect(relay_peer.ws, bot.uid, bot.token)
    again = await _next_message(second)
    assert again.packet.message_id == kept.packet.message_id
    await second.ack(again)
    await second.ping()  # the RECVACK has been read once its PONG is back
    await second.close()
    assert relay_peer.stats()["pending"]["bot"] == 0
    await sender.close()


async def test_a_no_persist_message_reaches_only_who_is_online(
    relay_peer: RelayPeer,  # noqa: F811
) -> None:
    ana, bot = relay_peer.add_user("ana"), relay_peer.add_user("bot")
    sender = await connect(relay_peer.tcp, ana.uid, ana.token)
    online = await connect(relay_peer.tcp, bot.uid, bot.token)
    ack = await sender.send("bot", 1, b'{"type":3103}', flags=Flags(no_persist=True))
    message = await _next_message(online)
    assert message.packet.flags.no_persist and ack.message_seq == 0
    await online.close()
    assert relay_peer.stats()["pending"].get("bot", 0) == 0
    await sender.close()


async def test_a_wrong_token_is_refused(relay_peer: RelayPeer) -> None:  # noqa: F811
    relay_peer.add_user("ana")
    with pytest.raises(ConnectionRefused):
        await connect(relay_peer.tcp, "ana", "not-the-token")


async def test_the_api_stub_signs_in_names_users_and_syncs_a_channel(
    relay_peer: RelayPeer,  # noqa: F811
) -> None:
    relay_peer.add_user("ana", name="Ana", password="pw-ana-123")
    bot = relay_peer.add_user("bot")
    async with httpx.AsyncClient(base_url=relay_peer.api) as api:
        signed_in = await api.post(
            "/v1/user/login", json={"username": "ana", "password": "pw-ana-123"}
        )
        login = signed_in.json()
        assert login["uid"] == "ana" and login["name"] == "Ana" and login["token"]
        assert (await api.get("/v1/users/bot")).json()["uid"] == "bot"
        route = (await api.get("/v1/users/ana/route")).json()
        assert route["ws_addr"] == relay_peer.ws
        sender = await connect(relay_peer.tcp, bot.uid, bot.token)
        for n in range(3):
            await sender.send("ana", 1, json.dumps({"type": 1, "content": f"m{n}"}).encode())
        await sender.close()
        synced = await api.post(
            "/v1/message/channel/sync",
            headers={"token": login["token"]},
            json={
                "channel_id": "bot",
                "channel_type": 1,
                "start_message_seq": 2,
                "end_message_seq": 0,
                "limit": 10,
                "pull_mode": 1,
            },
        )
        messages = synced.json()["messages"]
        assert [m["message_seq"] for m in messages] == [2, 3]
        assert messages[0]["payload"] == {"type": 1, "content": "m1"}
        assert messages[0]["from_uid"] == "bot" and messages[0]["channel_id"] == "bot"
        upload = await api.post(
            "/v1/file/upload?type=chat&path=/a/b.txt",
            headers={"token": login["token"]},
            files={"file": ("b.txt", b"file body", "text/plain")},
        )
        where = upload.json()["path"]
        assert where == "file/preview/chat/a/b.txt"
        preview = await api.get(f"/v1/{where}")  # no token: previews are public, as in TSDD
        assert preview.status_code == 302 and "/storage/chat/a/b.txt" in preview.headers["location"]
        assert (await api.get(f"/v1/{where}", follow_redirects=True)).content == b"file body"
        for refused in ("/v1/file/upload?type=avatar&path=/x", "/v1/file/upload?type=chat"):
            answer = await api.post(refused, headers={"token": login["token"]},
                                    files={"file": ("x", b"x", "text/plain")})  # fmt: skip
            assert answer.status_code == 400 and answer.json()["msg"]
        assert (await api.post("/v1/file/upload?type=chat&path=/x")).status_code == 401


def _sdk_client(request: dict[str, Any]) -> dict[str, Any]:
    node = require_sdk()
    done = subprocess.run(
        [str(node), str(HERE / "sdk_client.mjs"), str(SCRIPTS / "dist" / "sdk.mjs")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


async def test_the_official_js_sdk_connects_sends_and_receives_over_a_real_websocket(
    relay_peer: RelayPeer,  # noqa: F811
) -> None:
    ana, bot = relay_peer.add_user("ana"), relay_peer.add_user("bot")
    agent = await connect(relay_peer.tcp, bot.uid, bot.token)
    # waiting for Ana before she connects: delivered when she does
    await agent.send("ana", 1, json.dumps({"type": 1, "content": "hello Ana"}).encode())
    request = {
        "ws": relay_peer.ws,
        "uid": ana.uid,
        "token": ana.token,
        "sends": [
            {"to": "bot", "text": "hi from the SDK"},
            {
                "to": "bot",
                "json": {
                    "type": 3101,
                    "id": "r-1",
                    "method": "GET",
                    "path": "/api/me",
                    "headers": {},
                    "body": None,
                },
            },
        ],
        "expect": 1,
    }
    answer = await asyncio.to_thread(_sdk_client, request)
    assert answer["outcome"] == "ok" and answer["connected"] == 1
    assert [a["reasonCode"] for a in answer["sendacks"]] == [1, 1]
    assert answer["received"][0]["text"] == "hello Ana"
    assert answer["received"][0]["fromUID"] == "bot"
    got = [json.loads((await _next_message(agent)).content) for _ in range(2)]
    assert got[0] == {"type": 1, "content": "hi from the SDK"}
    assert got[1]["type"] == 3101 and got[1]["path"] == "/api/me" and got[1]["body"] is None
    await agent.close()


async def test_the_official_js_sdk_is_refused_with_a_wrong_token(
    relay_peer: RelayPeer,  # noqa: F811
) -> None:
    relay_peer.add_user("ana")
    answer = await asyncio.to_thread(
        _sdk_client, {"ws": relay_peer.ws, "uid": "ana", "token": "wrong", "timeoutMs": 5000}
    )
    assert answer["outcome"] == "refused" and answer["connected"] == 2


async def test_the_official_js_sdk_decodes_the_agents_image_voice_and_file_messages_fully(
    relay_peer: RelayPeer,  # noqa: F811
) -> None:
    ana, bot = relay_peer.add_user("ana"), relay_peer.add_user("bot")
    agent = await connect(relay_peer.tcp, bot.uid, bot.token)
    sent = [
        media.describe("file/preview/chat/1/ana/a1.png", "chart.png", "image/png", CHART),
        media.describe("file/preview/chat/1/ana/a2.amr", "note.amr", "audio/amr", AMR),
        media.describe("file/preview/chat/1/ana/a3.md", "report.md", "text/markdown", REPORT),
    ]
    for item in sent:
        await agent.send("ana", 1, media.encode(item))
    request = {"ws": relay_peer.ws, "uid": ana.uid, "token": ana.token, "expect": 3}
    answer = await asyncio.to_thread(_sdk_client, request)
    assert [m["contentType"] for m in answer["received"]] == [2, 4, 8]
    image, voice, file = (m["media"] for m in answer["received"])
    assert image == {"url": sent[0].url, "width": 3, "height": 2}
    assert voice == {"url": sent[1].url, "timeTrad": 1, "waveform": ""}
    assert file == {"url": sent[2].url, "name": "report.md", "size": len(REPORT)}
    await agent.close()
