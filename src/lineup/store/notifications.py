"""Storage of notifications: VAPID keys, devices, preferences, the outbox and cursors.

Plain synchronous functions of a ``Connection``. Those that write are meant for a writer job
(``await store.write(lambda tx: f(tx.connection, ...))``). One that names no workspace runs
alone in the cluster (``lineup.store.write_locks``), so a read-then-write here is atomic
across hub nodes too; the worker's produce pass names the workspaces whose cursors it moves
and the outbox rows it adds, which only those workspaces' events make. The unique
``notifications.dedupe_key`` is the last line of defence: even code that skipped that check
could not make a second notification of the same thing for the same person and device.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import JSON, and_, delete, func, insert, or_, select, type_coerce, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from lineup.protocol.ids import new_id
from lineup.store.records import _FromRow
from lineup.store.schema import (
    events,
    memberships,
    notification_attempts,
    notification_cursors,
    notification_preferences,
    notifications,
    push_subscriptions,
    users,
    vapid_keys,
    workspaces,
)
from lineup.store.sealed import Keyring, is_sealed

VAPID_ROW = 1
PENDING = "pending"
DELIVERED = "delivered"
FAILED = "failed"
EXPIRED = "expired"
SKIPPED = "skipped"
EMAIL_TARGET = "email"


def key_hash(*parts: str) -> str:
    """A fixed-length unique key for a logical notification."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


# --- VAPID ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VapidKeys:
    public_key: str
    private_key: str


VAPID_CONTEXT = f"vapid_keys.private_key:{VAPID_ROW}"


def get_vapid(conn: Connection, keyring: Keyring) -> VapidKeys | None:
    row = conn.execute(select(vapid_keys).where(vapid_keys.c.id == VAPID_ROW)).first()
    if row is None:
        return None
    return VapidKeys(row.public_key, keyring.open(row.private_key, VAPID_CONTEXT))


def vapid_public_key(conn: Connection) -> str | None:
    """The public half alone, which browsers need and which is not secret."""
    return conn.execute(
        select(vapid_keys.c.public_key).where(vapid_keys.c.id == VAPID_ROW)
    ).scalar_one_or_none()


def ensure_vapid(conn: Connection, keyring: Keyring, made: VapidKeys, now_ms: int) -> VapidKeys:
    """The stored pair; ``made`` is stored only when there is none yet (first start)."""
    existing = get_vapid(conn, keyring)
    if existing is not None:
        return existing
    conn.execute(
        insert(vapid_keys).values(
            id=VAPID_ROW,
            public_key=made.public_key,
            private_key=keyring.seal(made.private_key, VAPID_CONTEXT),
            created_at=now_ms,
        )
    )
    return made


# --- devices -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Device(_FromRow):
    id: str
    user_id: str
    endpoint: str
    p256dh: str
    auth: str
    label: str
    created_at: int
    last_attempt_at: int | None
    last_delivered_at: int | None
    failing_since: int | None
    last_error: str | None


SEALED_DEVICE_COLUMNS = ("endpoint", "p256dh", "auth")
"""What a push subscription holds that lets anyone push to the device: sealed at rest."""


def _device_context(device_id: str, column: str) -> str:
    return f"push_subscriptions.{column}:{device_id}"


def _sealed_device(keyring: Keyring, device_id: str, values: dict[str, str]) -> dict[str, str]:
    return {k: keyring.seal(v, _device_context(device_id, k)) for k, v in values.items()}


def _open_device(keyring: Keyring, row: Any) -> Device:
    device = Device.from_row(row)
    return replace(
        device,
        endpoint=keyring.open(device.endpoint, _device_context(device.id, "endpoint")),
        p256dh=keyring.open(device.p256dh, _device_context(device.id, "p256dh")),
        auth=keyring.open(device.auth, _device_context(device.id, "auth")),
    )


def save_device(
    conn: Connection,
    keyring: Keyring,
    user_id: str,
    endpoint: str,
    p256dh: str,
    auth: str,
    label: str,
    now_ms: int,
) -> Device:
    """Add a device, or take over the same browser's subscription (same endpoint) afresh."""
    endpoint_hash = key_hash(endpoint)
    existing = conn.execute(
        select(push_subscriptions).where(push_subscriptions.c.endpoint_hash == endpoint_hash)
    ).first()
    if existing is not None:
        device_id = existing.id
        conn.execute(
            update(push_subscriptions)
            .where(push_subscriptions.c.id == device_id)
            .values(
                user_id=user_id,
                label=label,
                failing_since=None,
                last_error=None,
                **_sealed_device(keyring, device_id, {"p256dh": p256dh, "auth": auth}),
            )
        )
    else:
        device_id = new_id("dev")
        conn.execute(
            insert(push_subscriptions).values(
                id=device_id,
                user_id=user_id,
                endpoint_hash=endpoint_hash,
                label=label,
                created_at=now_ms,
                **_sealed_device(
                    keyring, device_id, {"endpoint": endpoint, "p256dh": p256dh, "auth": auth}
                ),
            )
        )
    device = get_device(conn, keyring, device_id)
    assert device is not None
    return device


def get_device(conn: Connection, keyring: Keyring, device_id: str) -> Device | None:
    row = conn.execute(
        select(push_subscriptions).where(push_subscriptions.c.id == device_id)
    ).first()
    return None if row is None else _open_device(keyring, row)


def device_exists(conn: Connection, device_id: str) -> bool:
    return (
        conn.execute(
            select(push_subscriptions.c.id).where(push_subscriptions.c.id == device_id)
        ).first()
        is not None
    )


def device_ids(conn: Connection, user_ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(user_id, device_id)`` of these people's devices, oldest first, nothing opened."""
    if not user_ids:
        return []
    table = push_subscriptions
    stmt = (
        select(table.c.user_id, table.c.id)
        .where(table.c.user_id.in_(list(user_ids)))
        .order_by(table.c.created_at, table.c.id)
    )
    return [(r.user_id, r.id) for r in conn.execute(stmt).all()]


def list_devices(conn: Connection, keyring: Keyring, user_ids: Sequence[str]) -> list[Device]:
    if not user_ids:
        return []
    stmt = (
        select(push_subscriptions)
        .where(push_subscriptions.c.user_id.in_(list(user_ids)))
        .order_by(push_subscriptions.c.created_at, push_subscriptions.c.id)
    )
    return [_open_device(keyring, r) for r in conn.execute(stmt).all()]


def remove_device(conn: Connection, user_id: str, device_id: str) -> bool:
    result = conn.execute(
        delete(push_subscriptions).where(
            push_subscriptions.c.id == device_id, push_subscriptions.c.user_id == user_id
        )
    )
    return bool(result.rowcount)


# --- preferences ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Preferences(_FromRow):
    user_id: str
    events: list[str]
    channels: list[str]
    quiet_start: str | None
    quiet_end: str | None
    time_zone: str
    email_last_attempt_at: int | None = None
    email_last_delivered_at: int | None = None
    email_failing_since: int | None = None
    email_last_error: str | None = None


def get_preferences(conn: Connection, user_ids: Sequence[str]) -> dict[str, Preferences]:
    """The stored preferences of these people (those with none are absent: use defaults)."""
    if not user_ids:
        return {}
    stmt = select(notification_preferences).where(
        notification_preferences.c.user_id.in_(list(user_ids))
    )
    return {r.user_id: Preferences.from_row(r) for r in conn.execute(stmt).all()}


def save_preferences(conn: Connection, prefs: Preferences, now_ms: int) -> None:
    values = {
        "events": list(prefs.events),
        "channels": list(prefs.channels),
        "quiet_start": prefs.quiet_start,
        "quiet_end": prefs.quiet_end,
        "time_zone": prefs.time_zone,
        "updated_at": now_ms,
    }
    table = notification_preferences
    if conn.execute(select(table.c.user_id).where(table.c.user_id == prefs.user_id)).first():
        conn.execute(update(table).where(table.c.user_id == prefs.user_id).values(**values))
    else:
        conn.execute(insert(table).values(user_id=prefs.user_id, **values))


# --- who is in a workspace -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Recipient:
    user_id: str
    email: str
    display_name: str


def workspace_people(conn: Connection, workspace_id: str) -> list[Recipient]:
    stmt = (
        select(users.c.id, users.c.email, users.c.display_name)
        .join(memberships, memberships.c.user_id == users.c.id)
        .where(memberships.c.workspace_id == workspace_id)
        .order_by(users.c.id)
    )
    return [Recipient(r.id, r.email, r.display_name) for r in conn.execute(stmt).all()]


# --- the log cursor ------------------------------------------------------------------------


def workspaces_behind(
    conn: Connection, limit: int = 100, among: Sequence[str] | None = None
) -> list[tuple[str, int, int]]:
    """Workspaces (of ``among``, if given) with events the worker has not read yet:
    ``(workspace_id, cursor, last_sequence)``."""
    cursor = func.coalesce(notification_cursors.c.last_sequence, 0)
    stmt = (
        select(workspaces.c.id, cursor.label("cursor"), workspaces.c.last_sequence)
        .select_from(
            workspaces.outerjoin(
                notification_cursors, notification_cursors.c.workspace_id == workspaces.c.id
            )
        )
        .where(workspaces.c.last_sequence > cursor)
        .order_by(workspaces.c.id)
        .limit(limit)
    )
    if among is not None:
        stmt = stmt.where(workspaces.c.id.in_(list(among)))
    return [(r.id, int(r.cursor), int(r.last_sequence)) for r in conn.execute(stmt).all()]


def first_that_may_notify(
    conn: Connection,
    workspace_id: str,
    after: int,
    until: int,
    *,
    types: Collection[str],
    statuses: Mapping[str, Collection[str]],
) -> int | None:
    """The sequence of the first event in ``after < sequence <= until`` of one of ``types``
    — of a type in ``statuses``, only with one of those statuses in its payload. The worker
    reads from there: what lies before it cannot notify, and is passed over in one statement
    (the database reads the payloads' status) instead of event by event — a busy agent leaves
    thousands of progress reports between two passes. ``until`` keeps the statement short."""
    status = type_coerce(events.c.payload, JSON)["status"].as_string()
    maybe: list[ColumnElement[bool]] = [events.c.type.in_(sorted(set(types) - set(statuses)))]
    maybe += [
        and_(events.c.type == kind, status.in_(sorted(wanted)))
        for kind, wanted in sorted(statuses.items())
    ]
    stmt = select(func.min(events.c.sequence)).where(
        events.c.workspace_id == workspace_id,
        events.c.sequence > after,
        events.c.sequence <= until,
        or_(*maybe),
    )
    first = conn.execute(stmt).scalar()
    return None if first is None else int(first)


def set_cursor(conn: Connection, workspace_id: str, sequence: int, now_ms: int) -> None:
    table = notification_cursors
    done = conn.execute(
        update(table)
        .where(table.c.workspace_id == workspace_id)
        .values(last_sequence=sequence, updated_at=now_ms)
    )
    if not done.rowcount:
        conn.execute(
            insert(table).values(
                workspace_id=workspace_id, last_sequence=sequence, updated_at=now_ms
            )
        )


# --- the outbox ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notification(_FromRow):
    id: str
    dedupe_key: str
    user_id: str
    workspace_id: str
    channel: str
    target: str
    kind: str
    subject_type: str
    subject_id: str
    event_id: str | None
    title: str
    body: str
    link: str
    tag: str
    status: str
    attempts: int
    next_attempt_at: int
    claimed_by: str | None
    claimed_until: int | None
    created_at: int
    updated_at: int
    delivered_at: int | None
    last_error: str | None


def add_notification(conn: Connection, values: dict[str, Any]) -> bool:
    """Queue one notification unless one with its ``dedupe_key`` exists; True if added."""
    key = values["dedupe_key"]
    if conn.execute(select(notifications.c.id).where(notifications.c.dedupe_key == key)).first():
        return False
    conn.execute(insert(notifications).values(id=new_id("ntf"), status=PENDING, **values))
    return True


def claim_due(
    conn: Connection, node: str, now_ms: int, lease_ms: int, limit: int
) -> list[Notification]:
    """Take up to ``limit`` due notifications for ``node`` until ``now_ms + lease_ms``.

    A claim that expired (its node died mid-send) is due again; so a notification is sent
    at least once, and the push ``Topic`` / notification ``tag`` make a resend replace the
    first rather than show twice.
    """
    free = or_(notifications.c.claimed_until.is_(None), notifications.c.claimed_until < now_ms)
    due = conn.execute(
        select(notifications.c.id)
        .where(
            notifications.c.status == PENDING,
            notifications.c.next_attempt_at <= now_ms,
            free,
        )
        .order_by(notifications.c.next_attempt_at, notifications.c.id)
        .limit(limit)
    ).all()
    claimed: list[Notification] = []
    for (notification_id,) in due:
        taken = conn.execute(
            update(notifications)
            .where(
                and_(notifications.c.id == notification_id, notifications.c.status == PENDING, free)
            )
            .values(claimed_by=node, claimed_until=now_ms + lease_ms, updated_at=now_ms)
        )
        if taken.rowcount:
            row = conn.execute(
                select(notifications).where(notifications.c.id == notification_id)
            ).first()
            assert row is not None  # claimed just now, in this transaction
            claimed.append(Notification.from_row(row))
    return claimed


def hold(conn: Connection, notification_id: str, node: str, until_ms: int, now_ms: int) -> None:
    """Put a claimed notification back, due at ``until_ms`` (quiet hours), no attempt counted."""
    conn.execute(
        update(notifications)
        .where(notifications.c.id == notification_id, notifications.c.claimed_by == node)
        .values(next_attempt_at=until_ms, claimed_by=None, claimed_until=None, updated_at=now_ms)
    )


def release_claims(conn: Connection, node: str) -> int:
    """Give back what ``node`` claimed but did not finish (it is stopping): due again now."""
    result = conn.execute(
        update(notifications)
        .where(notifications.c.status == PENDING, notifications.c.claimed_by == node)
        .values(claimed_by=None, claimed_until=None)
    )
    return int(result.rowcount or 0)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt came to. ``outcome``: delivered, retry, failed, expired or skipped."""

    outcome: str
    status_code: int | None = None
    error: str | None = None
    retry_at: int | None = None


def record_attempt(
    conn: Connection, item: Notification, node: str, result: Outcome, now_ms: int
) -> bool:
    """Record the attempt and move the notification on; False if this node's claim was lost
    (another node took the row over after the claim expired: its attempt counts instead)."""
    row = conn.execute(select(notifications).where(notifications.c.id == item.id)).first()
    if row is None or row.status != PENDING or row.claimed_by != node:
        return False
    attempt = row.attempts + (0 if result.outcome == "skipped" else 1)
    status = {
        "delivered": DELIVERED,
        "retry": PENDING,
        "failed": FAILED,
        "expired": EXPIRED,
        "skipped": SKIPPED,
    }[result.outcome]
    conn.execute(
        update(notifications)
        .where(notifications.c.id == item.id)
        .values(
            status=status,
            attempts=attempt,
            next_attempt_at=result.retry_at if result.retry_at is not None else row.next_attempt_at,
            claimed_by=None,
            claimed_until=None,
            updated_at=now_ms,
            delivered_at=now_ms if status == DELIVERED else row.delivered_at,
            last_error=result.error,
        )
    )
    conn.execute(
        insert(notification_attempts).values(
            id=new_id("att"),
            notification_id=item.id,
            user_id=item.user_id,
            channel=item.channel,
            target=item.target,
            attempt=attempt,
            at=now_ms,
            outcome=result.outcome,
            status_code=result.status_code,
            error=result.error,
            node=node,
        )
    )
    if result.outcome != "skipped":
        _record_health(conn, item, result, now_ms)
    if result.outcome == "expired" and item.channel == "push":
        conn.execute(delete(push_subscriptions).where(push_subscriptions.c.id == item.target))
    return True


def _record_health(conn: Connection, item: Notification, result: Outcome, now_ms: int) -> None:
    ok = result.outcome == "delivered"
    if item.channel == "push":
        table = push_subscriptions
        current = conn.execute(
            select(table.c.failing_since).where(table.c.id == item.target)
        ).first()
        if current is None:
            return
        conn.execute(
            update(table)
            .where(table.c.id == item.target)
            .values(
                last_attempt_at=now_ms,
                last_delivered_at=now_ms if ok else table.c.last_delivered_at,
                failing_since=None if ok else (current.failing_since or now_ms),
                last_error=None if ok else result.error,
            )
        )
        return
    prefs = notification_preferences
    current = conn.execute(
        select(prefs.c.email_failing_since).where(prefs.c.user_id == item.user_id)
    ).first()
    if current is None:
        # Nobody saved preferences yet: keep the defaults, so the health has a row to live in.
        save_preferences(conn, default_preferences(item.user_id), now_ms)
        failing_since = None
    else:
        failing_since = current.email_failing_since
    conn.execute(
        update(prefs)
        .where(prefs.c.user_id == item.user_id)
        .values(
            email_last_attempt_at=now_ms,
            email_last_delivered_at=now_ms if ok else prefs.c.email_last_delivered_at,
            email_failing_since=None if ok else (failing_since or now_ms),
            email_last_error=None if ok else result.error,
        )
    )


DEFAULT_EVENTS = ("waiting", "failed")
DEFAULT_CHANNELS = ("push", "email", "browser")
DEFAULT_TIME_ZONE = "UTC"


def _default_prefs() -> tuple[list[str], list[str], None, None, str]:
    return list(DEFAULT_EVENTS), list(DEFAULT_CHANNELS), None, None, DEFAULT_TIME_ZONE


def default_preferences(user_id: str) -> Preferences:
    return Preferences(user_id, *_default_prefs())


def recent_notifications(conn: Connection, user_id: str, limit: int = 20) -> list[Notification]:
    stmt = (
        select(notifications)
        .where(notifications.c.user_id == user_id)
        .order_by(notifications.c.created_at.desc(), notifications.c.id.desc())
        .limit(limit)
    )
    return [Notification.from_row(r) for r in conn.execute(stmt).all()]


def list_notifications(
    conn: Connection, *, user_id: str | None = None, subject_id: str | None = None
) -> list[Notification]:
    """For tests and diagnostics."""
    stmt = select(notifications)
    if user_id is not None:
        stmt = stmt.where(notifications.c.user_id == user_id)
    if subject_id is not None:
        stmt = stmt.where(notifications.c.subject_id == subject_id)
    stmt = stmt.order_by(notifications.c.created_at, notifications.c.id)
    return [Notification.from_row(r) for r in conn.execute(stmt).all()]


@dataclass(frozen=True, slots=True)
class Attempt:
    notification_id: str
    channel: str
    target: str
    attempt: int
    at: int
    outcome: str
    status_code: int | None
    error: str | None
    node: str


def list_attempts(conn: Connection, notification_id: str) -> list[Attempt]:
    stmt = (
        select(notification_attempts)
        .where(notification_attempts.c.notification_id == notification_id)
        .order_by(notification_attempts.c.at, notification_attempts.c.attempt)
    )
    return [
        Attempt(
            r.notification_id,
            r.channel,
            r.target,
            r.attempt,
            r.at,
            r.outcome,
            r.status_code,
            r.error,
            r.node,
        )
        for r in conn.execute(stmt).all()
    ]


def next_due_statement(now_ms: int) -> Any:
    """When the next pending notification that nobody holds falls due (``None``: none)."""
    free = or_(notifications.c.claimed_until.is_(None), notifications.c.claimed_until < now_ms)
    return select(func.min(notifications.c.next_attempt_at)).where(
        notifications.c.status == PENDING, free
    )


# --- keys ----------------------------------------------------------------------------------


def reseal_secrets(conn: Connection, keyring: Keyring) -> int:
    """Open every stored secret, and seal again under the current key what is plain text (a
    database from an older hub) or sealed with an older key; returns how many values changed.

    Raises :class:`~lineup.store.sealed.UnreadableSecret` if any value opens with none of the
    keys: a hub started with the wrong key must stop, not carry on half-blind.
    """
    changed = 0
    row = conn.execute(select(vapid_keys).where(vapid_keys.c.id == VAPID_ROW)).first()
    if row is not None and keyring.needs_resealing(row.private_key):
        plain = _plain_or_open(keyring, row.private_key, VAPID_CONTEXT)
        conn.execute(
            update(vapid_keys)
            .where(vapid_keys.c.id == VAPID_ROW)
            .values(private_key=keyring.seal(plain, VAPID_CONTEXT))
        )
        changed += 1
    elif row is not None:
        keyring.open(row.private_key, VAPID_CONTEXT)
    columns = [push_subscriptions.c[c] for c in SEALED_DEVICE_COLUMNS]
    for device in conn.execute(select(push_subscriptions.c.id, *columns)).all():
        values: dict[str, str] = {}
        for column in SEALED_DEVICE_COLUMNS:
            stored = getattr(device, column)
            context = _device_context(device.id, column)
            if keyring.needs_resealing(stored):
                values[column] = keyring.seal(_plain_or_open(keyring, stored, context), context)
            else:
                keyring.open(stored, context)
        if values:
            conn.execute(
                update(push_subscriptions)
                .where(push_subscriptions.c.id == device.id)
                .values(**values)
            )
            changed += len(values)
    return changed


def _plain_or_open(keyring: Keyring, stored: str, context: str) -> str:
    return keyring.open(stored, context) if is_sealed(stored) else stored
