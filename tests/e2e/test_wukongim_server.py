"""Against a real WuKongIM server, when ``LINEUP_WUKONGIM_TEST_URL`` names one.

``LINEUP_WUKONGIM_TEST_URL`` is its client address (``tcp://host:5100`` or
``ws://host:5200``) and ``LINEUP_WUKONGIM_TEST_API`` its HTTP API (``http://host:5001``),
through which the test gives two throwaway users their tokens (``POST /user/token``). None
can be installed where LineUp is built, so here these tests are skipped with that reason.
"""

from __future__ import annotations

import asyncio
import os
import secrets

import httpx
import pytest

from lineup.relay.wukongim.client import Message, connect

URL = os.environ.get("LINEUP_WUKONGIM_TEST_URL", "")
API = os.environ.get("LINEUP_WUKONGIM_TEST_API", "")

pytestmark = pytest.mark.skipif(
    not URL or not API,
    reason="no WuKongIM server: set LINEUP_WUKONGIM_TEST_URL and LINEUP_WUKONGIM_TEST_API",
)


async def _user(client: httpx.AsyncClient) -> tuple[str, str]:
    uid, token = f"lineup-test-{secrets.token_hex(4)}", secrets.token_hex(16)
    answer = await client.post(
        "/user/token", json={"uid": uid, "token": token, "device_flag": 0, "device_level": 1}
    )
    answer.raise_for_status()
    return uid, token


@pytest.mark.parametrize("version", [2, 4])
async def test_a_message_from_one_user_reaches_the_other_decrypted_and_acked(
    version: int,
) -> None:
    async with httpx.AsyncClient(base_url=API, timeout=10) as http:
        (a_uid, a_token), (b_uid, b_token) = await _user(http), await _user(http)
    sender = await connect(URL, a_uid, a_token, version=version, allow_plaintext=True)
    receiver = await connect(URL, b_uid, b_token, version=version, allow_plaintext=True)
    try:
        content = '{"type":1,"content":"hello from LineUp 🙂"}'.encode()
        ack = await sender.send(b_uid, 1, content)
        assert ack.reason_code == 1 and ack.message_id > 0
        message = await asyncio.wait_for(receiver.recv(), 30)
        assert isinstance(message, Message)
        assert message.content == content and message.packet.from_uid == a_uid
        assert message.packet.message_id == ack.message_id
        await receiver.ack(message)
        await sender.ping()
    finally:
        await sender.close()
        await receiver.close()
