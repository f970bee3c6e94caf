"""Tasks' rows as a writer transaction has read them, kept current by its own updates.

An agent's progress reports are one job each, and each reads its task's row (to check the
report against the task's state) before appending: on PostgreSQL that read was a round trip
per report, and with a writer shard's transactions one after another, an agent's reports
could commit no faster than their round trips allowed. In a writer transaction the first
read of a task fetches its row and keeps it; every later read in the same transaction gets
the kept row, which the projections update as they update the table (``touched``).

The kept rows are only as good as that rule: every write to ``tasks`` in a writer
transaction goes through :mod:`lineup.store.projections` (or the append's statement, which
reports its touch here), and whatever may have undone or bypassed one — a rolled-back
savepoint, a job that used the raw connection — empties the keep (``forget``). They live in
the connection's ``info`` for one attempt of one batch; outside a writer transaction there
are none and reads go to the table. On PostgreSQL the writer may start a transaction's keep
with the rows its shard's previous commit left, when nobody wrote their workspaces since
(``lineup.store.shard_memory``), and keeps what a transaction did not forget for the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy.engine import Connection

from lineup.store.records import Task

_KEY = "lineup_task_rows"


def keep(conn: Connection, rows: Mapping[tuple[str, str], Task] | None = None) -> None:
    """Start keeping rows for the transaction beginning on ``conn`` (the writer's), from
    ``rows`` known to be current (``lineup.store.shard_memory``)."""
    conn.info[_KEY] = dict(rows) if rows else {}


def stop(conn: Connection) -> dict[tuple[str, str], Task] | None:
    """Stop keeping; returns the rows kept, as current as the transaction left them (each
    was read since the last ``forget`` and kept up with its updates)."""
    kept: dict[tuple[str, str], Task] | None = conn.info.pop(_KEY, None)
    return kept


def forget(conn: Connection) -> None:
    """Something may have changed tasks' rows behind the keep: read them afresh."""
    kept: dict[tuple[str, str], Task] | None = conn.info.get(_KEY)
    if kept:
        kept.clear()


def get(
    conn: Connection, workspace_id: str, task_id: str, read: Callable[[], Task | None]
) -> Task | None:
    """The task's row: the kept one, or ``read()`` (kept if found)."""
    kept: dict[tuple[str, str], Task] | None = conn.info.get(_KEY)
    if kept is None:
        return read()
    key = (workspace_id, task_id)
    task = kept.get(key)
    if task is None:
        task = read()
        if task is not None:
            kept[key] = task
    return task


def touched(conn: Connection, workspace_id: str, task_id: str, values: Mapping[str, Any]) -> None:
    """The task's row was updated with ``values`` (column names, as ``Task``'s fields)."""
    kept: dict[tuple[str, str], Task] | None = conn.info.get(_KEY)
    if not kept:
        return
    key = (workspace_id, task_id)
    task = kept.get(key)
    if task is not None:
        # dataclasses.replace, minus its per-field checks: once per report
        changed = object.__new__(Task)
        changed.__dict__.update(task.__dict__)
        changed.__dict__.update(values)
        kept[key] = changed


__all__ = ["forget", "get", "keep", "stop", "touched"]
