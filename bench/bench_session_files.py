"""How long a session file takes to read, import and export: a generated file of ``--entries``
entries (messages, tool calls and results, a branch every 200 entries) read and written by
``lineup.protocol.session_file`` alone, then imported into a hub's store and exported again
(``lineup.hub.session_files``, in-process), on SQLite and, with ``--pg``, on a throwaway
PostgreSQL database. Prints the times and the file's size; checks the export is the file.

    .venv/bin/python bench/bench_session_files.py [--entries 20000] [--pg]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _harness import load_average, throwaway_pg

from lineup.core.canonical import digest
from lineup.hub.accounts import sign_up
from lineup.hub.actors import Person
from lineup.hub.config import Settings
from lineup.hub.session_files import export_conversation, import_session
from lineup.hub.state import HubState
from lineup.protocol.session_file import encode, load
from lineup.store import Store

STAMP = "2026-02-01T10:00:00.000Z"


def session_file(entries: int) -> bytes:
    lines: list[dict[str, Any]] = [
        {"type": "header", "v": 2, "sessionId": "bench", "timestamp": STAMP, "title": "Bench"}
    ]
    parent: str | None = None
    for i in range(entries):
        ident = f"e{i}"
        kind = i % 4
        if i and i % 200 == 0:
            parent = f"e{i - 150}"  # a branch from an earlier entry
        base = {"id": ident, "parentId": parent, "timestamp": STAMP}
        if kind in (0, 1):
            role = "user" if kind == 0 else "assistant"
            text = f"Message {i}: please look at the build log and tell me what failed."
            lines.append(
                {
                    "type": "message",
                    **base,
                    "role": role,
                    "content": [{"type": "text", "text": text}],
                }
            )
        elif kind == 2:
            lines.append(
                {
                    "type": "tool_call",
                    **base,
                    "name": "bash",
                    "argsDigest": "sha256:" + "ab" * 32,
                    "sourceId": f"call_{i}",
                }
            )
        else:
            lines.append(
                {
                    "type": "tool_result",
                    **base,
                    "callId": f"e{i - 1}",
                    "status": "succeeded",
                    "summary": "3 passed, 1 failed",
                    "digest": "sha256:" + "cd" * 32,
                }
            )
        parent = ident
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


async def run(url: str, home: Path, data: bytes, label: str) -> None:
    store = await Store.open(url)
    try:
        await store.migrate()
        settings = Settings(database_url=url, home=home, notify_enabled=False)
        hub = HubState.create(settings, store)
        password = "correct horse battery"
        user, workspace_id = await sign_up(hub, "bench@example.test", password, "B", None)
        person = Person(user.id, user.display_name, workspace_id, "owner")
        started = time.perf_counter()
        made = await import_session(hub, person, data)
        imported = time.perf_counter() - started
        started = time.perf_counter()
        exported = await export_conversation(hub, workspace_id, made.conversation_id, person)
        took = time.perf_counter() - started
        assert exported.content == encode(load(data, digest).session)
        print(
            f"{label}: import {made.entries} entries ({made.messages} messages shown, "
            f"{made.branches} branches) {imported:.2f} s ({made.entries / imported:,.0f} "
            f"entries/s); export {took:.2f} s; load {load_average()}"
        )
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--pg", action="store_true", help="also on a throwaway PostgreSQL")
    args = parser.parse_args()
    data = session_file(args.entries)
    started = time.perf_counter()
    loaded = load(data, digest)
    read = time.perf_counter() - started
    started = time.perf_counter()
    written = encode(loaded.session)
    wrote = time.perf_counter() - started
    print(
        f"file: {args.entries} entries, {len(data) / 1e6:.1f} MB; read {read:.2f} s, "
        f"write {wrote:.2f} s (pure, {len(written) / 1e6:.1f} MB)"
    )
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        await run(f"sqlite:///{home}/bench.db", home, data, "sqlite")
        if args.pg:
            async with throwaway_pg() as url:
                await run(url, home, data, "postgresql")


if __name__ == "__main__":
    asyncio.run(main())
