"""Secrets are stored as the hashes the hub gives; lookups are by hash; single use holds."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from lineup.store import (
    AgentCredentialRecord,
    PairingCodeRecord,
    Reader,
    SessionRecord,
    SessionTokenRecord,
    Store,
    WriteTx,
    auth,
)

from .factory import create_workspace


async def test_password_hashes_are_set_and_replaced(store: Store) -> None:
    await store.write(lambda tx: auth.set_password_hash(tx.connection, "u1", "h1"))
    await store.write(lambda tx: auth.set_password_hash(tx.connection, "u1", "h2"))

    def read(r: Reader) -> None:
        assert auth.get_password_hash(r.connection, "u1") == "h2"
        assert auth.get_password_hash(r.connection, "u2") is None

    await store.read(read)


async def test_session_tokens_are_found_by_hash_with_their_session_and_end_with_it(
    store: Store,
) -> None:
    session = SessionRecord("s1", "u1", "csrf-hash", created_at=1, expires_at=100, last_used_at=1)
    other = SessionRecord("s2", "u1", "csrf-2", created_at=1, expires_at=10, last_used_at=1)
    access = SessionTokenRecord("acc-hash", "s1", "access", created_at=1, expires_at=50)
    refresh = SessionTokenRecord("ref-hash", "s1", "refresh", created_at=1, expires_at=100)
    old = SessionTokenRecord("old-hash", "s2", "refresh", created_at=1, expires_at=10)

    def seed(tx: WriteTx) -> None:
        for record in (session, other):
            auth.insert_session(tx.connection, record)
        for token in (access, refresh, old):
            auth.insert_session_token(tx.connection, token)

    await store.write(seed)

    def read(r: Reader) -> None:
        assert auth.get_session_token(r.connection, "acc-hash") == (access, session)
        assert auth.get_session_token(r.connection, "nope") is None
        # with its person, in one statement: none here, no user row was made
        assert auth.signed_in_by_token(r.connection, "acc-hash") == (access, session, None)
        assert auth.signed_in_by_token(r.connection, "nope") is None
        assert [s.id for s in auth.list_sessions(r.connection, "u1", 5)] == ["s1", "s2"]
        assert [s.id for s in auth.list_sessions(r.connection, "u1", 20)] == ["s1"]

    await store.read(read)

    assert await store.write(lambda tx: auth.spend_refresh_token(tx.connection, "ref-hash", 7))
    assert not await store.write(lambda tx: auth.spend_refresh_token(tx.connection, "ref-hash", 8))
    assert not await store.write(lambda tx: auth.spend_refresh_token(tx.connection, "acc-hash", 8))
    assert await store.write(lambda tx: auth.revoke_session(tx.connection, "s1", 50, "ended"))
    assert not await store.write(lambda tx: auth.revoke_session(tx.connection, "s1", 60, "ended"))
    assert await store.write(lambda tx: auth.delete_expired_sessions(tx.connection, 20)) == 1

    def read_after(r: Reader) -> Any:
        assert auth.get_session_token(r.connection, "old-hash") is None
        return auth.get_session_token(r.connection, "ref-hash")

    found = await store.read(read_after)
    assert found is not None
    token, revoked = found
    assert token.spent_at == 7
    assert (revoked.revoked_at, revoked.ended_reason) == (50, "ended")


async def test_a_token_hash_is_unique(store: Store) -> None:
    token = SessionTokenRecord("same", "s1", "access", created_at=1, expires_at=2)
    await store.write(lambda tx: auth.insert_session_token(tx.connection, token))
    duplicate = SessionTokenRecord("same", "s2", "refresh", created_at=1, expires_at=2)
    with pytest.raises(IntegrityError):
        await store.write(lambda tx: auth.insert_session_token(tx.connection, duplicate))


async def test_a_pairing_code_can_be_used_once_and_not_after_expiry(store: Store) -> None:
    ws = await create_workspace(store)
    code = PairingCodeRecord("p1", ws, "code-hash", "user:u1", created_at=0, expires_at=600_000)
    late = PairingCodeRecord("p2", ws, "late-hash", "user:u1", created_at=0, expires_at=10)
    await store.write(lambda tx: auth.insert_pairing_code(tx.connection, code))
    await store.write(lambda tx: auth.insert_pairing_code(tx.connection, late))

    assert await store.write(lambda tx: auth.record_pairing_failure(tx.connection, "p1")) == 1
    assert await store.write(lambda tx: auth.record_pairing_failure(tx.connection, "p1")) == 2
    assert await store.write(lambda tx: auth.use_pairing_code(tx.connection, "p1", 1_000))
    assert not await store.write(lambda tx: auth.use_pairing_code(tx.connection, "p1", 2_000))
    assert not await store.write(lambda tx: auth.use_pairing_code(tx.connection, "p2", 11))

    def read(r: Reader) -> Any:
        found = auth.get_pairing_code_by_hash(r.connection, "code-hash")
        listed = auth.list_pairing_codes(r.connection, ws)
        return found, listed

    found, listed = await store.read(read)
    assert found is not None
    assert (found.used_at, found.failed_attempts) == (1_000, 2)
    assert [c.id for c in listed] == ["p1", "p2"]


async def test_agent_credentials_are_found_by_hash_and_revoked_per_agent(store: Store) -> None:
    ws = await create_workspace(store)

    def insert_two(tx: WriteTx) -> None:
        for i in range(2):
            credential = AgentCredentialRecord(f"k{i}", "a1", ws, f"secret-{i}", created_at=i)
            auth.insert_agent_credential(tx.connection, credential)

    await store.write(insert_two)
    assert await store.write(lambda tx: auth.revoke_agent_credentials(tx.connection, "a1", 9)) == 2

    def read(r: Reader) -> Any:
        found = auth.get_agent_credential_by_hash(r.connection, "secret-1")
        assert auth.get_agent_credential_by_hash(r.connection, "nope") is None
        return found

    found = await store.read(read)
    assert found is not None and (found.agent_id, found.revoked_at) == ("a1", 9)
