"""One plant's SQLite database: resources, calendars, orders and operations, the published
schedule versions, trial schedules (drafts) and publish jobs.

Every method is synchronous and opens its own connection: the provider runs them in a worker
thread (``asyncio.to_thread``), and a connection must stay on the thread that opened it.
Writes that read before they write take SQLite's write lock first (``BEGIN IMMEDIATE``), so
two publish jobs cannot both see version N and both publish N+1.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._planner import Operation, Order

SCHEMA = """
CREATE TABLE IF NOT EXISTS resources (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calendars (
    resource_id TEXT NOT NULL REFERENCES resources(id),
    day TEXT NOT NULL,
    available_minutes INTEGER NOT NULL CHECK (available_minutes >= 0),
    PRIMARY KEY (resource_id, day)
);
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    product TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    due_date TEXT NOT NULL,
    priority INTEGER NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS operations (
    order_id TEXT NOT NULL REFERENCES orders(id),
    sequence INTEGER NOT NULL,
    resource_id TEXT NOT NULL REFERENCES resources(id),
    duration_minutes INTEGER NOT NULL CHECK (duration_minutes > 0),
    PRIMARY KEY (order_id, sequence)
);
CREATE TABLE IF NOT EXISTS schedules (
    version INTEGER PRIMARY KEY,
    published_at TEXT NOT NULL,
    assignments TEXT NOT NULL,
    draft_id TEXT,
    published_by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS drafts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    based_on_version INTEGER NOT NULL,
    draft TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key TEXT NOT NULL UNIQUE,
    execution_id TEXT NOT NULL,
    draft_id TEXT NOT NULL,
    based_on_version INTEGER NOT NULL,
    expected_version TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    result TEXT
);
"""

TABLES = ("resources", "calendars", "orders", "operations", "schedules", "drafts", "jobs")


class MissingDatabase(Exception):
    """The instance's database file is not there (never initialised)."""


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    idempotency_key: str
    draft_id: str
    based_on_version: int
    expected_version: str | None
    status: str
    result: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class PlantData:
    resources: dict[str, str]
    calendars: dict[str, dict[str, int]]
    days: list[str]
    orders: list[Order]
    operations: list[Operation]


def draft_id(seq: int) -> str:
    return f"draft-{seq}"


def job_id(seq: int) -> str:
    return f"job-{seq}"


def _seq(identifier: str, prefix: str) -> int | None:
    head, _, tail = identifier.partition("-")
    if head != prefix or not tail.isdigit():
        return None
    return int(tail)


class PlantStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self, *, create: bool = False) -> Iterator[sqlite3.Connection]:
        if not create and not self.path.exists():
            raise MissingDatabase(str(self.path))
        mode = "rwc" if create else "rw"
        conn = sqlite3.connect(
            f"file:{self.path}?mode={mode}", uri=True, isolation_level=None, timeout=5.0
        )
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def _write(self, *, create: bool = False) -> Iterator[sqlite3.Connection]:
        with self._connect(create=create) as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- schema and health ------------------------------------------------------------------

    def initialize(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect(create=True) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(SCHEMA)

    def missing_tables(self) -> list[str]:
        with self._connect() as conn:
            present = {
                row["name"]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        return [table for table in TABLES if table not in present]

    def is_empty(self) -> bool:
        with self._connect() as conn:
            return conn.execute("SELECT 1 FROM resources LIMIT 1").fetchone() is None

    def load_plant(
        self,
        *,
        resources: Mapping[str, str],
        calendars: Mapping[str, Mapping[str, int]],
        orders: list[Order],
        operations: list[Operation],
    ) -> None:
        with self._write() as conn:
            conn.executemany("INSERT INTO resources VALUES (?, ?)", resources.items())
            conn.executemany(
                "INSERT INTO calendars VALUES (?, ?, ?)",
                [(r, d, m) for r, days in calendars.items() for d, m in days.items()],
            )
            conn.executemany(
                "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
                [(o.id, o.product, o.quantity, o.due_date, o.priority, o.status) for o in orders],
            )
            conn.executemany(
                "INSERT INTO operations VALUES (?, ?, ?, ?)",
                [(p.order_id, p.sequence, p.resource_id, p.duration_minutes) for p in operations],
            )

    def publish_initial(self, assignments: list[dict[str, Any]], published_at: str) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO schedules VALUES (1, ?, ?, NULL, 'seed')",
                (published_at, json.dumps(assignments)),
            )

    # -- reads ------------------------------------------------------------------------------

    def query_orders(
        self, *, status: str | None, due_before: str | None, limit: int
    ) -> list[Order]:
        clauses, args = [], []
        if status is not None:
            clauses.append("status = ?")
            args.append(status)
        if due_before is not None:
            clauses.append("due_date < ?")
            args.append(due_before)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT * FROM orders {where} ORDER BY due_date, priority, id LIMIT ?",  # noqa: S608
                [*args, limit],
            ).fetchall()
        return [_order(row) for row in rows]

    def plant(self) -> PlantData:
        with self._connect() as conn:
            resources = {
                row["id"]: row["name"]
                for row in conn.execute("SELECT id, name FROM resources ORDER BY id")
            }
            calendars: dict[str, dict[str, int]] = {r: {} for r in resources}
            days: set[str] = set()
            for row in conn.execute("SELECT * FROM calendars"):
                calendars[row["resource_id"]][row["day"]] = row["available_minutes"]
                days.add(row["day"])
            orders = [_order(row) for row in conn.execute("SELECT * FROM orders ORDER BY id")]
            operations = [
                Operation(
                    row["order_id"], row["sequence"], row["resource_id"], row["duration_minutes"]
                )
                for row in conn.execute("SELECT * FROM operations ORDER BY order_id, sequence")
            ]
        return PlantData(resources, calendars, sorted(days), orders, operations)

    def published(self) -> tuple[int, list[dict[str, Any]]]:
        """The current version and its assignments; version 0 and none before any publish."""
        with self._connect() as conn:
            return _published(conn)

    def add_draft(self, draft: Mapping[str, Any]) -> str:
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO drafts (based_on_version, draft) VALUES (?, '')",
                (draft["basedOnVersion"],),
            )
            assert cursor.lastrowid is not None
            identifier = draft_id(cursor.lastrowid)
            conn.execute(
                "UPDATE drafts SET draft = ? WHERE seq = ?",
                (json.dumps({"draftId": identifier, **draft}), cursor.lastrowid),
            )
        return identifier

    def draft(self, identifier: str) -> dict[str, Any] | None:
        seq = _seq(identifier, "draft")
        if seq is None:
            return None
        with self._connect() as conn:
            row = conn.execute("SELECT draft FROM drafts WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else dict(json.loads(row["draft"]))

    # -- publish jobs -----------------------------------------------------------------------

    def job_by_key(self, idempotency_key: str) -> Job | None:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT * FROM jobs WHERE idempotency_key = ?", (idempotency_key,)
            ).fetchone()
        return None if row is None else _job(row)

    def job(self, identifier: str) -> Job | None:
        seq = _seq(identifier, "job")
        if seq is None:
            return None
        with self._connect() as conn:
            row = conn.execute("SELECT * FROM jobs WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else _job(row)

    def record_job(
        self,
        *,
        idempotency_key: str,
        execution_id: str,
        draft_id: str,
        based_on_version: int,
        expected_version: str | None,
    ) -> tuple[Job, bool]:
        """The job of ``idempotency_key``: the one already recorded (``False``), or a new
        running one (``True``)."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT * FROM jobs WHERE idempotency_key = ?", (idempotency_key,)
            ).fetchone()
            if row is not None:
                return _job(row), False
            cursor = conn.execute(
                "INSERT INTO jobs (idempotency_key, execution_id, draft_id, based_on_version,"
                " expected_version, status) VALUES (?, ?, ?, ?, ?, 'running')",
                (idempotency_key, execution_id, draft_id, based_on_version, expected_version),
            )
            row = conn.execute("SELECT * FROM jobs WHERE seq = ?", (cursor.lastrowid,)).fetchone()
            return _job(row), True

    def perform_job(self, identifier: str, published_at: str) -> Job:
        """Run a running job to its end: publish its draft as the next version if nothing was
        published since the draft's version (and the version the person approved), else fail
        it as stale. A job that already ended is returned as it is."""
        seq = _seq(identifier, "job")
        assert seq is not None
        with self._write() as conn:
            job = _job(conn.execute("SELECT * FROM jobs WHERE seq = ?", (seq,)).fetchone())
            if job.status != "running":
                return job
            current, _ = _published(conn)
            row = conn.execute(
                "SELECT draft FROM drafts WHERE seq = ?", (_seq(job.draft_id, "draft"),)
            ).fetchone()
            stale = job.based_on_version != current or (
                job.expected_version is not None and job.expected_version != str(current)
            )
            if row is None:
                status, result = "failed", _failure("not_found", f"{job.draft_id} is not there.")
            elif stale:
                approved = job.expected_version or str(job.based_on_version)
                status, result = (
                    "failed",
                    _failure(
                        "conflict",
                        f"The trial schedule is stale: it was made against version {approved},"
                        f" and version {current} has been published since. Make a new trial"
                        " schedule.",
                    ),
                )
            else:
                version = current + 1
                conn.execute(
                    "INSERT INTO schedules VALUES (?, ?, ?, ?, ?)",
                    (
                        version,
                        published_at,
                        json.dumps(json.loads(row["draft"])["assignments"]),
                        job.draft_id,
                        job.idempotency_key,
                    ),
                )
                status, result = (
                    "succeeded",
                    {
                        "publishedVersion": version,
                        "draftId": job.draft_id,
                        "publishedAt": published_at,
                    },
                )
            conn.execute(
                "UPDATE jobs SET status = ?, result = ? WHERE seq = ?",
                (status, json.dumps(result), seq),
            )
            return Job(
                job.id,
                job.idempotency_key,
                job.draft_id,
                job.based_on_version,
                job.expected_version,
                status,
                result,
            )


def _failure(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _published(conn: sqlite3.Connection) -> tuple[int, list[dict[str, Any]]]:
    row = conn.execute(
        "SELECT version, assignments FROM schedules ORDER BY version DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return 0, []
    return int(row["version"]), list(json.loads(row["assignments"]))


def _order(row: sqlite3.Row) -> Order:
    return Order(
        row["id"], row["product"], row["quantity"], row["due_date"], row["priority"], row["status"]
    )


def _job(row: sqlite3.Row) -> Job:
    return Job(
        job_id(row["seq"]),
        row["idempotency_key"],
        row["draft_id"],
        row["based_on_version"],
        row["expected_version"],
        row["status"],
        None if row["result"] is None else dict(json.loads(row["result"])),
    )
