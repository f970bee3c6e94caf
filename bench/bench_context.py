"""How long a (re)started hosted engine session waits for its context: a conversation of
``--turns`` turns as a hosted agent records them (the person's message, the turn's
``context`` entry, a command with its output and exit code, a tool call with its result, the
reply), read back from the hub's store (``HostedRecord.conversation``, the events of the
conversation in pages, streamed output left out), cut into turns (``exchanges_from``) and
built into a context under the default budget (``build_context``). On SQLite, and
PostgreSQL with ``--pg URL`` (an empty database). Prints each part's time.

    .venv/bin/python bench/bench_context.py [--turns 2000] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from lineup.engines.context import Budget, approximate_tokens, build_context, exchanges_from
from lineup.engines.tool_surface import INSTRUCTIONS
from lineup.hub.hosted import HostedRecord
from lineup.protocol import facts
from lineup.protocol.ids import new_id
from lineup.protocol.times import now_ms
from lineup.store import NewEvent, Store, WriteTx

AGENT = "agent_bench"
BATCH = 200  # turns per write


def _event(ws: str, fact: facts.Fact, actor: str, conversation: str) -> NewEvent:
    return NewEvent(
        id=new_id("evt"),
        workspace_id=ws,
        type=fact.fact_type,
        actor=actor,
        payload=fact.recorded(),
        occurred_at=now_ms(),
        conversation_id=conversation,
        fact=fact,
    )


def _turn(ws: str, conversation: str, n: int) -> list[NewEvent]:
    person = facts.MessageAuthor(kind="user", id="user_bench", name="Bench")
    agent = facts.MessageAuthor(kind="agent", id=AGENT, name="Builder")
    message_id = new_id("msg")
    command, tool = new_id("act"), new_id("act")
    me, it = "user:user_bench", f"agent:{AGENT}"
    made = [
        (
            facts.MessageCreatedPayload(
                message_id=message_id,
                author=person,
                content=f"Step {n}: please run the tests and fix what fails in module {n}.",
                target_agent_id=AGENT,
            ),
            me,
        ),
        (
            facts.ActivityStartedPayload(
                activity_id=new_id("act"), kind="context", text="Continues.", reply_to=message_id
            ),
            it,
        ),
        (
            facts.ActivityStartedPayload(activity_id=command, kind="command", command="pytest -q"),
            it,
        ),
        (facts.ActivityOutputPayload(activity_id=command, chunk="." * 2000, offset=0), it),
        (facts.ActivityFinishedPayload(activity_id=command, status="failed", exit_code=1), it),
        (
            facts.ActivityStartedPayload(
                activity_id=tool, kind="tool_call", name="read_file", arguments={"path": "a.py"}
            ),
            it,
        ),
        (
            facts.ActivityFinishedPayload(activity_id=tool, status="succeeded", result="x" * 3000),
            it,
        ),
        (
            facts.MessageCreatedPayload(
                message_id=new_id("msg"),
                author=agent,
                content=f"Fixed module {n}: the import was wrong; the tests pass now. " * 3,
            ),
            it,
        ),
    ]
    return [_event(ws, fact, actor, conversation) for fact, actor in made]


async def fill(store: Store, turns: int) -> tuple[str, str]:
    ws, conversation = new_id("ws"), new_id("conv")

    def start(tx: WriteTx) -> None:
        tx.append(
            _event(ws, facts.WorkspaceCreatedPayload(name="bench", workspace_id=ws), "hub", "-")
        )
        created = facts.ConversationCreatedPayload(
            conversation_id=conversation, title="bench", agent_ids=[AGENT]
        )
        tx.append(_event(ws, created, "user:user_bench", conversation))

    await store.write(start)
    for first in range(0, turns, BATCH):

        def batch(tx: WriteTx, first: int = first) -> None:
            for n in range(first, min(first + BATCH, turns)):
                for event in _turn(ws, conversation, n):
                    tx.append(event)

        await store.write(batch)
    return ws, conversation


async def run(url: str, turns: int) -> None:
    store = await Store.open(url)
    try:
        await store.migrate()
        ws, conversation = await fill(store, turns)
        record = HostedRecord(store)
        started = time.perf_counter()
        events = await record.conversation(ws, conversation)
        read = time.perf_counter() - started
        started = time.perf_counter()
        history, pinned = exchanges_from(events, AGENT)
        cut = time.perf_counter() - started
        started = time.perf_counter()
        snapshot = build_context(
            history,
            estimate=approximate_tokens,
            budget=Budget(),
            instructions=INSTRUCTIONS,
            pinned=pinned,
        )
        built = time.perf_counter() - started
        print(
            f"{url.split(':')[0]}: {turns} turns ({len(events)} events read): read "
            f"{read * 1000:.0f} ms, cut into turns {cut * 1000:.0f} ms, built {built * 1000:.0f} "
            f"ms — {len(snapshot.recent)} recent, {len(snapshot.summarized)} summarized, "
            f"{len(snapshot.omitted)} left out, ~{snapshot.tokens:,} of {snapshot.budget:,} tokens"
        )
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--pg", help="a PostgreSQL URL (an empty database) to measure too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(f"sqlite+aiosqlite:///{Path(tmp) / 'lineup.db'}", args.turns))
        if args.pg:
            asyncio.run(run(args.pg, args.turns))


if __name__ == "__main__":
    main()
