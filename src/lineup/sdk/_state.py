"""The agent's durable memory: one SQLite file (WAL) in the state directory.

Four things live here, and every change that belongs together is one transaction:

* the **outbox** — every uplink envelope, written before it is sent and removed when the hub
  answers it; resent in its original order, with the same ids, after a reconnect or restart;
* the **cursor** — the last downlink sequence handled, sent as ``lastSequence`` in the hello;
* the **jobs** — each ``task.assigned`` (and each ``message.delivered`` a handler takes) as it
  arrived, so unfinished handlers are resumed at start even if the hub replays nothing;
* the **journal** — the steps each handler took, with their results, so a resumed handler
  fast-forwards instead of acting twice; and the **answers** to interactions, tool calls and
  capability invocations as they arrive.

Calls are synchronous and short; the SDK makes them from its event loop thread only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lineup.protocol.times import now_ms

StepStatus = Literal["pending", "acked", "failed", "done"]
JobKind = Literal["task", "message"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    envelope_id TEXT NOT NULL UNIQUE,
    frame TEXT NOT NULL,
    scope TEXT,
    step INTEGER,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    scope TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    frame TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    outcome TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    cancel_reason TEXT,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS steps (
    scope TEXT NOT NULL,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    result TEXT NOT NULL,
    envelope_id TEXT,
    status TEXT NOT NULL,
    sequence INTEGER,
    error TEXT,
    PRIMARY KEY (scope, step)
);
CREATE TABLE IF NOT EXISTS answers (
    interaction_id TEXT PRIMARY KEY,
    resolved TEXT NOT NULL,
    received_ms INTEGER NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Job:
    scope: str
    kind: JobKind
    frame: str
    done: bool
    cancel_requested: bool
    cancel_reason: str | None


@dataclass(frozen=True, slots=True)
class Step:
    scope: str
    index: int
    kind: str
    name: str
    result: Any
    envelope_id: str | None
    status: StepStatus
    sequence: int | None
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    seq: int
    envelope_id: str
    frame: str
    scope: str | None
    step: int | None


class StateStore:
    """The SQLite file behind one agent; see the module docstring for what it holds."""

    FILE_NAME = "lineup-agent.db"

    def __init__(self, path: Path, agent_id: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
            self._claim(agent_id)
        except BaseException:
            self._db.close()
            raise
        path.chmod(0o600)

    @classmethod
    def in_directory(cls, directory: Path, agent_id: str) -> StateStore:
        return cls(directory / cls.FILE_NAME, agent_id)

    def close(self) -> None:
        self._db.close()

    # --- transactions ---------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _claim(self, agent_id: str) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'agent_id'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta (key, value) VALUES ('agent_id', ?)", (agent_id,))
        elif row[0] != agent_id:
            raise ValueError(
                f"The state in {self.path} belongs to agent {row[0]}, not {agent_id}; "
                "give each agent its own state_dir."
            )

    # --- cursor ---------------------------------------------------------------------------

    @property
    def cursor(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'cursor'").fetchone()
        return int(row[0]) if row else 0

    def _advance(self, sequence: int | None) -> None:
        if sequence is None:
            return
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES ('cursor', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = "
            "CASE WHEN CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER) "
            "THEN excluded.value ELSE value END",
            (str(sequence),),
        )

    def advance(self, sequence: int | None) -> None:
        """Move the cursor forward to ``sequence`` (never back)."""
        if sequence is not None:
            with self._transaction():
                self._advance(sequence)

    def reset_cursor(self, sequence: int) -> None:
        """Set the cursor exactly, forward or back (after ``system.resync_required``)."""
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES ('cursor', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(sequence),),
        )

    # --- jobs -----------------------------------------------------------------------------

    def remember_job(self, sequence: int | None, scope: str, kind: JobKind, frame: str) -> bool:
        """Journal a task or message as it arrives and move the cursor; False if known."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO jobs (scope, kind, frame, created_ms) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope) DO NOTHING",
                (scope, kind, frame, now_ms()),
            )
            self._advance(sequence)
        return cursor.rowcount == 1

    def request_cancel(self, sequence: int | None, scope: str, reason: str | None) -> bool:
        """Flag a pending task as cancel-requested and move the cursor; False if not pending."""
        with self._transaction():
            cursor = self._db.execute(
                "UPDATE jobs SET cancel_requested = 1, cancel_reason = COALESCE(cancel_reason, ?)"
                " WHERE scope = ? AND state = 'pending'",
                (reason, scope),
            )
            self._advance(sequence)
        return cursor.rowcount == 1

    def job(self, scope: str) -> Job | None:
        row = self._db.execute(
            "SELECT scope, kind, frame, state, cancel_requested, cancel_reason FROM jobs "
            "WHERE scope = ?",
            (scope,),
        ).fetchone()
        return None if row is None else _job(row)

    def pending_jobs(self) -> list[Job]:
        rows = self._db.execute(
            "SELECT scope, kind, frame, state, cancel_requested, cancel_reason FROM jobs "
            "WHERE state = 'pending' ORDER BY rowid"
        ).fetchall()
        return [_job(row) for row in rows]

    def finish_job(
        self, scope: str, outcome: str, envelope_id: str | None = None, frame: str | None = None
    ) -> None:
        """Mark a job done and, in the same transaction, queue its final report (if any).

        A done job is never run again, so its journal and answers are dropped; the job row
        stays (without its frame) so that a replayed assignment is recognised.
        """
        with self._transaction():
            self._finish_job(scope, outcome)
            if envelope_id is not None and frame is not None:
                self._enqueue(envelope_id, frame, None, None)

    def end_job(
        self, sequence: int | None, scope: str, outcome: str, final_report_id: str
    ) -> tuple[bool, int]:
        """The hub ended a task itself: the job is done without a report of its own, what is
        still queued for it (its journaled steps' envelopes, its final report) is dropped —
        the hub would refuse each — and the cursor moves. Says whether the job was still
        pending here, and how many queued envelopes were dropped."""
        with self._transaction():
            row = self._db.execute("SELECT state FROM jobs WHERE scope = ?", (scope,)).fetchone()
            dropped = self._db.execute(
                "DELETE FROM outbox WHERE scope = ? OR envelope_id = ?", (scope, final_report_id)
            ).rowcount
            pending = row is not None and row[0] == "pending"
            if pending:
                self._finish_job(scope, outcome)
            self._advance(sequence)
        return pending, dropped

    def _finish_job(self, scope: str, outcome: str) -> None:
        asked = self._db.execute(
            "SELECT result FROM steps WHERE scope = ? AND kind = 'interaction.requested'",
            (scope,),
        ).fetchall()
        for (result,) in asked:
            recorded = json.loads(result)
            if isinstance(recorded, dict) and "interactionId" in recorded:
                self._db.execute(
                    "DELETE FROM answers WHERE interaction_id = ?",
                    (recorded["interactionId"],),
                )
        # tool calls' results are kept as answers under "tool:<call_id>"
        called = self._db.execute(
            "SELECT result FROM steps WHERE scope = ? AND kind = 'tool.call'", (scope,)
        ).fetchall()
        for (result,) in called:
            recorded = json.loads(result)
            if isinstance(recorded, dict) and "callId" in recorded:
                self._db.execute(
                    "DELETE FROM answers WHERE interaction_id = ?",
                    (f"tool:{recorded['callId']}",),
                )
        # invocations' statuses under "cap:<invocation_id>[:<status>]", unless the handler
        # named the invocation itself: then a later invoke with that id finds them here
        invoked = self._db.execute(
            "SELECT result FROM steps WHERE scope = ? AND kind = 'capability.invoke'",
            (scope,),
        ).fetchall()
        for (result,) in invoked:
            recorded = json.loads(result)
            if isinstance(recorded, dict) and not recorded.get("keep"):
                key = f"cap:{recorded['invocationId']}"
                self._db.execute(
                    "DELETE FROM answers WHERE interaction_id IN (?, ?, ?)",
                    (key, f"{key}:waiting_for_approval", f"{key}:accepted"),
                )
        self._db.execute("DELETE FROM steps WHERE scope = ?", (scope,))
        self._db.execute(
            "UPDATE jobs SET state = 'done', outcome = ?, frame = '' WHERE scope = ?",
            (outcome, scope),
        )

    # --- journal --------------------------------------------------------------------------

    def step(self, scope: str, index: int) -> Step | None:
        row = self._db.execute(
            "SELECT scope, step, kind, name, result, envelope_id, status, sequence, error "
            "FROM steps WHERE scope = ? AND step = ?",
            (scope, index),
        ).fetchone()
        if row is None:
            return None
        return Step(
            scope=row[0],
            index=row[1],
            kind=row[2],
            name=row[3],
            result=json.loads(row[4]),
            envelope_id=row[5],
            status=row[6],
            sequence=row[7],
            error=json.loads(row[8]) if row[8] else None,
        )

    def steps_from(self, scope: str, index: int) -> list[Step]:
        """The steps of ``scope`` recorded at ``index`` or later, in order."""
        rows = self._db.execute(
            "SELECT step FROM steps WHERE scope = ? AND step >= ? ORDER BY step",
            (scope, index),
        ).fetchall()
        found = [self.step(scope, row[0]) for row in rows]
        return [s for s in found if s is not None]

    def record_step(
        self,
        scope: str,
        index: int,
        kind: str,
        name: str,
        result: Any,
        envelope_id: str | None = None,
        frame: str | None = None,
    ) -> None:
        """Journal a step and, in the same transaction, queue its envelope (if it has one)."""
        with self._transaction():
            self._insert_step(scope, index, kind, name, result, envelope_id)
            if envelope_id is not None and frame is not None:
                self._enqueue(envelope_id, frame, scope, index)

    def _insert_step(
        self, scope: str, index: int, kind: str, name: str, result: Any, envelope_id: str | None
    ) -> None:
        self._db.execute(
            "INSERT INTO steps (scope, step, kind, name, result, envelope_id, status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                scope,
                index,
                kind,
                name,
                json.dumps(result, separators=(",", ":")),
                envelope_id,
                "pending" if envelope_id is not None else "done",
            ),
        )

    # --- answers --------------------------------------------------------------------------

    def remember_answer(self, sequence: int | None, interaction_id: str, resolved: str) -> bool:
        """Keep an interaction's answer (first one wins) and move the cursor."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO answers (interaction_id, resolved, received_ms) VALUES (?, ?, ?) "
                "ON CONFLICT (interaction_id) DO NOTHING",
                (interaction_id, resolved, now_ms()),
            )
            self._advance(sequence)
        return cursor.rowcount == 1

    def answer(self, interaction_id: str) -> str | None:
        row = self._db.execute(
            "SELECT resolved FROM answers WHERE interaction_id = ?", (interaction_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def enqueue(self, envelope_id: str, frame: str) -> None:
        """Queue an envelope that belongs to no journal step (``tool.cancel``)."""
        with self._transaction():
            self._enqueue(envelope_id, frame, None, None)

    def forget(self, scope: str, answer_keys: list[str]) -> None:
        """Drop a finished scope's steps and answers (an agent-level tool call, once used)."""
        with self._transaction():
            self._db.execute("DELETE FROM steps WHERE scope = ?", (scope,))
            for key in answer_keys:
                self._db.execute("DELETE FROM answers WHERE interaction_id = ?", (key,))

    # --- outbox ---------------------------------------------------------------------------

    def _enqueue(self, envelope_id: str, frame: str, scope: str | None, step: int | None) -> None:
        self._db.execute(
            "INSERT INTO outbox (envelope_id, frame, scope, step, created_ms) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (envelope_id) DO NOTHING",
            (envelope_id, frame, scope, step, now_ms()),
        )

    def first_unsent(self) -> OutboxEntry | None:
        """The oldest envelope the hub has not answered yet."""
        row = self._db.execute(
            "SELECT seq, envelope_id, frame, scope, step FROM outbox ORDER BY seq LIMIT 1"
        ).fetchone()
        return None if row is None else OutboxEntry(*row)

    def outbox_size(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0])

    def settle(
        self,
        entry: OutboxEntry,
        *,
        sequence: int | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """The hub answered ``entry``: drop it from the outbox and record the outcome."""
        with self._transaction():
            self._db.execute("DELETE FROM outbox WHERE seq = ?", (entry.seq,))
            if entry.scope is not None and entry.step is not None:
                self._db.execute(
                    "UPDATE steps SET status = ?, sequence = ?, error = ? "
                    "WHERE scope = ? AND step = ?",
                    (
                        "failed" if error is not None else "acked",
                        sequence,
                        json.dumps(error) if error is not None else None,
                        entry.scope,
                        entry.step,
                    ),
                )


def _job(row: tuple[Any, ...]) -> Job:
    return Job(
        scope=row[0],
        kind=row[1],
        frame=row[2],
        done=row[3] == "done",
        cancel_requested=bool(row[4]),
        cancel_reason=row[5],
    )
