"""Agents: pairing codes, redemption by an adapter, confirmation (or rejection) by a person,
list, rename, settings, revoke, and a new credential without pairing again (rotation)."""

from __future__ import annotations

import shlex
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import Field

from lineup.hub import agent_logs, commands, credentials, hosted, pairing
from lineup.hub.api import responses, views
from lineup.hub.api.deps import MAX_SEQUENCE, Body, Hub, IdempotencyKey, Member
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import View
from lineup.hub.recorder import Writing
from lineup.hub.security import normalise_pairing_code, token_hash
from lineup.protocol import facts
from lineup.protocol.errors import NotFound
from lineup.protocol.session import CloseCode
from lineup.protocol.times import iso
from lineup.store import Reader
from lineup.store import agent_logs as log_store

router = APIRouter(prefix="/api", tags=["agents"])


class NewCode(Body):
    agent_name: Annotated[str, Field(max_length=100)] | None = None


class Redeem(Body):
    code: Annotated[str, Field(min_length=1, max_length=64)]
    name: Annotated[str, Field(max_length=100)] | None = None
    runtime: Annotated[str, Field(max_length=100)] | None = None
    agent_version: Annotated[str, Field(max_length=100)] | None = None
    capabilities: (
        Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(max_length=100)]
        | None
    ) = None


class Confirm(Body):
    name: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """The name to confirm it under; absent: the name it paired with."""


class SaveSettings(Body):
    values: dict[str, Any]
    """Every setting of the form; a left-out one takes its default."""


class Rename(Body):
    name: Annotated[str, Field(min_length=1, max_length=100)]


class RotatedCredential(View):
    agent_id: str
    credential: str
    """The agent's new credential, shown this once (the hub keeps only its hash); the old one
    no longer works."""
    rotated_at: str


def _rotated(rotated: credentials.Rotated) -> RotatedCredential:
    return RotatedCredential(
        agent_id=rotated.agent_id,
        credential=rotated.credential,
        rotated_at=iso(rotated.rotated_at),
    )


def _websocket_url(base: str) -> str:
    scheme, _, rest = base.partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest.rstrip('/')}/ws/agent"


@router.post(
    "/workspaces/{workspace_id}/pairing-codes",
    status_code=201,
    **answers(responses.PairingCode, 400, 401, 403, 413),
)
async def create_pairing_code(
    body: NewCode, request: Request, hub: Hub, person: Member
) -> dict[str, Any]:
    """A one-time code (10 minutes, single use) and the command to run on the agent's machine."""
    ttl_ms = int(hub.settings.pairing_ttl * 1000)
    issued = await hub.recorder.run(
        lambda w: pairing.issue_code(w, person, ttl_ms, body.agent_name)
    )
    base = hub.settings.public_url or str(request.base_url).rstrip("/")
    lineup = pairing.this_lineup()
    pin = _pin_to_give(hub)
    pinning = f" --tls-fingerprint {pin}" if pin else ""
    command = f"{lineup} demo-agent --hub {shlex.quote(base)} --code {issued.code}{pinning}"
    return {
        "code": issued.code,
        "expiresAt": iso(issued.expires_at_ms),
        "expiresInSeconds": int(hub.settings.pairing_ttl),
        "hubUrl": base,
        "command": command,
        "sdkCommand": (
            f"{lineup} agent pair --hub {shlex.quote(base)} --code {issued.code}{pinning}"
        ),
        "tlsFingerprint": pin,
    }


@router.post("/pairing/redeem", **answers(responses.Paired, 400, 403, 404, 413, 429))
async def redeem(body: Redeem, request: Request, hub: Hub) -> dict[str, Any]:
    """Exchange a pairing code for an agent credential (called by the adapter, no session)."""
    assert hub.limits is not None
    ip = request.client.host if request.client else "unknown"
    hub.limits.pairing_by_ip.check(ip, "pairing")
    hub.limits.pairing_by_code.check(token_hash(normalise_pairing_code(body.code)), "pairing")
    paired = await hub.recorder.run(
        lambda w: pairing.redeem(
            w,
            body.code,
            name=body.name,
            runtime=body.runtime,
            agent_version=body.agent_version,
            capabilities=body.capabilities,
        )
    )
    base = hub.settings.public_url or str(request.base_url).rstrip("/")
    return {
        "agentId": paired.agent_id,
        "workspaceId": paired.workspace_id,
        "name": paired.name,
        "credential": paired.credential,
        "hubUrl": base,
        "websocketUrl": _websocket_url(base),
        "awaitingConfirmation": paired.awaiting_confirmation,
        "tlsFingerprint": _pin_to_give(hub),
    }


@router.get("/workspaces/{workspace_id}/hub", **answers(responses.HubInfo, 400, 401, 403))
async def hub_info(request: Request, hub: Hub, person: Member) -> dict[str, Any]:
    """Where agents reach this hub and the certificate it serves, for a person to compare or
    pin (Settings and Connect my agent show it)."""
    base = hub.settings.public_url or str(request.base_url).rstrip("/")
    tls = hub.settings.tls
    return {
        "hubUrl": base,
        "websocketUrl": _websocket_url(base),
        "tlsMode": "off" if tls is None else tls.mode,
        "tlsFingerprint": tls.fingerprint if tls is not None else None,
    }


def _pin_to_give(hub: Hub) -> str | None:
    """The fingerprint agents should pin: only a self-signed certificate's, since one from an
    authority is verified by that authority (and renewing it must not break agents)."""
    tls = hub.settings.tls
    return tls.fingerprint if tls is not None and tls.self_signed else None


@router.get("/workspaces/{workspace_id}/agents", **answers(responses.Agents, 400, 401, 403))
async def list_agents(hub: Hub, person: Member) -> dict[str, Any]:
    agents = await hub.store.read(lambda r: r.list_agents(person.workspace_id))
    return {"agents": [views.agent(a, hub.presence) for a in agents]}


@router.get(
    "/workspaces/{workspace_id}/agents/{agent_id}",
    **answers(responses.Agent, 400, 401, 403, 404),
)
async def get_agent(agent_id: str, hub: Hub, person: Member) -> dict[str, Any]:
    agent = await hub.store.read(lambda r: r.get_agent(person.workspace_id, agent_id))
    if agent is None:
        raise NotFound(f"No agent {agent_id!r} in this workspace.")
    return views.agent(agent, hub.presence)


@router.patch(
    "/workspaces/{workspace_id}/agents/{agent_id}",
    **answers(responses.Agent, 400, 401, 403, 404, 409, 413),
)
async def rename_agent(
    agent_id: str, body: Rename, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    def job(w: Writing) -> None:
        agent = w.read.get_agent(person.workspace_id, agent_id)
        if agent is None:
            raise NotFound(f"No agent {agent_id!r} in this workspace.")
        if agent.name != body.name.strip():
            w.append(
                person.workspace_id,
                facts.AgentRenamedPayload(agent_id=agent_id, name=body.name.strip()),
                actor=person.actor,
                event_id=key,
            )

    await hub.recorder.run(job)
    return await get_agent(agent_id, hub, person)


@router.post(
    "/workspaces/{workspace_id}/agents/{agent_id}/revoke",
    **answers(responses.Agent, 400, 401, 403, 404, 409),
)
async def revoke_agent(
    agent_id: str, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Revoke at once: the credential never works again and the open connection is closed."""

    def job(w: Writing) -> bool:
        hosted.refuse_if_hosted(w.read, person.workspace_id, agent_id, "revoked")
        return pairing.revoke(w, person, agent_id, event_id=key)

    await hub.recorder.run(job)
    link = hub.presence.get(agent_id)
    if link is not None and link.workspace_id == person.workspace_id:
        await link.close(CloseCode.REVOKED, "revoked")
    return await get_agent(agent_id, hub, person)


@router.post(
    "/workspaces/{workspace_id}/agents/{agent_id}/credential/rotate",
    **answers(RotatedCredential, 400, 401, 403, 404, 409),
)
async def rotate_agent_credential(agent_id: str, hub: Hub, person: Member) -> RotatedCredential:
    """A new credential for the agent, shown once; the old one stops working at once and the
    connection it opened is closed. Put the new one in the agent's credentials file (or give
    it to the adapter) and it connects again as the same agent, without pairing."""

    def job(w: Writing) -> credentials.Rotated:
        hosted.refuse_if_hosted(w.read, person.workspace_id, agent_id, "given a new credential")
        return credentials.rotate(w, person.workspace_id, agent_id, person.actor)

    rotated = await hub.recorder.run(job)
    link = hub.presence.get(agent_id)
    if link is not None and link.workspace_id == person.workspace_id:
        await link.close(CloseCode.UNAUTHENTICATED, "credential rotated")
    return _rotated(rotated)


@router.post("/agent/credential/rotate", **answers(RotatedCredential, 401, 409))
async def rotate_own_credential(request: Request, hub: Hub) -> RotatedCredential:
    """An agent exchanges its credential (``Authorization: Bearer``) for a new one, shown
    once; the old one stops working for anything new (the connection it has stays open)."""
    agent = await credentials.authenticate_agent(hub, request.headers.get("authorization", ""))
    rotated = await hub.recorder.run(
        lambda w: credentials.rotate(w, agent.workspace_id, agent.agent_id, agent.actor)
    )
    return _rotated(rotated)


@router.post(
    "/workspaces/{workspace_id}/agents/{agent_id}/confirm",
    **answers(responses.Agent, 400, 401, 403, 404, 409, 413),
)
async def confirm_agent(
    agent_id: str, body: Confirm, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Finish the binding: the person recognises the agent (maybe renaming it), and from now
    on it may be given work. Confirming a confirmed agent changes nothing."""
    await hub.recorder.run(lambda w: pairing.confirm(w, person, agent_id, body.name, key))
    return await get_agent(agent_id, hub, person)


@router.post(
    "/workspaces/{workspace_id}/agents/{agent_id}/reject",
    status_code=204,
    **answers(None, 400, 401, 403, 404, 409),
)
async def reject_agent(agent_id: str, hub: Hub, person: Member, key: IdempotencyKey) -> None:
    """Refuse a newly paired agent the person does not recognise: its credential stops
    working, its connection is closed and it leaves the workspace's list."""
    await hub.recorder.run(lambda w: pairing.reject(w, person, agent_id, key))
    link = hub.presence.get(agent_id)
    if link is not None and link.workspace_id == person.workspace_id:
        await link.close(CloseCode.REVOKED, "rejected by a person")


@router.put(
    "/workspaces/{workspace_id}/agents/{agent_id}/settings",
    **answers(responses.Agent, 400, 401, 403, 404, 409, 413),
)
async def save_agent_settings(
    agent_id: str, body: SaveSettings, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Save the agent's settings, checked against the schema it declared; the agent
    receives them at once (``agent.settings``) and in its next welcome."""
    await hub.recorder.run(
        lambda w: commands.save_agent_settings(w, person, agent_id, body.values, event_id=key)
    )
    return await get_agent(agent_id, hub, person)


AGENT_HISTORY = (
    "agent.paired",
    "agent.connected",
    "agent.status_changed",
    "agent.renamed",
    "agent.confirmed",
    "agent.settings_changed",
    "agent.revoked",
)


@router.get(
    "/workspaces/{workspace_id}/agents/{agent_id}/events",
    **answers(responses.AgentEvents, 400, 401, 403, 404),
)
async def agent_events(
    agent_id: str,
    hub: Hub,
    person: Member,
    after: Annotated[int, Query(ge=0, le=MAX_SEQUENCE)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    """The agent's own history (paired, connected, offline, renamed, revoked): diagnostics."""
    ws = person.workspace_id

    def read(r: Reader) -> list[dict[str, Any]] | None:
        if r.get_agent(ws, agent_id) is None:
            return None
        found: list[dict[str, Any]] = []
        cursor = after
        while len(found) < limit:
            page = r.read_events_of_types(ws, AGENT_HISTORY, after=cursor, limit=1000)
            found.extend(views.event(e) for e in page if e.payload.get("agentId") == agent_id)
            if len(page) < 1000:
                break
            cursor = page[-1].sequence
        return found[:limit]

    history = await hub.store.read(read)
    if history is None:
        raise NotFound(f"No agent {agent_id!r} in this workspace.")
    return {"events": history}


@router.get(
    "/workspaces/{workspace_id}/agents/{agent_id}/logs",
    **answers(responses.AgentLogs, 400, 401, 403, 404),
)
async def agent_log_lines(
    agent_id: str,
    hub: Hub,
    person: Member,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    """The agent's own recent diagnostic lines (``agent.logs``), newest first: what it
    logged about connecting, failing and reconnecting."""
    ws = person.workspace_id

    def read(r: Reader) -> list[log_store.StoredLine] | None:
        if r.get_agent(ws, agent_id) is None:
            return None
        return log_store.recent_lines(r.connection, ws, agent_id, limit)

    lines = await hub.store.read(read)
    if lines is None:
        raise NotFound(f"No agent {agent_id!r} in this workspace.")
    return {
        "lines": [agent_logs.view(line) for line in lines],
        "kept": hub.settings.agent_log_lines,
    }
