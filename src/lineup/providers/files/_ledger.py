"""The provider's own record of the writes it was asked for, by idempotency key: what makes a
repeat answer the first result without writing again, and what :meth:`receipt` reads.

A write is recorded in two steps around the file's rename: first the intent (the file's
version before, the version it will have after), then the outcome. A write cut off between
them is settled by the file itself when its key comes again: at the ``after`` version it was
done, at the ``before`` version it was not, at any other someone else changed the file.

One SQLite file under the provider's data directory; calls run in worker threads, one
connection each.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS writes (
    instance TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    params_digest TEXT NOT NULL,
    path TEXT NOT NULL,
    before_version TEXT NOT NULL,
    after_version TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('intended', 'done')),
    output TEXT,
    PRIMARY KEY (instance, idempotency_key)
)
"""


@dataclass(frozen=True, slots=True)
class Entry:
    params_digest: str
    path: str
    before: str
    after: str
    state: Literal["intended", "done"]
    output: Mapping[str, Any] | None


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            with conn:
                yield conn
        finally:
            conn.close()

    def entry(self, instance: str, key: str) -> Entry | None:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT params_digest, path, before_version, after_version, state, output"
                " FROM writes WHERE instance = ? AND idempotency_key = ?",
                (instance, key),
            ).fetchone()
        if row is None:
            return None
        output = json.loads(row[5]) if row[5] is not None else None
        return Entry(row[0], row[1], row[2], row[3], row[4], output)

    def intend(
        self, instance: str, key: str, params_digest: str, path: str, before: str, after: str
    ) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO writes (instance, idempotency_key, params_digest, path,"
                " before_version, after_version, state) VALUES (?, ?, ?, ?, ?, ?, 'intended')"
                " ON CONFLICT (instance, idempotency_key) DO UPDATE SET"
                " before_version = excluded.before_version,"
                " after_version = excluded.after_version",
                (instance, key, params_digest, path, before, after),
            )

    def done(self, instance: str, key: str, output: Mapping[str, Any]) -> None:
        with self._connect() as conn:
            conn.execute(
                "UPDATE writes SET state = 'done', output = ?"
                " WHERE instance = ? AND idempotency_key = ?",
                (json.dumps(dict(output), sort_keys=True), instance, key),
            )

    def check(self) -> None:
        """Raise ``sqlite3.Error`` when the ledger cannot be opened."""
        with self._connect() as conn:
            conn.execute("SELECT 1 FROM writes LIMIT 1").fetchall()
