"""The values people set for layered settings (``lineup.domain.settings``), by level.

Not event-sourced: a setting is configuration, written directly (through ``Store.write``) and
audited by the hub. Each function takes the connection of a ``WriteTx`` or ``Reader``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.engine import Connection

from lineup.store.schema import settings_values as t


def values_at(
    conn: Connection, workspace_id: str, scope_kind: str, scope_id: str
) -> dict[str, Any]:
    """Key → value set at one level (``workspace``, ``project``, ``user``, ``conversation``)."""
    stmt = select(t.c.key, t.c.value).where(
        t.c.workspace_id == workspace_id, t.c.scope_kind == scope_kind, t.c.scope_id == scope_id
    )
    return {row.key: row.value for row in conn.execute(stmt).all()}


def put_value(
    conn: Connection,
    workspace_id: str,
    scope_kind: str,
    scope_id: str,
    key: str,
    value: Any,
    *,
    at: int,
    by: str,
) -> Any:
    """Set (or, with ``None``, clear) one value; returns the value it had before."""
    where = and_(
        t.c.workspace_id == workspace_id,
        t.c.scope_kind == scope_kind,
        t.c.scope_id == scope_id,
        t.c.key == key,
    )
    before = conn.execute(select(t.c.value).where(where)).scalar_one_or_none()
    if value is None:
        conn.execute(delete(t).where(where))
    elif before is None:
        conn.execute(
            insert(t).values(
                workspace_id=workspace_id,
                scope_kind=scope_kind,
                scope_id=scope_id,
                key=key,
                value=value,
                updated_at=at,
                updated_by=by,
            )
        )
    else:
        conn.execute(update(t).where(where).values(value=value, updated_at=at, updated_by=by))
    return before
