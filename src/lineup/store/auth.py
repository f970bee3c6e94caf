"""Passwords, sessions, pairing codes and agent credentials: kept as hashes, never as secrets.

These rows are not events (a secret has no place in a replayable log), so they are written
directly — still through ``Store.write`` so SQLite keeps its single writer. The hub chooses
the hashing; lookups are by hash. Each function takes the connection of a ``WriteTx`` or
``Reader`` (``tx.connection``).
"""

from __future__ import annotations

from dataclasses import asdict

from sqlalchemy import insert, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncConnection

from lineup.store.records import AgentCredentialRecord, PairingCodeRecord, SessionRecord
from lineup.store.schema import agent_credentials, credentials, pairing_codes, sessions


def _count(result: CursorResult[object]) -> int:
    return int(result.rowcount)


# --- passwords -----------------------------------------------------------------------------


async def set_password_hash(conn: AsyncConnection, user_id: str, password_hash: str) -> None:
    result = await conn.execute(
        update(credentials)
        .where(credentials.c.user_id == user_id)
        .values(password_hash=password_hash)
    )
    if result.rowcount == 0:
        await conn.execute(insert(credentials).values(user_id=user_id, password_hash=password_hash))


async def get_password_hash(conn: AsyncConnection, user_id: str) -> str | None:
    stmt = select(credentials.c.password_hash).where(credentials.c.user_id == user_id)
    value: str | None = (await conn.execute(stmt)).scalar_one_or_none()
    return value


# --- browser sessions ----------------------------------------------------------------------


async def insert_session(conn: AsyncConnection, session: SessionRecord) -> None:
    await conn.execute(insert(sessions).values(**asdict(session)))


async def get_session_by_token_hash(conn: AsyncConnection, token_hash: str) -> SessionRecord | None:
    """Returned even when expired or revoked: the caller decides, with its own clock."""
    row = (await conn.execute(select(sessions).where(sessions.c.token_hash == token_hash))).first()
    return None if row is None else SessionRecord.from_row(row)


async def revoke_session(conn: AsyncConnection, session_id: str, revoked_at: int) -> bool:
    result = await conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id, sessions.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at)
    )
    return _count(result) == 1


async def revoke_user_sessions(conn: AsyncConnection, user_id: str, revoked_at: int) -> int:
    result = await conn.execute(
        update(sessions)
        .where(sessions.c.user_id == user_id, sessions.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at)
    )
    return _count(result)


async def delete_expired_sessions(conn: AsyncConnection, now_ms: int) -> int:
    result = await conn.execute(sessions.delete().where(sessions.c.expires_at <= now_ms))
    return _count(result)


# --- pairing codes -------------------------------------------------------------------------


async def insert_pairing_code(conn: AsyncConnection, code: PairingCodeRecord) -> None:
    await conn.execute(insert(pairing_codes).values(**asdict(code)))


async def get_pairing_code_by_hash(
    conn: AsyncConnection, code_hash: str
) -> PairingCodeRecord | None:
    stmt = select(pairing_codes).where(pairing_codes.c.code_hash == code_hash)
    row = (await conn.execute(stmt)).first()
    return None if row is None else PairingCodeRecord.from_row(row)


async def list_pairing_codes(conn: AsyncConnection, workspace_id: str) -> list[PairingCodeRecord]:
    stmt = (
        select(pairing_codes)
        .where(pairing_codes.c.workspace_id == workspace_id)
        .order_by(pairing_codes.c.created_at, pairing_codes.c.id)
    )
    return [PairingCodeRecord.from_row(r) for r in (await conn.execute(stmt)).all()]


async def use_pairing_code(conn: AsyncConnection, code_id: str, used_at: int) -> bool:
    """Single use by construction: only the caller whose UPDATE flips ``used_at`` gets True."""
    result = await conn.execute(
        update(pairing_codes)
        .where(
            pairing_codes.c.id == code_id,
            pairing_codes.c.used_at.is_(None),
            pairing_codes.c.expires_at > used_at,
        )
        .values(used_at=used_at)
    )
    return _count(result) == 1


async def record_pairing_failure(conn: AsyncConnection, code_id: str) -> int:
    """Count a wrong guess against a code; returns the new count (0 if the code is gone)."""
    await conn.execute(
        update(pairing_codes)
        .where(pairing_codes.c.id == code_id)
        .values(failed_attempts=pairing_codes.c.failed_attempts + 1)
    )
    stmt = select(pairing_codes.c.failed_attempts).where(pairing_codes.c.id == code_id)
    value: int | None = (await conn.execute(stmt)).scalar_one_or_none()
    return value or 0


# --- agent credentials ---------------------------------------------------------------------


async def insert_agent_credential(conn: AsyncConnection, credential: AgentCredentialRecord) -> None:
    await conn.execute(insert(agent_credentials).values(**asdict(credential)))


async def get_agent_credential_by_hash(
    conn: AsyncConnection, secret_hash: str
) -> AgentCredentialRecord | None:
    """Returned even when revoked: the caller decides."""
    stmt = select(agent_credentials).where(agent_credentials.c.secret_hash == secret_hash)
    row = (await conn.execute(stmt)).first()
    return None if row is None else AgentCredentialRecord.from_row(row)


async def revoke_agent_credentials(conn: AsyncConnection, agent_id: str, revoked_at: int) -> int:
    result = await conn.execute(
        update(agent_credentials)
        .where(agent_credentials.c.agent_id == agent_id, agent_credentials.c.revoked_at.is_(None))
        .values(revoked_at=revoked_at)
    )
    return _count(result)
