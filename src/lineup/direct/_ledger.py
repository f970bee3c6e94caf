"""What the relay host keeps between runs about the tunnel: in ``tunnel.db`` beside its hub.

* the WuKongIM message ids it has handled (a redelivered message is acknowledged and dropped);
* each tunnelled request by its id: ``started`` before it reaches the hub, then its response
  — a request seen again is answered from here, never run twice; one found ``started``
  without a response (the process died while it ran) is run again only if it is safe (GET,
  HEAD), else answered ``unknown_result``;
* per person, the highest message seq handled: message sync starts after it;
* small values (the conversation that carries WuKongIM text, the hub's event cursor);
* the files it stored with TangSengDaoDao, by SHA-256: the same bytes go up once, whichever
  hub file, artifact or message they come from (and a file a person sent is known by the path
  it came from).

SQLite through the standard library, one short transaction per change: the host handles a
person's messages, not a crowd's, and its writes are tiny.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from lineup.relay.tunnel import Response

_SCHEMA = """
CREATE TABLE IF NOT EXISTS handled (message_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS requests (
  id TEXT PRIMARY KEY, person TEXT NOT NULL, method TEXT NOT NULL, state TEXT NOT NULL,
  status INTEGER, headers TEXT, body TEXT
);
CREATE TABLE IF NOT EXISTS seqs (person TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS uploads (sha256 TEXT PRIMARY KEY, path TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class Seen:
    """A request id met before: its stored response, or None while it has none."""

    method: str
    response: Response | None


class Ledger:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # an answer kept is an answer not redone
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def handled(self, message_id: int | str) -> bool:
        row = self._db.execute("SELECT 1 FROM handled WHERE message_id=?", (str(message_id),))
        return row.fetchone() is not None

    def mark_handled(self, message_id: int | str, person: str, seq: int) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("INSERT OR IGNORE INTO handled VALUES (?)", (str(message_id),))
            if seq:
                self._db.execute(
                    "INSERT INTO seqs VALUES (?, ?) ON CONFLICT(person) DO UPDATE "
                    "SET seq=max(seq, excluded.seq)",
                    (person, seq),
                )

    def last_seq(self, person: str) -> int:
        row = self._db.execute("SELECT seq FROM seqs WHERE person=?", (person,)).fetchone()
        return int(row[0]) if row else 0

    def seen(self, request_id: str, person: str) -> Seen | None:
        row = self._db.execute(
            "SELECT method, state, status, headers, body FROM requests WHERE id=? AND person=?",
            (request_id, person),
        ).fetchone()
        if row is None:
            return None
        method, state, status, headers, body = row
        if state != "done":
            return Seen(method, None)
        return Seen(method, Response(request_id, int(status), json.loads(headers), body))

    def start(self, request_id: str, person: str, method: str) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO requests (id, person, method, state) "
                "VALUES (?, ?, ?, 'started')",
                (request_id, person, method),
            )

    def finish(self, person: str, response: Response) -> None:
        with self._db:
            self._db.execute(
                "UPDATE requests SET state='done', status=?, headers=?, body=? "
                "WHERE id=? AND person=?",
                (
                    response.status,
                    json.dumps(response.headers),
                    response.body,
                    response.id,
                    person,
                ),
            )

    def get(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM kv WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def put(self, key: str, value: str) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))

    def uploaded(self, sha256: str) -> str | None:
        """The TSDD file path these bytes were stored at, if they were."""
        row = self._db.execute("SELECT path FROM uploads WHERE sha256=?", (sha256,)).fetchone()
        return str(row[0]) if row else None

    def remember_upload(self, sha256: str, path: str) -> None:
        """The first path stays: a file is never stored twice, so its links never change."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO uploads VALUES (?, ?)", (sha256, path))
