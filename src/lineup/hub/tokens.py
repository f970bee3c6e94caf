"""Personal developer tokens (seed 001 §6): a person's key for scripts.

A token (``lut_…``) is shown once and kept only as a hash. Sent as ``Authorization: Bearer``,
it acts as its person on the routes of the workspaces they belong to (``/api/workspaces/{ws}/…``)
— or of the one workspace it was made for — and nowhere else: it never manages tokens,
passwords or sessions, which need a signed-in browser. Its scopes: ``read`` (``GET`` only) and
``write`` (state changes too). Not a cookie, so it needs no CSRF header. Revoking one ends it at
once; an expired one is refused the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lineup.hub import audit
from lineup.hub.recorder import Writing
from lineup.hub.security import new_token, token_hash
from lineup.hub.state import HubState
from lineup.protocol.errors import Forbidden, InvalidArgument, NotFound, Unauthenticated
from lineup.protocol.ids import new_id
from lineup.store import DeveloperTokenRecord, Reader, User
from lineup.store import auth as store_auth

PREFIX = "lut"
SCOPES = ("read", "write")
MAX_DAYS = 366
TOUCH_EVERY_MS = 60_000
"""``last_used_at`` moves at most once a minute: a busy script costs no write per request."""
DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class NewToken:
    token: str
    record: DeveloperTokenRecord


def looks_like_token(sent: str) -> bool:
    return sent.startswith(PREFIX + "_")


def _hash(token: str) -> str:
    return token_hash("developer:" + token)


def _checked_scopes(scopes: Sequence[str]) -> list[str]:
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise InvalidArgument(
            "A token's scopes are read, or read and write.", details={"field": "scopes"}
        )
    return [s for s in SCOPES if s in scopes or s == "read"]


async def create(
    hub: HubState,
    user: User,
    *,
    name: str,
    scopes: Sequence[str],
    expires_in_days: int | None,
    workspace_id: str | None,
) -> NewToken:
    clean = name.strip()
    if not clean:
        raise InvalidArgument("Give the token a name.", details={"field": "name"})
    checked = _checked_scopes(scopes)
    if expires_in_days is not None and not 1 <= expires_in_days <= MAX_DAYS:
        raise InvalidArgument(f"expiresInDays is 1–{MAX_DAYS}.", details={"field": "expiresInDays"})
    token = new_token(PREFIX)

    def job(w: Writing) -> DeveloperTokenRecord:
        if workspace_id is not None and w.read.get_membership(workspace_id, user.id) is None:
            raise Forbidden("You are not a member of this workspace.")
        record = DeveloperTokenRecord(
            id=new_id("tok"),
            user_id=user.id,
            workspace_id=workspace_id,
            name=clean,
            token_hash=_hash(token),
            scopes=checked,
            created_at=w.now_ms,
            expires_at=None if expires_in_days is None else w.now_ms + expires_in_days * DAY_MS,
        )
        store_auth.insert_developer_token(w.connection, record)
        audit.record(
            w,
            "token.created",
            workspace_id=workspace_id,
            actor=f"user:{user.id}",
            subject=f"token:{record.id}",
            data={
                "name": clean,
                "scopes": checked,
                "workspaceId": workspace_id,
                "expiresAt": record.expires_at,
            },
        )
        return record

    return NewToken(token, await hub.recorder.run(job))


async def listed(hub: HubState, user: User) -> list[DeveloperTokenRecord]:
    return await hub.store.read(lambda r: store_auth.list_developer_tokens(r.connection, user.id))


async def revoke(hub: HubState, user: User, token_id: str) -> None:
    def job(w: Writing) -> None:
        mine = store_auth.list_developer_tokens(w.connection, user.id)
        record = next((t for t in mine if t.id == token_id), None)
        if record is None or not store_auth.revoke_developer_token(
            w.connection, user.id, token_id, w.now_ms
        ):
            raise NotFound("You have no live token with that id.", details={"tokenId": token_id})
        audit.record(
            w,
            "token.revoked",
            workspace_id=record.workspace_id,
            actor=f"user:{user.id}",
            subject=f"token:{token_id}",
            data={"name": record.name},
        )

    await hub.recorder.run(job)


async def authenticate(hub: HubState, token: str) -> tuple[DeveloperTokenRecord, User]:
    """The live token ``token`` and its person; ``unauthenticated`` for anything else."""

    def read(r: Reader) -> tuple[DeveloperTokenRecord | None, User | None]:
        record = store_auth.get_developer_token_by_hash(r.connection, _hash(token))
        return record, None if record is None else r.get_user(record.user_id)

    record, user = await hub.store.read(read, brief=True)
    now = hub.clock()
    if (
        record is None
        or user is None
        or record.revoked_at is not None
        or (record.expires_at is not None and record.expires_at <= now)
    ):
        raise Unauthenticated(
            "This developer token is not valid: it is unknown, revoked or expired.",
            details={"header": "Authorization"},
        )
    if record.last_used_at is None or now - record.last_used_at >= TOUCH_EVERY_MS:
        record_id = record.id
        await hub.store.write(
            lambda tx: store_auth.touch_developer_token(tx.connection, record_id, now)
        )
    return record, user
