"""Passwords, sessions, pairing codes, invitations, agent credentials: kept as hashes only.

These rows are not events (a secret has no place in a replayable log), so they are written
directly — still through ``Store.write`` so SQLite keeps its single writer. The hub chooses
the hashing; lookups are by hash. Each function takes the connection of a ``WriteTx`` or
``Reader`` (``tx.connection``).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sqlalchemy import Table, insert, select, update
from sqlalchemy.engine import Connection, CursorResult, Row

from lineup.store.records import (
    AgentCredentialRecord,
    DeveloperTokenRecord,
    InvitationRecord,
    PairingCodeRecord,
    SessionRecord,
    SessionTokenRecord,
    User,
)
from lineup.store.schema import (
    agent_credentials,
    credentials,
    developer_tokens,
    invitations,
    pairing_codes,
    session_tokens,
    sessions,
    users,
)


def _count(result: CursorResult[object]) -> int:
    return int(result.rowcount)


# --- passwords -----------------------------------------------------------------------------


def set_password_hash(conn: Connection, user_id: str, password_hash: str) -> None:
    result = conn.execute(
        update(credentials)
        .where(credentials.c.user_id == user_id)
        .values(password_hash=password_hash)
    )
    if result.rowcount == 0:
        conn.execute(insert(credentials).values(user_id=user_id, password_hash=password_hash))


def get_password_hash(conn: Connection, user_id: str) -> str | None:
    stmt = select(credentials.c.password_hash).where(credentials.c.user_id == user_id)
    value: str | None = conn.execute(stmt).scalar_one_or_none()
    return value


# --- people's sessions: a family of access and refresh tokens -----------------------------


def insert_session(conn: Connection, session: SessionRecord) -> None:
    conn.execute(insert(sessions).values(**asdict(session)))


def insert_session_token(conn: Connection, token: SessionTokenRecord) -> None:
    conn.execute(insert(session_tokens).values(**asdict(token)))


def get_session(conn: Connection, session_id: str) -> SessionRecord | None:
    row = conn.execute(select(sessions).where(sessions.c.id == session_id)).first()
    return None if row is None else SessionRecord.from_row(row)


def _labelled(table: Table, prefix: str) -> list[Any]:
    return [c.label(f"{prefix}{c.name}") for c in table.c]


def _unlabelled(row: Row[Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in row._mapping.items() if k.startswith(prefix)}


_SIGNED_IN = (
    select(*_labelled(session_tokens, "t_"), *_labelled(sessions, "s_"), *_labelled(users, "u_"))
    .join(sessions, sessions.c.id == session_tokens.c.session_id)
    .outerjoin(users, users.c.id == sessions.c.user_id)
)


def signed_in_by_token(
    conn: Connection, token_hash: str
) -> tuple[SessionTokenRecord, SessionRecord, User | None] | None:
    """The token, its session and the session's person, in one statement (it runs for
    nearly every request, and on PostgreSQL each statement is a round trip); returned even
    when spent, expired or ended: the caller decides, with its own clock."""
    row = conn.execute(_SIGNED_IN.where(session_tokens.c.token_hash == token_hash)).first()
    if row is None:
        return None
    user = _unlabelled(row, "u_")
    return (
        SessionTokenRecord.from_row(_unlabelled(row, "t_")),
        SessionRecord.from_row(_unlabelled(row, "s_")),
        None if user["id"] is None else User.from_row(user),
    )


def get_session_token(
    conn: Connection, token_hash: str
) -> tuple[SessionTokenRecord, SessionRecord] | None:
    """The token and its session (:func:`signed_in_by_token` without the person)."""
    found = signed_in_by_token(conn, token_hash)
    return None if found is None else (found[0], found[1])


def spend_refresh_token(conn: Connection, token_hash: str, at: int) -> bool:
    """Single use by construction: only the caller whose UPDATE flips ``spent_at`` gets True."""
    result = conn.execute(
        update(session_tokens)
        .where(
            session_tokens.c.token_hash == token_hash,
            session_tokens.c.kind == "refresh",
            session_tokens.c.spent_at.is_(None),
        )
        .values(spent_at=at)
    )
    return _count(result) == 1


def touch_session(conn: Connection, session_id: str, at: int) -> None:
    conn.execute(update(sessions).where(sessions.c.id == session_id).values(last_used_at=at))


def list_sessions(conn: Connection, user_id: str, now_ms: int) -> list[SessionRecord]:
    """``user_id``'s live sessions (not ended, not expired), the most recently used first."""
    stmt = (
        select(sessions)
        .where(
            sessions.c.user_id == user_id,
            sessions.c.revoked_at.is_(None),
            sessions.c.expires_at > now_ms,
        )
        .order_by(sessions.c.last_used_at.desc(), sessions.c.id)
    )
    return [SessionRecord.from_row(r) for r in conn.execute(stmt).all()]


def revoke_session(conn: Connection, session_id: str, revoked_at: int, reason: str) -> bool:
    """End a live session, and with it every token of its family."""
    result = conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id, sessions.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at, ended_reason=reason)
    )
    return _count(result) == 1


def revoke_user_sessions(conn: Connection, user_id: str, revoked_at: int, reason: str) -> int:
    result = conn.execute(
        update(sessions)
        .where(sessions.c.user_id == user_id, sessions.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at, ended_reason=reason)
    )
    return _count(result)


def revoke_other_sessions(
    conn: Connection, user_id: str, keep_id: str, revoked_at: int, reason: str
) -> list[str]:
    """End every live session of ``user_id`` but ``keep_id`` (the one asking); their ids."""
    ids = list(
        conn.execute(
            select(sessions.c.id).where(
                sessions.c.user_id == user_id,
                sessions.c.id != keep_id,
                sessions.c.revoked_at.is_(None),
            )
        ).scalars()
    )
    if ids:
        conn.execute(
            update(sessions)
            .where(sessions.c.id.in_(ids), sessions.c.revoked_at.is_(None))
            .values(revoked_at=revoked_at, ended_reason=reason)
        )
    return ids


def delete_expired_sessions(conn: Connection, now_ms: int) -> int:
    """Forget the sessions past their family's end, with their tokens."""
    ended = select(sessions.c.id).where(sessions.c.expires_at <= now_ms)
    conn.execute(session_tokens.delete().where(session_tokens.c.session_id.in_(ended)))
    result = conn.execute(sessions.delete().where(sessions.c.expires_at <= now_ms))
    return _count(result)


# --- pairing codes -------------------------------------------------------------------------


def insert_pairing_code(conn: Connection, code: PairingCodeRecord) -> None:
    conn.execute(insert(pairing_codes).values(**asdict(code)))


def get_pairing_code_by_hash(conn: Connection, code_hash: str) -> PairingCodeRecord | None:
    stmt = select(pairing_codes).where(pairing_codes.c.code_hash == code_hash)
    row = conn.execute(stmt).first()
    return None if row is None else PairingCodeRecord.from_row(row)


def list_pairing_codes(conn: Connection, workspace_id: str) -> list[PairingCodeRecord]:
    stmt = (
        select(pairing_codes)
        .where(pairing_codes.c.workspace_id == workspace_id)
        .order_by(pairing_codes.c.created_at, pairing_codes.c.id)
    )
    return [PairingCodeRecord.from_row(r) for r in conn.execute(stmt).all()]


def use_pairing_code(conn: Connection, code_id: str, used_at: int) -> bool:
    """Single use by construction: only the caller whose UPDATE flips ``used_at`` gets True."""
    result = conn.execute(
        update(pairing_codes)
        .where(
            pairing_codes.c.id == code_id,
            pairing_codes.c.used_at.is_(None),
            pairing_codes.c.expires_at > used_at,
        )
        .values(used_at=used_at)
    )
    return _count(result) == 1


def record_pairing_failure(conn: Connection, code_id: str) -> int:
    """Count a wrong guess against a code; returns the new count (0 if the code is gone)."""
    conn.execute(
        update(pairing_codes)
        .where(pairing_codes.c.id == code_id)
        .values(failed_attempts=pairing_codes.c.failed_attempts + 1)
    )
    stmt = select(pairing_codes.c.failed_attempts).where(pairing_codes.c.id == code_id)
    value: int | None = conn.execute(stmt).scalar_one_or_none()
    return value or 0


# --- invitations ---------------------------------------------------------------------------


def insert_invitation(conn: Connection, invitation: InvitationRecord) -> None:
    conn.execute(insert(invitations).values(**asdict(invitation)))


def get_invitation_by_hash(conn: Connection, code_hash: str) -> InvitationRecord | None:
    """Returned even when used or expired: the caller decides, with its own clock."""
    row = conn.execute(select(invitations).where(invitations.c.code_hash == code_hash)).first()
    return None if row is None else InvitationRecord.from_row(row)


def list_invitations(conn: Connection, workspace_id: str) -> list[InvitationRecord]:
    stmt = (
        select(invitations)
        .where(invitations.c.workspace_id == workspace_id)
        .order_by(invitations.c.created_at, invitations.c.id)
    )
    return [InvitationRecord.from_row(r) for r in conn.execute(stmt).all()]


def use_invitation(conn: Connection, invitation_id: str, user_id: str, used_at: int) -> bool:
    """Single use by construction: only the caller whose UPDATE flips ``used_at`` gets True."""
    result = conn.execute(
        update(invitations)
        .where(
            invitations.c.id == invitation_id,
            invitations.c.used_at.is_(None),
            invitations.c.expires_at > used_at,
        )
        .values(used_at=used_at, used_by=user_id)
    )
    return _count(result) == 1


def revoke_invitation(conn: Connection, workspace_id: str, invitation_id: str, at: int) -> bool:
    """Spend an unused invitation without a user, so its code no longer works."""
    result = conn.execute(
        update(invitations)
        .where(
            invitations.c.id == invitation_id,
            invitations.c.workspace_id == workspace_id,
            invitations.c.used_at.is_(None),
        )
        .values(used_at=at)
    )
    return _count(result) == 1


def any_password_account(conn: Connection) -> bool:
    """Whether anyone can sign in with a password; a new hub's first visitor creates one."""
    return conn.execute(select(credentials.c.user_id).limit(1)).first() is not None


# --- developer tokens ----------------------------------------------------------------------


def insert_developer_token(conn: Connection, token: DeveloperTokenRecord) -> None:
    conn.execute(insert(developer_tokens).values(**asdict(token)))


def get_developer_token_by_hash(conn: Connection, token_hash: str) -> DeveloperTokenRecord | None:
    """Returned even when expired or revoked: the caller decides, with its own clock."""
    stmt = select(developer_tokens).where(developer_tokens.c.token_hash == token_hash)
    row = conn.execute(stmt).first()
    return None if row is None else DeveloperTokenRecord.from_row(row)


def list_developer_tokens(conn: Connection, user_id: str) -> list[DeveloperTokenRecord]:
    stmt = (
        select(developer_tokens)
        .where(developer_tokens.c.user_id == user_id)
        .order_by(developer_tokens.c.created_at, developer_tokens.c.id)
    )
    return [DeveloperTokenRecord.from_row(r) for r in conn.execute(stmt).all()]


def revoke_developer_token(conn: Connection, user_id: str, token_id: str, at: int) -> bool:
    result = conn.execute(
        update(developer_tokens)
        .where(
            developer_tokens.c.id == token_id,
            developer_tokens.c.user_id == user_id,
            developer_tokens.c.revoked_at.is_(None),
        )
        .values(revoked_at=at)
    )
    return _count(result) == 1


def touch_developer_token(conn: Connection, token_id: str, at: int) -> None:
    conn.execute(
        update(developer_tokens).where(developer_tokens.c.id == token_id).values(last_used_at=at)
    )


# --- agent credentials ---------------------------------------------------------------------


def insert_agent_credential(conn: Connection, credential: AgentCredentialRecord) -> None:
    conn.execute(insert(agent_credentials).values(**asdict(credential)))


def get_agent_credential_by_hash(
    conn: Connection, secret_hash: str
) -> AgentCredentialRecord | None:
    """Returned even when revoked: the caller decides."""
    stmt = select(agent_credentials).where(agent_credentials.c.secret_hash == secret_hash)
    row = conn.execute(stmt).first()
    return None if row is None else AgentCredentialRecord.from_row(row)


def revoke_agent_credentials(conn: Connection, agent_id: str, revoked_at: int) -> int:
    result = conn.execute(
        update(agent_credentials)
        .where(agent_credentials.c.agent_id == agent_id, agent_credentials.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at)
    )
    return _count(result)


def revoke_agent_credential(conn: Connection, credential_id: str, revoked_at: int) -> bool:
    result = conn.execute(
        update(agent_credentials)
        .where(agent_credentials.c.id == credential_id, agent_credentials.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at)
    )
    return _count(result) == 1
