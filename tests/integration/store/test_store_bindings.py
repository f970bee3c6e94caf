"""People's account bindings and OAuth flows in the store: each secret opens only in its own
row, a flow is taken once, and a key rotation seals both again under the new key."""

from __future__ import annotations

from typing import Any

import pytest

from lineup.store import Reader, Store, WriteTx
from lineup.store import bindings as stored
from lineup.store.sealed import Keyring, UnreadableSecret, new_key_text
from tests.integration.store.factory import T0, create_workspace

OLD, NEW = new_key_text(), new_key_text()


def _binding(ws: str, user: str, sealed: str) -> dict[str, Any]:
    return {
        "workspace_id": ws,
        "user_id": user,
        "provider": "crm",
        "instance": "acme",
        "auth_kind": "oauth",
        "sealed": sealed,
        "account": None,
        "expires_at": T0 + 60_000,
        "now_ms": T0,
    }


async def test_a_binding_secret_opens_only_in_its_own_row(store: Store) -> None:
    ws = await create_workspace(store)
    keyring = Keyring.from_texts([OLD])
    mine = keyring.seal('{"credentials": {}}', store_context(ws, "ana"))
    await store.write(lambda tx: store_put(tx, _binding(ws, "ana", mine)))
    await store.write(lambda tx: store_put(tx, _binding(ws, "bo", mine)))  # copied to Bo's row
    bo = await store.read(lambda r: store_get(r, ws, "bo"))
    assert bo is not None and bo.sealed == mine
    with pytest.raises(UnreadableSecret):
        keyring.open(mine, store_context(ws, "bo"))
    assert keyring.open(mine, store_context(ws, "ana")) == '{"credentials": {}}'


async def test_an_expired_binding_keeps_no_secret_and_unbinding_removes_the_row(
    store: Store,
) -> None:
    ws = await create_workspace(store)
    await store.write(lambda tx: store_put(tx, _binding(ws, "ana", "lus1.x.y")))
    expire = lambda tx: stored.expire_binding(  # noqa: E731
        tx.connection, ws, "ana", "crm", "acme", "refresh_refused", T0 + 1
    )
    assert await store.write(expire) is True
    assert await store.write(expire) is False  # already expired: nothing to do
    row = await store.read(lambda r: store_get(r, ws, "ana"))
    assert row is not None and row.status == "expired" and row.sealed is None
    assert row.expired_reason == "refresh_refused"
    gone = lambda tx: stored.delete_binding(tx.connection, ws, "ana", "crm", "acme")  # noqa: E731
    assert await store.write(gone) is True
    assert await store.read(lambda r: store_get(r, ws, "ana")) is None


async def test_a_flow_is_taken_once(store: Store) -> None:
    ws = await create_workspace(store)
    flow = stored.Flow("h" * 64, ws, "ana", "crm", "acme", "lus1.x.y", "/settings", T0, T0 + 1)
    await store.write(lambda tx: stored.put_flow(tx.connection, flow))
    first = await store.write(lambda tx: stored.take_flow(tx.connection, "h" * 64))
    again = await store.write(lambda tx: stored.take_flow(tx.connection, "h" * 64))
    assert first == flow and again is None


async def test_rotating_the_keys_seals_bindings_and_flows_again(store: Store) -> None:
    ws = await create_workspace(store)
    old = Keyring.from_texts([OLD])
    sealed = old.seal("secret", store_context(ws, "ana"))
    await store.write(lambda tx: store_put(tx, _binding(ws, "ana", sealed)))
    flow = stored.Flow(
        "f" * 64, ws, "ana", "crm", "acme", old.seal("verifier", stored.flow_context("f" * 64)),
        "/settings", T0, T0 + 600_000,
    )  # fmt: skip
    await store.write(lambda tx: stored.put_flow(tx.connection, flow))

    rotated = Keyring.from_texts([NEW, OLD])
    assert await store.write(lambda tx: stored.reseal(tx.connection, rotated)) == 2
    assert await store.write(lambda tx: stored.reseal(tx.connection, rotated)) == 0
    only_new = Keyring.from_texts([NEW])
    row = await store.read(lambda r: store_get(r, ws, "ana"))
    assert row is not None and row.sealed is not None
    assert only_new.open(row.sealed, store_context(ws, "ana")) == "secret"
    taken = await store.write(lambda tx: stored.take_flow(tx.connection, "f" * 64))
    assert taken is not None
    assert only_new.open(taken.sealed_verifier, stored.flow_context("f" * 64)) == "verifier"


def store_context(ws: str, user: str) -> str:
    return stored.binding_context(ws, user, "crm", "acme")


def store_put(tx: WriteTx, values: dict[str, Any]) -> None:
    stored.put_binding(tx.connection, **values)


def store_get(r: Reader, ws: str, user: str) -> stored.Binding | None:
    return stored.get_binding(r.connection, ws, user, "crm", "acme")
