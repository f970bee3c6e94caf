"""A workspace's agents share a window of frames in flight: slots are handed over in the order
they were asked for, a cancelled wait gives up its place (or passes on a slot it was just
handed), and a workspace with nothing in flight holds nothing."""

from __future__ import annotations

import asyncio

from lineup.hub.in_flight import InFlight


def test_slots_go_in_turn_and_a_cancelled_wait_loses_nothing() -> None:
    async def scenario() -> None:
        window = InFlight(2)
        await window.acquire("ws")
        await window.acquire("ws")
        await window.acquire("other")  # another workspace has a window of its own
        order: list[str] = []

        async def take(name: str) -> None:
            await window.acquire("ws")
            order.append(name)

        first = asyncio.create_task(take("first"))
        second = asyncio.create_task(take("second"))
        third = asyncio.create_task(take("third"))
        await asyncio.sleep(0)
        assert (window.held("ws"), window.waiting("ws")) == (2, 3)
        second.cancel()  # gives up its place in line
        await asyncio.sleep(0)
        window.release("ws")
        window.release("ws")
        await asyncio.gather(first, third)
        assert order == ["first", "third"]
        assert (window.held("ws"), window.waiting("ws")) == (2, 0)

        late = asyncio.create_task(take("late"))
        await asyncio.sleep(0)
        window.release("ws")  # handed to the late one…
        late.cancel()  # …which is cancelled before it runs: the slot is passed back
        await asyncio.gather(late, return_exceptions=True)
        assert (window.held("ws"), window.waiting("ws")) == (1, 0)
        window.release("ws")
        window.release("other")
        assert (window.held("ws"), window.held("other"), window.waiting("ws")) == (0, 0, 0)

    asyncio.run(scenario())
