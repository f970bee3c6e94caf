"""How fast the event log compacts: a workspace with ``--events`` messages, compacted down to
its latest ``--keep`` (a size policy), on SQLite (and PostgreSQL with ``--pg URL``). Prints
the events deleted per second of the whole pass — the chunks of ``lineup.store.retention``
each in its own write, the keep rules evaluated in every chunk.

    .venv/bin/python bench/bench_compaction.py [--events 100000] [--keep 1000] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from lineup.hub.config import Settings
from lineup.hub.retention import compact
from lineup.protocol import facts
from lineup.protocol.ids import new_id
from lineup.protocol.times import now_ms
from lineup.store import NewEvent, Store, WriteTx

BATCH = 2000


def _event(ws: str, fact: facts.Fact, conversation: str | None = None) -> NewEvent:
    return NewEvent(
        id=new_id("evt"),
        workspace_id=ws,
        type=fact.fact_type,
        actor="user:user_bench",
        payload=fact.recorded(),
        occurred_at=now_ms(),
        conversation_id=conversation,
        fact=fact,
    )


async def fill(store: Store, count: int) -> str:
    ws, conversation = new_id("ws"), new_id("conv")

    def start(tx: WriteTx) -> None:
        tx.append(_event(ws, facts.WorkspaceCreatedPayload(name="bench", workspace_id=ws)))
        created = facts.ConversationCreatedPayload(conversation_id=conversation, title="bench")
        tx.append(_event(ws, created, conversation))

    await store.write(start)
    author = facts.MessageAuthor(kind="user", id="user_bench", name="Bench")
    for first in range(0, count, BATCH):

        def batch(tx: WriteTx, n: int = min(BATCH, count - first)) -> None:
            for i in range(n):
                message = facts.MessageCreatedPayload(
                    message_id=new_id("msg"), author=author, content=f"note {i}"
                )
                tx.append(_event(ws, message, conversation))

        await store.write(batch)
    return ws


async def run(url: str, home: Path, events: int, keep: int) -> None:
    store = await Store.open(url)
    try:
        await store.migrate()
        started = time.perf_counter()
        ws = await fill(store, events)
        filled = time.perf_counter() - started
        settings = Settings(
            database_url=url,
            home=home,
            retention_days=0,
            retention_max_events=keep,
            notify_enabled=False,
        )
        started = time.perf_counter()
        done = [c for c in await compact(store, settings, now_ms()) if c.workspace_id == ws]
        took = time.perf_counter() - started
        (c,) = done
        print(
            f"{url.split(':')[0]}: filled {events} events in {filled:.1f} s; compacted "
            f"{c.deleted} (horizon {c.horizon_before} -> {c.horizon_after}, {c.kept} kept below) "
            f"in {took:.2f} s: {c.deleted / took:,.0f} events/s"
        )
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--keep", type=int, default=1000)
    parser.add_argument("--pg", help="a PostgreSQL URL (an empty database) to measure too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        asyncio.run(run(f"sqlite+aiosqlite:///{home / 'lineup.db'}", home, args.events, args.keep))
        if args.pg:
            asyncio.run(run(args.pg, home, args.events, args.keep))


if __name__ == "__main__":
    main()
