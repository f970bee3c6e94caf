"""The store's write path in-process: durable events/s through ``hub.recorder.run`` with
``commands.task_status_changed``, the job an agent's progress report becomes.

No sockets and no JSON: this measures the recorder, the group-commit writer and the database.
A job's future resolves only after its transaction committed, so every counted event is
durable (SQLite: WAL with synchronous=NORMAL).

    .venv/bin/python bench/bench_writer.py [--database-url URL] [--seconds 5] [--submitters 20]
        [--workspaces 4] [--writer-connections 4]

Without ``--database-url`` the database is a fresh SQLite file in a temporary directory. A
PostgreSQL URL should name an empty, throwaway database: the benchmark migrates it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from lineup.hub import accounts, commands
from lineup.hub.actors import AgentIdentity, Person
from lineup.hub.recorder import Recorder
from lineup.protocol import events as ev
from lineup.protocol import facts
from lineup.protocol.ids import new_id
from lineup.store import Store, User


async def _running_task(
    recorder: Recorder, workspace_id: str, person: Person
) -> tuple[AgentIdentity, str]:
    agent = AgentIdentity(new_id("agent"), workspace_id, "bench agent")
    await recorder.run(
        lambda w: w.append(
            workspace_id,
            facts.AgentPairedPayload(agent_id=agent.agent_id, name=agent.name),
            actor=person.actor,
        )
    )
    created = await recorder.run(
        lambda w: commands.create_task(
            w, person, ev.TaskCreate(title="bench", target_agent_id=agent.agent_id)
        )
    )
    task_id: str = created.value
    accepted = ev.TaskAccepted(task_id=task_id)
    await recorder.run(lambda w: commands.task_accepted(w, agent, new_id("evt"), task_id, accepted))
    return agent, task_id


async def run(
    database_url: str, seconds: float, submitters: int, workspaces: int, writer_connections: int
) -> None:
    store = await Store.open(database_url, writer_connections=writer_connections)
    try:
        await store.migrate()
        recorder = Recorder(store)
        tasks: list[tuple[AgentIdentity, str]] = []
        for n in range(workspaces):
            user = User(new_id("user"), f"{new_id('u')}@bench.test", "bench", created_at=0)
            workspace_id = await recorder.run(
                lambda w, user=user, n=n: accounts.create_workspace(w, user, f"bench {n}")
            )
            person = Person(user.id, user.display_name, workspace_id, "owner")
            for _ in range(submitters // workspaces):
                tasks.append(await _running_task(recorder, workspace_id, person))

        counts = [0] * len(tasks)
        stop = 0.0

        async def submit(index: int) -> None:
            agent, task_id = tasks[index]
            i = 0
            while time.monotonic() < stop:
                i += 1
                change = ev.TaskStatusChanged(status="running", progress=i % 100)
                event_id = new_id("evt")
                await recorder.run(
                    lambda w, change=change, event_id=event_id: commands.task_status_changed(
                        w, agent, event_id, task_id, change
                    ),
                    lane=agent.actor,
                    workspace=agent.workspace_id,
                )
                counts[index] += 1

        before = store.writer_stats
        started = time.monotonic()
        cpu_started = time.process_time()
        stop = started + seconds
        await asyncio.gather(*(submit(i) for i in range(len(tasks))))
        elapsed = time.monotonic() - started
        cpu = time.process_time() - cpu_started
        after = store.writer_stats

        total = sum(counts)
        transactions = after.transactions_committed - before.transactions_committed
        jobs = after.jobs_committed - before.jobs_committed
        label = store.dialect
        print(
            f"[{label}] {total:,} durable events in {elapsed:.1f} s: "
            f"{total / elapsed:,.0f} events/s ({len(tasks)} submitters, {workspaces} workspaces, "
            f"{store.writer_shards} writer shards)"
        )
        print(
            f"[{label}] writer: {transactions:,} transactions, {jobs:,} jobs, "
            f"{jobs / max(transactions, 1):.1f} jobs per transaction, "
            f"largest batch {after.largest_batch}, failed jobs "
            f"{after.jobs_failed - before.jobs_failed}, failed batches "
            f"{after.batches_failed - before.batches_failed}"
        )
        # CPU per event holds still when other work shares the cores; events/s does not.
        print(
            f"[{label}] CPU {cpu * 1e6 / max(total, 1):.0f} µs per event "
            f"(this process, all threads): at most {total / max(cpu, 1e-9):,.0f} events/s "
            "on one core"
        )
        print(f"[{label}] stats: {after}")
        load = os.getloadavg()
        print(f"[{label}] load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--submitters", type=int, default=20)
    parser.add_argument("--workspaces", type=int, default=4)
    parser.add_argument("--writer-connections", type=int, default=4)
    args = parser.parse_args()
    shape = (args.seconds, args.submitters, args.workspaces, args.writer_connections)
    if args.database_url:
        asyncio.run(run(args.database_url, *shape))
        return
    with tempfile.TemporaryDirectory(prefix="lineup-bench-") as home:
        url = f"sqlite:///{Path(home) / 'lineup.db'}"
        asyncio.run(run(url, *shape))


if __name__ == "__main__":
    main()
