"""People's accounts on providers' systems (ADR-0012), and the OAuth flows that bind them.

A binding row holds, sealed with the hub's keys (``sealed.Keyring``), what the provider's
``exchange`` turned the person's sign-in into, plus an OAuth refresh token; it is bound to its
row by the sealing context, so a sealed value copied to another person's row does not open.
An expired binding keeps no secret. Nothing here is in the event log: the ``binding.*`` facts
say what happened without the secret, so these rows are not rebuilt by a replay.

An OAuth flow is found by the SHA-256 of its ``state`` (the state travels in a URL; the hub
keeps only its hash) and is taken once: :func:`take_flow` deletes the row it returns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection

from lineup.store import statements
from lineup.store.records import _FromRow
from lineup.store.schema import identity_bindings, oauth_flows
from lineup.store.sealed import Keyring

BOUND = "bound"
EXPIRED = "expired"


@dataclass(frozen=True)
class Binding(_FromRow):
    workspace_id: str
    user_id: str
    provider: str
    instance: str
    auth_kind: str
    sealed: str | None
    account: str | None
    status: str
    expires_at: int | None
    bound_at: int
    updated_at: int
    expired_reason: str | None


@dataclass(frozen=True)
class Flow(_FromRow):
    state_hash: str
    workspace_id: str
    user_id: str
    provider: str
    instance: str
    sealed_verifier: str
    redirect: str
    created_at: int
    expires_at: int


def binding_context(workspace_id: str, user_id: str, provider: str, instance: str) -> str:
    """What a binding's secret is sealed for: its own row and nothing else."""
    return f"identity-binding:{workspace_id}:{user_id}:{provider}:{instance}"


def flow_context(state_hash: str) -> str:
    return f"oauth-flow:{state_hash}"


# --- bindings ------------------------------------------------------------------------------

_t = identity_bindings
_KEY = (
    (_t.c.workspace_id == bindparam("w_workspace_id"))
    & (_t.c.user_id == bindparam("w_user_id"))
    & (_t.c.provider == bindparam("w_provider"))
    & (_t.c.instance == bindparam("w_instance"))
)
_GET = select(_t).where(_KEY)
_OF_PERSON = (
    select(_t)
    .where(_t.c.workspace_id == bindparam("workspace_id"), _t.c.user_id == bindparam("user_id"))
    .order_by(_t.c.provider, _t.c.instance)
)
_OF_SYSTEM = (
    select(_t)
    .where(_t.c.provider == bindparam("provider"), _t.c.instance == bindparam("instance"))
    .order_by(_t.c.workspace_id, _t.c.user_id)
)
_OF_PROVIDER = (
    select(_t)
    .where(_t.c.workspace_id == bindparam("workspace_id"), _t.c.provider == bindparam("provider"))
    .order_by(_t.c.instance, _t.c.user_id)
)
_INSERT = insert(_t)
_REPLACE = (
    update(_t)
    .where(_KEY)
    .values(
        auth_kind=bindparam("auth_kind"),
        sealed=bindparam("sealed"),
        account=bindparam("account"),
        status=bindparam("status"),
        expires_at=bindparam("expires_at"),
        bound_at=bindparam("bound_at"),
        updated_at=bindparam("updated_at"),
        expired_reason=bindparam("expired_reason"),
    )
)
_RENEW = (
    update(_t)
    .where(_KEY, _t.c.status == BOUND, _t.c.sealed == bindparam("w_sealed"))
    .values(
        sealed=bindparam("sealed"),
        expires_at=bindparam("expires_at"),
        updated_at=bindparam("updated_at"),
    )
)
_EXPIRE = (
    update(_t)
    .where(_KEY, _t.c.status == BOUND)
    .values(
        sealed=None,
        status=EXPIRED,
        expired_reason=bindparam("expired_reason"),
        updated_at=bindparam("updated_at"),
    )
)
_DELETE = delete(_t).where(_KEY)
_ALL_SEALED = select(
    _t.c.workspace_id, _t.c.user_id, _t.c.provider, _t.c.instance, _t.c.sealed
).where(_t.c.sealed.is_not(None))
_RESEAL = update(_t).where(_KEY).values(sealed=bindparam("sealed"))


def _key(workspace_id: str, user_id: str, provider: str, instance: str) -> dict[str, str]:
    return {
        "w_workspace_id": workspace_id,
        "w_user_id": user_id,
        "w_provider": provider,
        "w_instance": instance,
    }


def get_binding(
    conn: Connection, workspace_id: str, user_id: str, provider: str, instance: str
) -> Binding | None:
    row = conn.execute(_GET, _key(workspace_id, user_id, provider, instance)).first()
    return None if row is None else Binding.from_row(row)


def bindings_of(conn: Connection, workspace_id: str, user_id: str) -> list[Binding]:
    """One person's bindings in one workspace."""
    rows = conn.execute(_OF_PERSON, {"workspace_id": workspace_id, "user_id": user_id})
    return [Binding.from_row(r) for r in rows]


def bindings_on(conn: Connection, provider: str, instance: str) -> list[Binding]:
    """Everyone's bindings on one instance of a system (to unbind them before it goes)."""
    rows = conn.execute(_OF_SYSTEM, {"provider": provider, "instance": instance})
    return [Binding.from_row(r) for r in rows]


def bindings_of_provider(conn: Connection, workspace_id: str, provider: str) -> list[Binding]:
    """A workspace's bindings on every instance of one provider's system."""
    rows = conn.execute(_OF_PROVIDER, {"workspace_id": workspace_id, "provider": provider})
    return [Binding.from_row(r) for r in rows]


def put_binding(
    conn: Connection,
    *,
    workspace_id: str,
    user_id: str,
    provider: str,
    instance: str,
    auth_kind: str,
    sealed: str,
    account: str | None,
    expires_at: int | None,
    now_ms: int,
) -> None:
    """Bind (or bind again): the row is ``bound`` with this secret from now."""
    values = {
        "auth_kind": auth_kind,
        "sealed": sealed,
        "account": account,
        "status": BOUND,
        "expires_at": expires_at,
        "bound_at": now_ms,
        "updated_at": now_ms,
        "expired_reason": None,
    }
    key = _key(workspace_id, user_id, provider, instance)
    if not statements.run(conn, _REPLACE, {**key, **values}).rowcount:
        statements.run(
            conn,
            _INSERT,
            {
                "workspace_id": workspace_id,
                "user_id": user_id,
                "provider": provider,
                "instance": instance,
                **values,
            },
        )


def renew_binding(
    conn: Connection,
    binding: Binding,
    sealed: str,
    expires_at: int | None,
    now_ms: int,
) -> bool:
    """Replace a bound binding's secret after a refresh, only if it still holds the secret
    the refresh started from (another node may have refreshed it first): whether it did."""
    params = {
        **_key(binding.workspace_id, binding.user_id, binding.provider, binding.instance),
        "w_sealed": binding.sealed,
        "sealed": sealed,
        "expires_at": expires_at,
        "updated_at": now_ms,
    }
    return bool(statements.run(conn, _RENEW, params).rowcount)


def expire_binding(
    conn: Connection,
    workspace_id: str,
    user_id: str,
    provider: str,
    instance: str,
    reason: str,
    now_ms: int,
) -> bool:
    """Mark a bound binding expired and drop its secret: whether it was bound."""
    params = {
        **_key(workspace_id, user_id, provider, instance),
        "expired_reason": reason,
        "updated_at": now_ms,
    }
    return bool(statements.run(conn, _EXPIRE, params).rowcount)


def delete_binding(
    conn: Connection, workspace_id: str, user_id: str, provider: str, instance: str
) -> bool:
    """Unbind: the row and its secret go. Whether there was one."""
    key = _key(workspace_id, user_id, provider, instance)
    return bool(statements.run(conn, _DELETE, key).rowcount)


# --- OAuth flows ---------------------------------------------------------------------------

_f = oauth_flows
_FLOW = select(_f).where(_f.c.state_hash == bindparam("state_hash"))
_FLOW_INSERT = insert(_f)
_FLOW_DELETE = delete(_f).where(_f.c.state_hash == bindparam("state_hash"))
_FLOWS_DUE = delete(_f).where(_f.c.expires_at <= bindparam("now_ms"))
_ALL_FLOWS = select(_f.c.state_hash, _f.c.sealed_verifier)
_FLOW_RESEAL = (
    update(_f)
    .where(_f.c.state_hash == bindparam("w_state_hash"))
    .values(sealed_verifier=bindparam("sealed_verifier"))
)


def put_flow(conn: Connection, flow: Flow) -> None:
    """Record a flow under way; flows past their expiry are cleared at the same time."""
    statements.run(conn, _FLOWS_DUE, {"now_ms": flow.created_at})
    statements.run(conn, _FLOW_INSERT, asdict(flow))


def take_flow(conn: Connection, state_hash: str) -> Flow | None:
    """The flow of this state, removed so that it can be used only once (None: unknown or
    already used; the caller checks its expiry)."""
    row = statements.run(conn, _FLOW, {"state_hash": state_hash}).first()
    if row is None:
        return None
    statements.run(conn, _FLOW_DELETE, {"state_hash": state_hash})
    return Flow.from_row(row)


# --- the secret keys' rotation -------------------------------------------------------------


def reseal(conn: Connection, keyring: Keyring) -> int:
    """Seal again under the current key every binding and flow secret sealed with an older
    one; raises ``UnreadableSecret`` if one opens with no key. How many changed."""
    changed = 0
    for row in conn.execute(_ALL_SEALED).all():
        context = binding_context(row.workspace_id, row.user_id, row.provider, row.instance)
        plain = keyring.open(str(row.sealed), context)
        if keyring.needs_resealing(str(row.sealed)):
            params = {
                **_key(row.workspace_id, row.user_id, row.provider, row.instance),
                "sealed": keyring.seal(plain, context),
            }
            statements.run(conn, _RESEAL, params)
            changed += 1
    for row in conn.execute(_ALL_FLOWS).all():
        context = flow_context(str(row.state_hash))
        plain = keyring.open(str(row.sealed_verifier), context)
        if keyring.needs_resealing(str(row.sealed_verifier)):
            params = {
                "w_state_hash": row.state_hash,
                "sealed_verifier": keyring.seal(plain, context),
            }
            statements.run(conn, _FLOW_RESEAL, params)
            changed += 1
    return changed
