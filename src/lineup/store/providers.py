"""Provider packages in the database: each workspace's installs and lifecycle changes (both
projections of the log), the verified packages by digest, and their health probes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.engine import Connection

from lineup.protocol import facts as f
from lineup.store.handlers import Handler
from lineup.store.handlers import on as _on
from lineup.store.records import _FromRow
from lineup.store.schema import (
    provider_changes,
    provider_health,
    provider_installs,
    provider_packages,
)

if TYPE_CHECKING:
    from lineup.store.eventlog import StoredEvent

HEALTH_KEPT = 20
"""Health probes kept per provider version."""


@dataclass(frozen=True)
class Install(_FromRow):
    workspace_id: str
    provider_id: str
    state: str
    version: str
    digest: str
    source: str
    previous_version: str | None
    previous_digest: str | None
    installed_at: int
    updated_at: int
    updated_by: str


@dataclass(frozen=True)
class Change(_FromRow):
    id: str
    workspace_id: str
    provider_id: str
    action: str
    status: str
    from_version: str | None
    from_digest: str | None
    to_version: str | None
    to_digest: str | None
    surface: dict[str, list[str]]
    contract_passed: bool | None
    reason: str | None
    requested_by: str
    requested_at: int
    decided_by: str | None
    decided_at: int | None
    decision_reason: str | None


@dataclass(frozen=True)
class Package(_FromRow):
    digest: str
    provider_id: str
    version: str
    manifest: dict[str, Any]
    signer: str
    development: bool
    contract: dict[str, Any] | None
    added_at: int


@dataclass(frozen=True)
class Probe(_FromRow):
    provider_id: str
    digest: str
    ok: bool
    detail: str
    checked_at: int


# --- projections -------------------------------------------------------------------------


def _state_changed(
    conn: Connection, event: StoredEvent, fact: f.ProviderStateChangedPayload
) -> None:
    key = and_(
        provider_installs.c.workspace_id == event.workspace_id,
        provider_installs.c.provider_id == fact.provider_id,
    )
    values = {
        "state": fact.state,
        "version": fact.version,
        "digest": fact.digest,
        "source": fact.source,
        "previous_version": fact.previous_version,
        "previous_digest": fact.previous_digest,
        "updated_at": event.recorded_at,
        "updated_by": event.actor,
    }
    if not conn.execute(update(provider_installs).where(key).values(**values)).rowcount:
        conn.execute(
            insert(provider_installs).values(
                workspace_id=event.workspace_id,
                provider_id=fact.provider_id,
                installed_at=event.recorded_at,
                **values,
            )
        )


def _change_requested(
    conn: Connection, event: StoredEvent, fact: f.ProviderChangeRequestedPayload
) -> None:
    conn.execute(
        insert(provider_changes).values(
            id=fact.change_id,
            workspace_id=event.workspace_id,
            provider_id=fact.provider_id,
            action=fact.action,
            status="pending",
            from_version=fact.from_version,
            from_digest=fact.from_digest,
            to_version=fact.to_version,
            to_digest=fact.to_digest,
            surface=fact.surface.model_dump(),
            contract_passed=fact.contract_passed,
            reason=fact.reason,
            requested_by=event.actor,
            requested_at=event.recorded_at,
        )
    )


def _change_decided(
    conn: Connection, event: StoredEvent, fact: f.ProviderChangeDecidedPayload
) -> None:
    conn.execute(
        update(provider_changes)
        .where(provider_changes.c.id == fact.change_id)
        .values(
            status=fact.outcome,
            decided_by=event.actor,
            decided_at=event.recorded_at,
            decision_reason=fact.reason,
        )
    )


HANDLERS: Mapping[str, Handler] = dict(
    [
        _on(f.ProviderStateChangedPayload, _state_changed),
        _on(f.ProviderChangeRequestedPayload, _change_requested),
        _on(f.ProviderChangeDecidedPayload, _change_decided),
    ]
)


# --- reads -------------------------------------------------------------------------------


def installs(conn: Connection, workspace_id: str) -> dict[str, Install]:
    stmt = select(provider_installs).where(provider_installs.c.workspace_id == workspace_id)
    return {str(r.provider_id): Install.from_row(r) for r in conn.execute(stmt)}


def digests_in_use(conn: Connection) -> set[str]:
    """Every digest some workspace runs or could roll back to (each node loads these)."""
    rows = conn.execute(
        select(provider_installs.c.digest, provider_installs.c.previous_digest).where(
            provider_installs.c.state != "removed"
        )
    )
    out: set[str] = set()
    for digest, previous in rows:
        out.add(str(digest))
        if previous:
            out.add(str(previous))
    return out


def change(conn: Connection, workspace_id: str, change_id: str) -> Change | None:
    row = conn.execute(
        select(provider_changes).where(
            provider_changes.c.workspace_id == workspace_id, provider_changes.c.id == change_id
        )
    ).first()
    return None if row is None else Change.from_row(row)


def changes(
    conn: Connection,
    workspace_id: str,
    *,
    provider_id: str | None = None,
    pending_only: bool = False,
    limit: int = 100,
) -> list[Change]:
    stmt = select(provider_changes).where(provider_changes.c.workspace_id == workspace_id)
    if provider_id is not None:
        stmt = stmt.where(provider_changes.c.provider_id == provider_id)
    if pending_only:
        stmt = stmt.where(provider_changes.c.status == "pending")
    stmt = stmt.order_by(
        provider_changes.c.requested_at.desc(), provider_changes.c.id.desc()
    ).limit(limit)
    return [Change.from_row(r) for r in conn.execute(stmt)]


def package(conn: Connection, digest: str) -> Package | None:
    row = conn.execute(
        select(provider_packages).where(provider_packages.c.digest == digest)
    ).first()
    return None if row is None else Package.from_row(row)


def archive(conn: Connection, digest: str) -> bytes | None:
    value = conn.execute(
        select(provider_packages.c.archive).where(provider_packages.c.digest == digest)
    ).scalar()
    return None if value is None else bytes(value)


def put_package(
    conn: Connection,
    *,
    digest: str,
    provider_id: str,
    version: str,
    manifest: dict[str, Any],
    archive: bytes,
    signer: str,
    development: bool,
    now_ms: int,
) -> None:
    if package(conn, digest) is not None:
        return
    conn.execute(
        insert(provider_packages).values(
            digest=digest,
            provider_id=provider_id,
            version=version,
            manifest=manifest,
            archive=archive,
            signer=signer,
            development=development,
            contract=None,
            added_at=now_ms,
        )
    )


def set_contract(conn: Connection, digest: str, report: dict[str, Any]) -> None:
    conn.execute(
        update(provider_packages)
        .where(provider_packages.c.digest == digest)
        .values(contract=report)
    )


def record_probe(
    conn: Connection,
    probe_id: str,
    provider_id: str,
    digest: str,
    ok: bool,
    detail: str,
    now_ms: int,
) -> None:
    conn.execute(
        insert(provider_health).values(
            id=probe_id,
            provider_id=provider_id,
            digest=digest,
            ok=ok,
            detail=detail[:2000],
            checked_at=now_ms,
        )
    )
    keep = (
        select(provider_health.c.id)
        .where(provider_health.c.digest == digest)
        .order_by(provider_health.c.checked_at.desc(), provider_health.c.id.desc())
        .limit(HEALTH_KEPT)
    )
    kept = [r[0] for r in conn.execute(keep)]
    conn.execute(
        delete(provider_health).where(
            provider_health.c.digest == digest, provider_health.c.id.not_in(kept)
        )
    )


def probes(conn: Connection, digest: str) -> list[Probe]:
    stmt = (
        select(provider_health)
        .where(provider_health.c.digest == digest)
        .order_by(provider_health.c.checked_at.desc(), provider_health.c.id.desc())
        .limit(HEALTH_KEPT)
    )
    return [Probe.from_row(r) for r in conn.execute(stmt)]


def executions_in_flight(conn: Connection, workspace_id: str, provider_id: str) -> int:
    """The workspace's executions of ``provider_id``'s capabilities that have not ended."""
    from sqlalchemy import func

    from lineup.store.schema import executions

    return int(
        conn.execute(
            select(func.count())
            .select_from(executions)
            .where(
                executions.c.workspace_id == workspace_id,
                executions.c.status.in_(["started", "accepted"]),
                executions.c.capability.like(provider_id + ".%"),
            )
        ).scalar()
        or 0
    )
