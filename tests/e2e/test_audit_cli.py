"""``lineup audit verify`` and ``lineup audit export`` as an operator runs them, on the
database ``lineup serve`` would use (SQLite under LINEUP_HOME, or LINEUP_DATABASE_URL)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from sqlalchemy import delete, text, update

from lineup.core.audit import AuditEntry, verify
from lineup.core.canonical import canonical
from lineup.store import Store, WriteTx, audit, database_url_from_env
from lineup.store.schema import audit_entries
from tests.e2e.processes import LINEUP

T0 = 1_785_000_000_000


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINEUP, "audit", *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )


def _env(home: Path, database_url: str | None) -> dict[str, str]:
    env = {**os.environ, "LINEUP_HOME": str(home)}
    env.pop("LINEUP_DATABASE_URL", None)
    if database_url is not None:
        env["LINEUP_DATABASE_URL"] = database_url
    return env


async def _with_store(home: Path, database_url: str | None, job: Any) -> Any:
    store = await Store.open(database_url or database_url_from_env(home=home))
    try:
        await store.migrate()
        return await store.write(job)
    finally:
        await store.close()


def _three(tx: WriteTx) -> list[AuditEntry]:
    made = []
    for i, (kind, workspace) in enumerate(
        [("approval.decided", "ws_a"), ("execution.finished", "ws_b"), ("role.changed", None)]
    ):
        made.append(
            audit.append(
                tx.connection,
                kind=kind,
                workspace_id=workspace,
                actor="user:u1",
                subject=f"{kind.split('.')[0]}:x_{i}",
                data={"i": i, "note": "é"},
                now_ms=T0 + i,
            )
        )
    return made


async def test_verify_says_an_intact_chain_is_intact_and_export_writes_it_line_by_line(
    tmp_path: Path, database_url: str | None
) -> None:
    env = _env(tmp_path, database_url)
    empty = _run(env, "verify")
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.startswith("audit chain intact: 0 entries, head sha256:0000")
    made = await _with_store(tmp_path, database_url, _three)

    verified = _run(env, "verify")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.strip() == f"audit chain intact: 3 entries, head {made[-1].hash}"

    exported = _run(env, "export")
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.splitlines()
    assert lines == [canonical(e.record()).decode() for e in made]
    assert verify([AuditEntry.from_record(json.loads(line)) for line in lines]).ok

    out = tmp_path / "ws_b.jsonl"
    one = _run(env, "export", "--workspace", "ws_b", "--out", str(out))
    assert one.returncode == 0, one.stderr
    assert one.stdout.strip() == f"wrote 1 audit entry to {out}"
    assert [json.loads(line)["seq"] for line in out.read_text().splitlines()] == [2]


async def test_verify_exits_1_naming_the_first_entry_changed_in_the_database(
    tmp_path: Path, database_url: str | None
) -> None:
    env = _env(tmp_path, database_url)
    await _with_store(tmp_path, database_url, _three)
    await _with_store(
        tmp_path,
        database_url,
        lambda tx: tx.connection.execute(
            update(audit_entries).where(audit_entries.c.seq == 2).values(data={"i": 9})
        ),
    )
    result = _run(env, "verify")
    assert result.returncode == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith("audit chain broken at seq 2 (changed)")
    assert "kind execution.finished, subject execution:x_1, workspace ws_b" in result.stdout
    assert "1 entry before it is intact" in result.stdout


async def test_verify_exits_1_when_the_last_entry_was_deleted(
    tmp_path: Path, database_url: str | None
) -> None:
    env = _env(tmp_path, database_url)
    await _with_store(tmp_path, database_url, _three)
    await _with_store(
        tmp_path,
        database_url,
        lambda tx: tx.connection.execute(delete(audit_entries).where(audit_entries.c.seq == 3)),
    )
    result = _run(env, "verify")
    assert result.returncode == 1
    assert result.stdout.startswith("audit chain broken at seq 3 (head_mismatch)")
    assert "removed" in result.stdout


async def test_verify_names_an_entry_whose_data_is_no_longer_json(tmp_path: Path) -> None:
    """SQLite keeps JSON as text, so an edit there can leave something that is not JSON."""
    env = _env(tmp_path, None)
    await _with_store(tmp_path, None, _three)
    await _with_store(
        tmp_path,
        None,
        lambda tx: tx.connection.execute(
            text("UPDATE audit_entries SET data = 'not json' WHERE seq = 2")
        ),
    )
    result = _run(env, "verify")
    assert result.returncode == 1
    assert result.stdout.startswith("audit chain broken at seq 2 (changed)")
    assert "cannot be read" in result.stdout
    exported = _run(env, "export")
    assert exported.returncode == 1 and "lineup audit verify" in exported.stderr
