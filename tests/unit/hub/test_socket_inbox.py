"""The lean WebSocket protocol's inbox hands the app what arrived, in order, whether the app
was already waiting or not, and a cancelled wait loses nothing."""

from __future__ import annotations

import asyncio

from lineup.hub.cli import _Inbox


def test_the_inbox_hands_over_in_order_and_survives_a_cancelled_wait() -> None:
    async def scenario() -> list[object]:
        inbox = _Inbox()
        got: list[object] = []
        inbox.put_nowait(1)
        inbox.put_nowait(2)
        got += [await inbox.get(), await inbox.get()]
        assert inbox.empty() and inbox.qsize() == 0
        waiting = asyncio.create_task(inbox.get())
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        reader = asyncio.create_task(inbox.get())
        await asyncio.sleep(0)
        inbox.put_nowait(3)
        inbox.put_nowait(4)
        got.append(await reader)
        assert inbox.qsize() == 1
        got.append(await inbox.get())
        return got

    assert asyncio.run(scenario()) == [1, 2, 3, 4]
