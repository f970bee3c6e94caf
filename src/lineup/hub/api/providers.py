"""The provider console over HTTP (seed 003 §2.4): each workspace's providers with their
versions, health, contract results and logs; the packages an owner may install; and the
lifecycle changes (install, upgrade, enable, disable, rollback, uninstall) behind approval.

Any member of the workspace can look; only its owners request and decide changes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import Field
from sqlalchemy import select

from lineup.core import package as pkg
from lineup.hub.api.deps import Body, Hub, Member
from lineup.hub.api.files import _read_limited
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import Timestamp, View
from lineup.hub.governance import lifecycle
from lineup.hub.governance.catalogue import CatalogueView, Loaded
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import NotFound
from lineup.protocol.times import iso
from lineup.store import Reader
from lineup.store import providers as provider_store
from lineup.store.schema import users

router = APIRouter(prefix="/api/workspaces/{workspace_id}/providers", tags=["providers"])

ProviderId = Annotated[str, Path(min_length=1, max_length=64)]
Action = Literal["install", "upgrade", "enable", "disable", "rollback", "uninstall"]


# --- views -------------------------------------------------------------------------------


class AuthView(View):
    kind: Literal["oauth", "password-exchange", "apikey", "none"]


class VersionRef(View):
    version: str
    digest: str


class HealthView(View):
    ok: bool
    detail: str
    checked_at: Timestamp


class ContractCheck(View):
    capability: str | None = None
    rule: str
    name: str
    passed: bool
    detail: str = ""


class ContractView(View):
    passed: bool
    checks: list[ContractCheck]


class PersonRef(View):
    user_id: str
    name: str


class SurfaceView(View):
    added: list[str]
    removed: list[str]
    changed: list[str]


class ChangeView(View):
    id: str
    provider_id: str
    action: Action
    status: Literal["pending", "applied", "rejected", "failed"]
    from_version: str | None
    to_version: str | None
    surface: SurfaceView
    contract: ContractView | None
    requested_by: PersonRef
    requested_at: Timestamp
    decided_by: PersonRef | None
    decided_at: Timestamp | None
    reason: str | None
    decision_reason: str | None
    blockers: list[str]


class ProviderView(View):
    id: str
    name: str
    vendor: str
    description: str
    version: str
    digest: str
    state: Literal["enabled", "disabled"]
    source: Literal["bundled", "package"]
    signer: str | None
    development: bool
    auth: AuthView
    capabilities: list[CapabilitySpec]
    previous: VersionRef | None
    health: list[HealthView]
    contract: ContractView | None
    pending_change: ChangeView | None
    installed_at: Timestamp | None


class LogLine(View):
    at: Timestamp
    level: str
    message: str


class BindingCounts(View):
    bound: int
    expired: int


class ProviderDetail(ProviderView):
    logs: list[LogLine]
    bindings: BindingCounts
    changes: list[ChangeView]


class ProviderList(View):
    providers: list[ProviderView]


class Refusal(View):
    rule: str
    message: str


class AvailablePackage(View):
    ref: str
    file: str
    id: str | None
    version: str | None
    vendor: str | None
    name: str | None
    description: str | None
    capabilities: list[str]
    auth: AuthView | None
    signer: str | None
    development: bool
    refused: Refusal | None
    installed_version: str | None


class AvailableList(View):
    packages: list[AvailablePackage]


class ChangeList(View):
    changes: list[ChangeView]


class ChangeRequest(Body):
    action: Action
    provider_id: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    package: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    reason: Annotated[str, Field(max_length=2000)] | None = None


class Decision(Body):
    approve: bool
    reason: Annotated[str, Field(max_length=2000)] | None = None


# --- building the views ------------------------------------------------------------------


def _names(r: Reader, actors: set[str]) -> dict[str, str]:
    ids = {a.removeprefix("user:") for a in actors if a.startswith("user:")}
    if not ids:
        return {}
    rows = r.connection.execute(select(users.c.id, users.c.display_name).where(users.c.id.in_(ids)))
    return {f"user:{row.id}": str(row.display_name) for row in rows}


def _person(actor: str | None, names: dict[str, str]) -> dict[str, str] | None:
    if actor is None:
        return None
    return {"user_id": actor.removeprefix("user:"), "name": names.get(actor, actor)}


def _contract(report: dict[str, Any] | None) -> dict[str, Any] | None:
    if not report:
        return None
    return {"passed": bool(report.get("passed")), "checks": report.get("checks", [])}


async def _change_view(
    hub: Any, change: provider_store.Change, names: dict[str, str], contracts: dict[str, Any]
) -> ChangeView:
    blockers = await lifecycle.blockers(hub, change) if change.status == "pending" else []
    return ChangeView.model_validate(
        {
            "id": change.id,
            "provider_id": change.provider_id,
            "action": change.action,
            "status": change.status,
            "from_version": change.from_version,
            "to_version": change.to_version,
            "surface": change.surface,
            "contract": _contract(contracts.get(change.to_digest or "")),
            "requested_by": _person(change.requested_by, names),
            "requested_at": iso(change.requested_at),
            "decided_by": _person(change.decided_by, names),
            "decided_at": iso(change.decided_at),
            "reason": change.reason,
            "decision_reason": change.decision_reason,
            "blockers": blockers,
        }
    )


def _auth_of(loaded: Loaded) -> str:
    return loaded.manifest.auth.kind if loaded.manifest is not None else "apikey"


class _Snapshot:
    """One read of everything the console shows for a workspace."""

    def __init__(self, r: Reader, view: CatalogueView, workspace_id: str, loaded: list[Loaded]):
        conn = r.connection
        self.installs = view.installs
        self.changes = provider_store.changes(conn, workspace_id, limit=200)
        digests = {x.digest for x in loaded} | {c.to_digest for c in self.changes if c.to_digest}
        self.packages = {d: provider_store.package(conn, d) for d in digests}
        self.contracts = {d: p.contract for d, p in self.packages.items() if p and p.contract}
        self.health = {x.digest: provider_store.probes(conn, x.digest) for x in loaded}
        self.names = _names(
            r,
            {c.requested_by for c in self.changes}
            | {c.decided_by for c in self.changes if c.decided_by},
        )


async def _provider_view(
    hub: Any, loaded: Loaded, disabled: bool, snap: _Snapshot
) -> dict[str, Any]:
    row = snap.installs.get(loaded.id)
    manifest = loaded.manifest
    pending = next(
        (c for c in snap.changes if c.provider_id == loaded.id and c.status == "pending"), None
    )
    return {
        "id": loaded.id,
        "name": manifest.name if manifest else loaded.id,
        "vendor": manifest.vendor if manifest else "",
        "description": manifest.description if manifest else "",
        "version": loaded.version,
        "digest": loaded.digest,
        "state": "disabled" if disabled else "enabled",
        "source": loaded.source,
        "signer": loaded.signer,
        "development": loaded.development,
        "auth": {"kind": _auth_of(loaded)},
        "capabilities": loaded.specs(),
        "previous": (
            {"version": row.previous_version, "digest": row.previous_digest}
            if row is not None and row.previous_digest and row.previous_version
            else None
        ),
        "health": [
            {"ok": p.ok, "detail": p.detail, "checked_at": iso(p.checked_at)}
            for p in snap.health.get(loaded.digest, [])
        ],
        "contract": _contract(snap.contracts.get(loaded.digest)),
        "pending_change": (
            None
            if pending is None
            else await _change_view(hub, pending, snap.names, snap.contracts)
        ),
        "installed_at": iso(row.installed_at) if row is not None else None,
    }


# --- routes ------------------------------------------------------------------------------


@router.get("", **answers(ProviderList, 400, 401, 403))
async def list_providers(hub: Hub, person: Member) -> ProviderList:
    view = await hub.governance.view(person.workspace_id)
    loaded = [view.active[k] for k in sorted(view.active)]
    snap = await hub.store.read(lambda r: _Snapshot(r, view, person.workspace_id, loaded))
    return ProviderList.model_validate(
        {"providers": [await _provider_view(hub, x, x.id in view.disabled, snap) for x in loaded]}
    )


@router.get("/available", **answers(AvailableList, 400, 401, 403))
async def available(hub: Hub, person: Member) -> AvailableList:
    """The packages in the operator's directory, signatures and claims checked, nothing run."""
    view = await hub.governance.view(person.workspace_id)
    out = []
    for found in lifecycle.discover(hub):
        out.append(_available_view(found, view.active))
    return AvailableList.model_validate({"packages": out})


def _available_view(found: lifecycle.Available, active: Any) -> dict[str, Any]:
    m = found.manifest
    key = found.candidate.verified.key if found.candidate else None
    running = active.get(m.id) if m else None
    return {
        "ref": found.ref,
        "file": found.file,
        "id": m.id if m else None,
        "version": m.version if m else None,
        "vendor": m.vendor if m else None,
        "name": m.name if m else None,
        "description": m.description if m else None,
        "capabilities": [str(c.get("id")) for c in m.capabilities] if m else [],
        "auth": {"kind": m.auth.kind} if m else None,
        "signer": key.key_id if key else None,
        "development": bool(key and key.development),
        "refused": (
            {"rule": found.refused.rule, "message": found.refused.message}
            if found.refused
            else None
        ),
        "installed_version": running.version if running is not None else None,
    }


@router.post(
    "/packages",
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
    **answers(AvailablePackage, 400, 401, 403, 413),
)
async def upload_package(request: Request, hub: Hub, person: Member) -> AvailablePackage:
    """Send a ``.lineup-provider`` archive: it is checked (never run) and, if it passes, kept
    for an install or upgrade to name by its ``ref``."""
    lifecycle.require_owner(person)
    data, _ = await _read_limited(request, pkg.MAX_PACKAGE_BYTES)
    found = await lifecycle.upload(hub, person, data)
    view = await hub.governance.view(person.workspace_id)
    return AvailablePackage.model_validate(_available_view(found, view.active))


@router.get("/changes", **answers(ChangeList, 400, 401, 403))
async def list_changes(
    hub: Hub, person: Member, status: Annotated[Literal["pending", "all"], Query()] = "all"
) -> ChangeList:
    ws = person.workspace_id

    def read(r: Reader) -> tuple[list[provider_store.Change], dict[str, str], dict[str, Any]]:
        rows = provider_store.changes(r.connection, ws, pending_only=status == "pending")
        names = _names(
            r, {c.requested_by for c in rows} | {c.decided_by for c in rows if c.decided_by}
        )
        contracts = {}
        for c in rows:
            if c.to_digest and (p := provider_store.package(r.connection, c.to_digest)):
                contracts[c.to_digest] = p.contract
        return rows, names, contracts

    rows, names, contracts = await hub.store.read(read)
    return ChangeList(changes=[await _change_view(hub, c, names, contracts) for c in rows])


async def _one_change(hub: Any, ws: str, change: provider_store.Change) -> ChangeView:
    def read(r: Reader) -> tuple[dict[str, str], dict[str, Any]]:
        names = _names(
            r, {change.requested_by, *([change.decided_by] if change.decided_by else [])}
        )
        p = provider_store.package(r.connection, change.to_digest) if change.to_digest else None
        return names, {change.to_digest or "": p.contract} if p else {}

    names, contracts = await hub.store.read(read)
    return await _change_view(hub, change, names, contracts)


@router.post("/changes", status_code=201, **answers(ChangeView, 400, 401, 403, 404, 409, 413))
async def request_change(body: ChangeRequest, hub: Hub, person: Member) -> ChangeView:
    """Ask for a lifecycle change; install and upgrade run the contract kit before answering."""
    change = await lifecycle.request(
        hub,
        person,
        body.action,
        provider_id=body.provider_id,
        package_ref=body.package,
        reason=body.reason,
    )
    return await _one_change(hub, person.workspace_id, change)


@router.post("/changes/{change_id}/decision", **answers(ChangeView, 400, 401, 403, 404, 409, 413))
async def decide_change(
    change_id: Annotated[str, Path(min_length=1, max_length=128)],
    body: Decision,
    hub: Hub,
    person: Member,
) -> ChangeView:
    change = await lifecycle.decide(hub, person, change_id, body.approve, body.reason)
    return await _one_change(hub, person.workspace_id, change)


async def _loaded(hub: Any, ws: str, provider_id: str) -> tuple[Loaded, CatalogueView]:
    view = await hub.governance.view(ws)
    loaded = view.active.get(provider_id)
    if loaded is None:
        raise NotFound(f"No provider {provider_id!r} in this workspace.")
    return loaded, view


@router.get("/{provider_id}", **answers(ProviderDetail, 400, 401, 403, 404))
async def provider_detail(provider_id: ProviderId, hub: Hub, person: Member) -> ProviderDetail:
    loaded, view = await _loaded(hub, person.workspace_id, provider_id)
    snap = await hub.store.read(lambda r: _Snapshot(r, view, person.workspace_id, [loaded]))
    base = await _provider_view(hub, loaded, provider_id in view.disabled, snap)
    changes = [c for c in snap.changes if c.provider_id == provider_id][:20]
    from lineup.hub.governance import bindings

    counts = await bindings.counts(hub, person.workspace_id, provider_id)
    return ProviderDetail.model_validate(
        {
            **base,
            "logs": [
                {"at": iso(at), "level": level, "message": message}
                for at, level, message in reversed(hub.governance.registry.logs.of(provider_id))
            ],
            "bindings": counts,
            "changes": [await _change_view(hub, c, snap.names, snap.contracts) for c in changes],
        }
    )


@router.post("/{provider_id}/health", **answers(HealthView, 400, 401, 403, 404))
async def check_health(provider_id: ProviderId, hub: Hub, person: Member) -> HealthView:
    """Probe the provider now (it is also probed on a schedule; the last 20 are kept)."""
    loaded, _ = await _loaded(hub, person.workspace_id, provider_id)
    probe = await lifecycle.probe(hub, loaded)
    return HealthView(ok=probe.ok, detail=probe.detail, checked_at=iso(probe.checked_at) or "")
