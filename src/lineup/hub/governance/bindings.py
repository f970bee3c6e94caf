"""Each person's own account on each system (ADR-0012): bind, use, renew, expire, unbind.

How a person signs in to a system is its provider package's ``auth`` (:func:`auth_of`):

* ``oauth`` — an authorization-code flow with PKCE (S256) through Authlib, against the
  endpoints the manifest names, with the OAuth client the operator registered at the system
  and gave the hub as that instance's credentials (``clientId``, ``clientSecret``). The
  token response goes to the provider's ``exchange``, whose credentials are sealed with the
  refresh token; before a call, an access token at or near its expiry is renewed, and a
  renewal the authorization server refuses expires the binding.
* ``password-exchange`` — the person gives a username and password once; the provider's
  ``exchange`` turns them into credentials, and only those are kept. The password is in no
  row, fact, log line or answer.
* ``apikey`` — the operator's key for the instance (``lineup credentials set``), shared by
  everyone: nobody binds anything. A provider without a manifest (the in-tree and
  development ones) works that way too.

A call of a per-person system is made with the binding of the person it is on behalf of; with
none, or an expired one, it is refused at once with ``unauthenticated`` and
``details.nextStep = "bind"``, before anything is recorded. A system that answers a call
``unauthenticated`` has signed the person out: that binding is expired at once, the others
stay as they are. Each change is a fact (``binding.bound``, ``binding.expired``,
``binding.removed``, never with a secret) and an audit entry.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import authlib.deprecate
import httpx

from lineup.core.package import Auth, Manifest, OAuthEndpoints
from lineup.core.provider import BoundAccount, Exchange, Exchanging, Provider, ProviderError
from lineup.hub import audit
from lineup.hub.actors import Person
from lineup.hub.governance import credentials
from lineup.hub.recorder import Writing
from lineup.protocol import facts
from lineup.protocol.errors import (
    Conflict,
    ErrorCode,
    InvalidArgument,
    LineupError,
    NotFound,
    Unauthenticated,
    Unavailable,
    error_from_code,
)
from lineup.store import User
from lineup.store import bindings as store
from lineup.store.bindings import Binding

with warnings.catch_warnings():
    # Authlib announces on import that it prefers a fork of httpx; the hub uses httpx itself
    warnings.filterwarnings(
        "ignore",
        message="The httpx module is deprecated",
        category=authlib.deprecate.AuthlibDeprecationWarning,
    )
    from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError

if TYPE_CHECKING:
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.governance")

CALLBACK_PATH = "/api/bindings/oauth/callback"
"""Where the authorization server sends the person's browser back; the operator registers
``<LINEUP_PUBLIC_URL>`` + this as the OAuth client's redirect URI."""
SETTINGS_PATH = "/settings"
FLOW_TTL_MS = 10 * 60 * 1000
RENEW_MARGIN_MS = 60_000
"""An access token this close to its expiry is renewed before a call rather than risked."""
EXCHANGE_TIMEOUT_S = 30.0
CLIENT_ID = "clientId"
CLIENT_SECRET = "clientSecret"  # noqa: S105 - the name of a credential, not one


def auth_of(provider: Provider) -> Auth | None:
    """How a person signs in to ``provider``'s system: its package manifest's ``auth``.
    ``None`` for a provider without a manifest, whose calls carry the operator's credentials
    for the instance, as they always did."""
    manifest = getattr(provider, "manifest", None)
    return manifest.auth if isinstance(manifest, Manifest) else None


def name_of(provider: Provider) -> str:
    manifest = getattr(provider, "manifest", None)
    return manifest.name if isinstance(manifest, Manifest) else provider.id


def user_of(on_behalf_of: str | None) -> str | None:
    """The user id of an actor ``user:<id>``; None for anyone else."""
    kind, _, ident = (on_behalf_of or "").partition(":")
    return ident if kind == "user" and ident else None


@dataclass(frozen=True, slots=True)
class OnBehalf:
    """Whose call it is: the workspace, and the actor it acts for (``user:<id>``, the
    person whose conversation it is; None when nobody's)."""

    workspace_id: str
    actor: str | None


@dataclass(frozen=True, slots=True)
class Key:
    """One person's binding on one instance of one system, in one workspace."""

    workspace_id: str
    user_id: str
    provider: str
    instance: str

    @property
    def subject(self) -> str:
        """The audit entry's subject."""
        return f"binding:{self.provider}:{self.instance}:{self.user_id}"

    @property
    def context(self) -> str:
        return store.binding_context(self.workspace_id, self.user_id, self.provider, self.instance)


@dataclass(frozen=True, slots=True)
class Secret:
    """What a binding seals: the credentials its calls carry, and for OAuth how to renew
    them. ``access_expires_at`` is on the hub's clock."""

    credentials: Mapping[str, str] = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    access_expires_at: int | None = None

    def dumps(self) -> str:
        return json.dumps(
            {
                "credentials": dict(self.credentials),
                "refreshToken": self.refresh_token,
                "accessExpiresAt": self.access_expires_at,
            }
        )

    @classmethod
    def loads(cls, text: str) -> Secret:
        data = json.loads(text)
        return cls(
            {str(k): str(v) for k, v in data.get("credentials", {}).items()},
            data.get("refreshToken"),
            data.get("accessExpiresAt"),
        )


class Renewals:
    """One renewal at a time per binding on this node: a second caller waits and uses the
    token the first one got, instead of spending a rotated refresh token twice."""

    def __init__(self) -> None:
        self._locks: dict[Key, asyncio.Lock] = {}

    def lock(self, key: Key) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())


# --- calls ----------------------------------------------------------------------------------


def refusal(provider: Provider, instance: str, reason: str) -> Unauthenticated:
    """The answer to a call the person's binding cannot carry: what to do is bind again."""
    name = name_of(provider)
    if reason == "not_bound":
        message = (
            f"Your account on {name} ({instance}) is not bound: bind it in Settings → "
            "Accounts, then ask again."
        )
    else:
        message = (
            f"Your account on {name} ({instance}) is no longer signed in: bind it again in "
            "Settings → Accounts, then ask again."
        )
    return Unauthenticated(
        message,
        details={
            "reason": reason,
            "provider": provider.id,
            "instance": instance,
            "nextStep": "bind",
        },
    )


async def credentials_for(
    hub: HubState, provider: Provider, instance: str, who: OnBehalf
) -> dict[str, str]:
    """The credentials one call of ``provider`` on ``instance`` carries: the operator's for a
    shared system, else those of the person the call is on behalf of — renewed first when
    their token is due. Raises :func:`refusal` (``unauthenticated``) when that person has no
    working binding, and ``unavailable`` when the authorization server cannot be reached."""
    auth = auth_of(provider)
    if auth is None or auth.kind == "apikey":
        return await credentials.get(hub, provider.id, instance)
    if auth.kind == "none":
        return {}
    user = user_of(who.actor)
    if user is None:
        raise refusal(provider, instance, "not_bound")
    key = Key(who.workspace_id, user, provider.id, instance)
    row = await _read(hub, key)
    if row is None or row.sealed is None:
        raise refusal(provider, instance, "not_bound" if row is None else "binding_expired")
    secret = Secret.loads(hub.keyring.open(row.sealed, key.context))
    now = hub.clock()
    if auth.kind == "oauth" and _due(secret.access_expires_at, now):
        secret = await _renew(hub, provider, auth, key, row)
    elif auth.kind == "password-exchange" and row.expires_at is not None and now >= row.expires_at:
        await expire(hub, key, "token_expired")
        raise refusal(provider, instance, "binding_expired")
    return dict(secret.credentials)


async def check_bound(hub: HubState, provider: Provider, instance: str, who: OnBehalf) -> None:
    """Refuse now, before anything is recorded, a call the person's binding cannot carry. A
    shared system (the operator's key, or no sign-in) has nothing to check: its credentials
    are read only for the call itself."""
    auth = auth_of(provider)
    if auth is not None and auth.per_person:
        await credentials_for(hub, provider, instance, who)


async def signed_out(
    hub: HubState, provider: Provider, instance: str, who: OnBehalf
) -> Unauthenticated | None:
    """The system answered a call ``unauthenticated``: for a per-person system that is the
    person's binding signed out, so it expires now and the error to give is returned; None
    for a shared system (its operator's key is not a person's to fix)."""
    auth = auth_of(provider)
    user = user_of(who.actor)
    if auth is None or not auth.per_person or user is None:
        return None
    await expire(hub, Key(who.workspace_id, user, provider.id, instance), "signed_out_by_system")
    return refusal(provider, instance, "binding_expired")


def _due(expires_at: int | None, now: int) -> bool:
    return expires_at is not None and now >= expires_at - RENEW_MARGIN_MS


async def _read(hub: HubState, key: Key) -> Binding | None:
    return await hub.store.read(
        lambda r: store.get_binding(
            r.connection, key.workspace_id, key.user_id, key.provider, key.instance
        )
    )


async def _renew(hub: HubState, provider: Provider, auth: Auth, key: Key, seen: Binding) -> Secret:
    """A fresh access token from the refresh token, under this binding's lock; one another
    caller renewed meanwhile is used as it is."""
    async with hub.governance.renewals.lock(key):
        row = await _read(hub, key)
        if row is None or row.sealed is None:
            raise refusal(provider, key.instance, "not_bound" if row is None else "binding_expired")
        secret = Secret.loads(hub.keyring.open(row.sealed, key.context))
        if row.sealed != seen.sealed and not _due(secret.access_expires_at, hub.clock()):
            return secret
        if secret.refresh_token is None or auth.oauth is None:
            await expire(hub, key, "token_expired")
            raise refusal(provider, key.instance, "binding_expired")
        client_id, client_secret = await _client_credentials(hub, provider, key.instance)
        try:
            async with _client(hub, auth.oauth, client_id, client_secret) as client:
                token = await client.refresh_token(
                    auth.oauth.token_url, refresh_token=secret.refresh_token
                )
        except OAuthError as exc:  # the authorization server's answer: no more renewals
            log.info("%s refused to renew a token of %s: %s", key.provider, key.user_id, exc)
            await expire(hub, key, "refresh_refused")
            raise refusal(provider, key.instance, "binding_expired") from None
        except (httpx.HTTPError, ValueError) as exc:  # unreachable, overloaded or garbled
            raise Unavailable(
                f"{name_of(provider)}'s sign-in server could not be reached to renew your "
                "access; try again in a moment.",
                details={"provider": provider.id, "instance": key.instance},
            ) from exc
        try:
            renewed, _ = await _exchanged(
                hub, provider, key.instance, dict(token), secret.refresh_token
            )
        except ProviderError as exc:
            if exc.code is not ErrorCode.UNAUTHENTICATED:
                raise error_from_code(exc.code.value, exc.message, exc.details) from None
            await expire(hub, key, "signed_out_by_system")
            raise refusal(provider, key.instance, "binding_expired") from None
        sealed = hub.keyring.seal(renewed.dumps(), key.context)
        now = hub.clock()
        done = await hub.store.write(
            lambda tx: store.renew_binding(
                tx.connection, row, sealed, renewed.access_expires_at, now
            )
        )
        if not done:  # unbound, expired or renewed elsewhere meanwhile: as the row says now
            return await _current(hub, provider, key)
        return renewed


async def _current(hub: HubState, provider: Provider, key: Key) -> Secret:
    row = await _read(hub, key)
    if row is None or row.sealed is None:
        raise refusal(provider, key.instance, "not_bound" if row is None else "binding_expired")
    return Secret.loads(hub.keyring.open(row.sealed, key.context))


async def _exchanged(
    hub: HubState,
    provider: Provider,
    instance: str,
    token: dict[str, Any],
    refresh_token: str | None = None,
) -> tuple[Secret, BoundAccount]:
    """The provider's credentials for an OAuth token response, and what it says of the
    account; the expiry is counted on the hub's clock from ``expires_in``. A renewal that
    brings no new refresh token keeps ``refresh_token``."""
    expires_in = token.get("expires_in")
    access_expires_at = None
    if isinstance(expires_in, int | float) or (isinstance(expires_in, str) and expires_in):
        access_expires_at = hub.clock() + int(float(expires_in) * 1000)
        token["expires_at"] = access_expires_at / 1000
    bound = await _exchange(provider, Exchange(kind="oauth", instance=instance, token=token))
    if access_expires_at is None:
        access_expires_at = bound.expires_at_ms
    kept = token.get("refresh_token") or refresh_token
    secret = Secret(dict(bound.credentials), str(kept) if kept else None, access_expires_at)
    return secret, bound


async def _exchange(provider: Provider, request: Exchange) -> BoundAccount:
    if not isinstance(provider, Exchanging):
        raise InvalidArgument(
            f"{name_of(provider)} cannot bind an account: its provider has no exchange.",
            details={"provider": provider.id},
        )
    try:
        async with asyncio.timeout(EXCHANGE_TIMEOUT_S):
            return await provider.exchange(request)
    except TimeoutError:
        raise Unavailable(
            f"{name_of(provider)} did not answer in time; nothing was bound. Try again later.",
            details={"provider": provider.id},
        ) from None


# --- the systems a person may bind -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AccountStatus:
    """One system (a provider's instance) as a person's Settings show it."""

    provider: str
    provider_name: str
    instance: str
    auth_kind: str
    status: str
    """``bound``, ``expired`` or ``not_bound`` (for ``apikey``: whether the operator set a
    key)."""
    account: str | None = None
    expires_at: int | None = None
    bound_at: int | None = None
    expired_reason: str | None = None


async def systems(hub: HubState, workspace_id: str) -> list[tuple[Provider, str]]:
    """Every (provider, instance) the workspace's providers reach, in order (a disabled
    provider's too: a person may bind before it is enabled again)."""
    out: list[tuple[Provider, str]] = []
    view = await hub.governance.view(workspace_id)
    for provider_id in sorted(view.active):
        loaded = view.active[provider_id]
        instances: list[str] = []
        for spec in loaded.specs():
            instances += [i for i in spec.instances if i not in instances]
        out += [(loaded.provider, instance) for instance in instances]
    return out


async def system(
    hub: HubState, workspace_id: str, provider_id: str, instance: str
) -> tuple[Provider, Auth | None]:
    """The provider and its auth for one of the workspace's systems; ``not_found`` otherwise."""
    for provider, known in await systems(hub, workspace_id):
        if provider.id == provider_id and known == instance:
            return provider, auth_of(provider)
    raise NotFound(
        f"No system {provider_id}/{instance} on this hub.",
        details={"provider": provider_id, "instance": instance},
    )


async def accounts(hub: HubState, person: Person) -> list[AccountStatus]:
    """The person's standing on every system that needs a sign-in."""
    rows = await hub.store.read(
        lambda r: store.bindings_of(r.connection, person.workspace_id, person.user_id)
    )
    mine = {(row.provider, row.instance): row for row in rows}
    out = []
    for provider, instance in await systems(hub, person.workspace_id):
        auth = auth_of(provider)
        kind = "apikey" if auth is None else auth.kind
        if kind == "none":
            continue
        row = mine.get((provider.id, instance))
        base = (provider.id, name_of(provider), instance, kind)
        if kind == "apikey":
            held = await credentials.has(hub, provider.id, instance)
            out.append(AccountStatus(*base, status="bound" if held else "not_bound"))
        elif row is None:
            out.append(AccountStatus(*base, status="not_bound"))
        else:
            out.append(
                AccountStatus(
                    *base,
                    status=row.status,
                    account=row.account,
                    expires_at=row.expires_at,
                    bound_at=row.bound_at,
                    expired_reason=row.expired_reason,
                )
            )
    return out


async def _per_person(
    hub: HubState, workspace_id: str, provider_id: str, instance: str, kind: str
) -> tuple[Provider, Auth]:
    provider, auth = await system(hub, workspace_id, provider_id, instance)
    if auth is None or auth.kind != kind:
        shown = "apikey" if auth is None else auth.kind
        raise InvalidArgument(
            f"{name_of(provider)} does not sign in by {kind}"
            + (
                ": it uses the key the hub's operator set."
                if shown == "apikey"
                else f" (it uses {shown})."
            ),
            details={"provider": provider_id, "instance": instance, "authKind": shown},
        )
    return provider, auth


# --- binding --------------------------------------------------------------------------------


async def _bind(
    hub: HubState,
    key: Key,
    auth_kind: str,
    secret: Secret,
    bound: BoundAccount,
    actor: str,
) -> None:
    sealed = hub.keyring.seal(secret.dumps(), key.context)
    expires_at = secret.access_expires_at if auth_kind == "oauth" else bound.expires_at_ms
    account = bound.account or None

    def job(w: Writing) -> None:
        store.put_binding(
            w.connection,
            workspace_id=key.workspace_id,
            user_id=key.user_id,
            provider=key.provider,
            instance=key.instance,
            auth_kind=auth_kind,
            sealed=sealed,
            account=account,
            expires_at=expires_at,
            now_ms=w.now_ms,
        )
        w.append(
            key.workspace_id,
            facts.BindingBoundPayload(
                user_id=key.user_id,
                provider=key.provider,
                instance=key.instance,
                auth_kind="oauth" if auth_kind == "oauth" else "password-exchange",
                account=account,
                expires_at=expires_at,
            ),
            actor=actor,
        )
        audit.record(
            w,
            "binding.bound",
            workspace_id=key.workspace_id,
            actor=actor,
            subject=key.subject,
            data={
                "provider": key.provider,
                "instance": key.instance,
                "userId": key.user_id,
                "authKind": auth_kind,
                "account": account,
                "expiresAt": expires_at,
            },
        )

    await hub.recorder.run(job)


async def expire(hub: HubState, key: Key, reason: str) -> None:
    """The binding no longer works: its secret goes, and Settings say so. Nothing happens to
    a binding that is not bound (already expired, or unbound)."""

    def job(w: Writing) -> None:
        changed = store.expire_binding(
            w.connection,
            key.workspace_id,
            key.user_id,
            key.provider,
            key.instance,
            reason,
            w.now_ms,
        )
        if not changed:
            return
        w.append(
            key.workspace_id,
            facts.BindingExpiredPayload(
                user_id=key.user_id,
                provider=key.provider,
                instance=key.instance,
                reason=reason,
            ),
            actor="hub",
        )
        audit.record(
            w,
            "binding.expired",
            workspace_id=key.workspace_id,
            actor="hub",
            subject=key.subject,
            data={
                "provider": key.provider,
                "instance": key.instance,
                "userId": key.user_id,
                "reason": reason,
            },
        )

    await hub.recorder.run(job)


async def unbind(hub: HubState, person: Person, provider_id: str, instance: str) -> None:
    """The person's binding and its secret go; its facts and audit entries stay."""
    key = Key(person.workspace_id, person.user_id, provider_id, instance)

    def job(w: Writing) -> None:
        if not _remove(w, key, person.actor):
            raise NotFound(
                f"You have no account bound on {provider_id}/{instance}.",
                details={"provider": provider_id, "instance": instance},
            )

    await hub.recorder.run(job)


async def unbind_everyone(hub: HubState, provider_id: str, instance: str) -> int:
    """Every person's binding on one system goes (the system is leaving the hub): how many."""

    def job(w: Writing) -> int:
        rows = store.bindings_on(w.read.connection, provider_id, instance)
        for row in rows:
            key = Key(row.workspace_id, row.user_id, row.provider, row.instance)
            _remove(w, key, "hub")
        return len(rows)

    return await hub.recorder.run(job)


async def unbind_workspace(hub: HubState, workspace_id: str, provider_id: str) -> int:
    """Every binding of a workspace's people on one provider's systems goes (it is being
    uninstalled there): how many. Their facts and audit entries stay."""

    def job(w: Writing) -> int:
        rows = store.bindings_of_provider(w.read.connection, workspace_id, provider_id)
        for row in rows:
            _remove(w, Key(row.workspace_id, row.user_id, row.provider, row.instance), "hub")
        return len(rows)

    return await hub.recorder.run(job)


async def counts(hub: HubState, workspace_id: str, provider_id: str) -> dict[str, int]:
    """How many of the workspace's people are bound to the provider's systems, and how many
    bindings have expired (the console's summary; who is bound is each person's own)."""
    rows = await hub.store.read(
        lambda r: store.bindings_of_provider(r.connection, workspace_id, provider_id)
    )
    return {
        "bound": sum(1 for r in rows if r.status == "bound"),
        "expired": sum(1 for r in rows if r.status == "expired"),
    }


def _remove(w: Writing, key: Key, by: str) -> bool:
    if not store.delete_binding(
        w.connection, key.workspace_id, key.user_id, key.provider, key.instance
    ):
        return False
    w.append(
        key.workspace_id,
        facts.BindingRemovedPayload(
            user_id=key.user_id, provider=key.provider, instance=key.instance, by=by
        ),
        actor=by,
    )
    audit.record(
        w,
        "binding.removed",
        workspace_id=key.workspace_id,
        actor=by,
        subject=key.subject,
        data={"provider": key.provider, "instance": key.instance, "userId": key.user_id},
    )
    return True


# --- password-exchange -----------------------------------------------------------------------


async def bind_password(
    hub: HubState, person: Person, provider_id: str, instance: str, username: str, password: str
) -> None:
    """Exchange a username and password once for the provider's credentials; only those are
    kept. A refusal by the system is ``invalid_argument`` (the person mistyped), never
    ``unauthenticated``, which would sign them out of the hub."""
    provider, _ = await _per_person(
        hub, person.workspace_id, provider_id, instance, "password-exchange"
    )
    assert hub.limits is not None
    hub.limits.binding_by_person.check(person.user_id, "account binding")
    request = Exchange(
        kind="password-exchange", instance=instance, username=username, password=password
    )
    try:
        bound = await _exchange(provider, request)
    except ProviderError as exc:
        if exc.code in (ErrorCode.UNAUTHENTICATED, ErrorCode.FORBIDDEN, ErrorCode.INVALID_ARGUMENT):
            raise InvalidArgument(
                f"{name_of(provider)} did not accept that username and password.",
                details={"provider": provider_id, "instance": instance, "reason": "refused"},
            ) from None
        raise error_from_code(exc.code.value, exc.message, exc.details) from None
    key = Key(person.workspace_id, person.user_id, provider_id, instance)
    await _bind(hub, key, "password-exchange", Secret(dict(bound.credentials)), bound, person.actor)


# --- OAuth ----------------------------------------------------------------------------------


def redirect_uri(hub: HubState) -> str:
    return hub.settings.base_url.rstrip("/") + CALLBACK_PATH


def _client(
    hub: HubState, endpoints: OAuthEndpoints, client_id: str, client_secret: str
) -> AsyncOAuth2Client:
    return AsyncOAuth2Client(
        client_id=client_id,
        client_secret=client_secret or None,
        scope=" ".join(endpoints.scopes) or None,
        redirect_uri=redirect_uri(hub),
        code_challenge_method="S256",
        timeout=EXCHANGE_TIMEOUT_S,
    )


async def _client_credentials(hub: HubState, provider: Provider, instance: str) -> tuple[str, str]:
    """The OAuth client the operator registered at the system for this instance."""
    held = await credentials.get(hub, provider.id, instance)
    client_id = held.get(CLIENT_ID, "")
    if not client_id:
        raise Conflict(
            f"Signing in to {name_of(provider)} is not set up on this hub yet: its operator "
            f"registers an OAuth client there and gives the hub its id and secret "
            f"(lineup credentials set {provider.id} {instance} {CLIENT_ID}, then "
            f"{CLIENT_SECRET}).",
            details={"provider": provider.id, "instance": instance, "reason": "not_configured"},
        )
    return client_id, held.get(CLIENT_SECRET, "")


def _state_hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def _safe_return(path: str | None) -> str:
    """Only a path of the hub's own web app: never an address elsewhere."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return SETTINGS_PATH
    return path


async def start_oauth(
    hub: HubState,
    person: Person,
    provider_id: str,
    instance: str,
    return_to: str | None = None,
) -> str:
    """The authorization URL to send the person's browser to; the flow waits ten minutes
    for the authorization server to send it back to :data:`CALLBACK_PATH`."""
    provider, auth = await _per_person(hub, person.workspace_id, provider_id, instance, "oauth")
    assert auth.oauth is not None  # a manifest with auth kind oauth names its endpoints
    assert hub.limits is not None
    hub.limits.binding_by_person.check(person.user_id, "account binding")
    client_id, client_secret = await _client_credentials(hub, provider, instance)
    state = secrets.token_urlsafe(32)
    verifier = secrets.token_urlsafe(48)
    async with _client(hub, auth.oauth, client_id, client_secret) as client:
        url, _ = client.create_authorization_url(
            auth.oauth.authorize_url, state=state, code_verifier=verifier
        )
    digest = _state_hash(state)
    now = hub.clock()
    flow = store.Flow(
        state_hash=digest,
        workspace_id=person.workspace_id,
        user_id=person.user_id,
        provider=provider_id,
        instance=instance,
        sealed_verifier=hub.keyring.seal(verifier, store.flow_context(digest)),
        redirect=_safe_return(return_to),
        created_at=now,
        expires_at=now + FLOW_TTL_MS,
    )
    await hub.store.write(lambda tx: store.put_flow(tx.connection, flow))
    return str(url)


def _back(path: str, **query: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}{urlencode(query)}"


async def finish_oauth(
    hub: HubState,
    *,
    state: str,
    code: str | None,
    error: str | None,
    user: User | None,
) -> str:
    """The authorization server sent the browser back: take the flow (once), check it is the
    person who started it, exchange the code with its PKCE verifier, bind. Returns where to
    send the browser: the web app's settings, with ``bound=<provider>`` or
    ``bindError=<reason>``."""
    digest = _state_hash(state)
    taken = await hub.store.write(lambda tx: store.take_flow(tx.connection, digest))
    if taken is None or taken.expires_at <= hub.clock():
        return _back(SETTINGS_PATH, bindError="flow_expired")
    flow = taken

    def failed(reason: str) -> str:
        return _back(flow.redirect, bindError=reason, provider=flow.provider)

    if user is None or user.id != flow.user_id:
        return failed("signed_out" if user is None else "other_person")
    membership = await hub.store.read(lambda r: r.get_membership(flow.workspace_id, user.id))
    if membership is None:
        return failed("not_member")
    if error is not None or not code:
        return failed("denied")
    try:
        provider, auth = await _per_person(
            hub, flow.workspace_id, flow.provider, flow.instance, "oauth"
        )
    except LineupError:
        return failed("unknown_system")
    assert auth.oauth is not None
    verifier = hub.keyring.open(flow.sealed_verifier, store.flow_context(digest))
    try:
        client_id, client_secret = await _client_credentials(hub, provider, flow.instance)
        async with _client(hub, auth.oauth, client_id, client_secret) as client:
            token = await client.fetch_token(
                auth.oauth.token_url, code=code, code_verifier=verifier
            )
        secret, bound = await _exchanged(hub, provider, flow.instance, dict(token))
    except (OAuthError, ProviderError) as exc:
        log.info("binding %s/%s for %s refused: %s", flow.provider, flow.instance, user.id, exc)
        return failed("refused")
    except (httpx.HTTPError, ValueError, LineupError) as exc:
        log.warning("binding %s/%s for %s failed: %r", flow.provider, flow.instance, user.id, exc)
        return failed("unavailable")
    key = Key(flow.workspace_id, flow.user_id, flow.provider, flow.instance)
    await _bind(hub, key, "oauth", secret, bound, f"user:{user.id}")
    return _back(flow.redirect, bound=flow.provider)
