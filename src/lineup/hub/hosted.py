"""Agents the hub hosts itself: a person picks an engine, a working directory and a model
endpoint, and the agent appears like any other — its conversations driven by an engine
subprocess on this machine.

The hub keeps the definition (``hosted_agents``) with the agent's credential and the
endpoint's key sealed, and makes the agent in the log (paired and confirmed by the person who
created it). Running it is not the hub's job: the hub does not use the agent SDK. Whoever
composes the hub with engines (``lineup serve``) gives it an :class:`EngineHost`, which gets
each definition — secrets opened, in memory only — when it is created and at every start,
and is told when one is deleted.

A hosted agent may belong to a project: its conversations then start in that project
(``commands.hosted_agents_project``), so what it does there falls under the project's rules,
approvers and audit.

The hub's log is the record of a hosted agent's conversations (seed 003 §1.5: the platform
owns them; an engine's own state is only a resume hint). Each definition carries a
:class:`HostedRecord` through which the host reads a conversation's recorded events, to build
what a (re)started engine session is given.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol
from urllib.parse import urlsplit

from lineup.engines.context import RecordedEvent
from lineup.engines.process import confine
from lineup.engines.runtime import EngineStatus
from lineup.hub.actors import Person
from lineup.hub.commands import project_to_start_in
from lineup.hub.credentials import CREDENTIAL_PREFIX
from lineup.hub.pairing import revoke
from lineup.hub.recorder import Writing
from lineup.hub.security import new_token, token_hash
from lineup.hub.state import HubState
from lineup.protocol import facts
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, NotFound, Unavailable
from lineup.protocol.ids import new_id
from lineup.protocol.subjects import Subject
from lineup.store import Agent, AgentCredentialRecord, Reader, Store
from lineup.store import auth as store_auth
from lineup.store import hosted as hosted_store
from lineup.store.queries import SubjectPage

log = logging.getLogger("lineup.hub.hosted")

APIS = ("openai-responses", "openai-chat", "anthropic-messages")
STATUS_SECONDS = 30.0
"""How long what the engine host said of its engines (installed, version) is reused: asking
runs each engine's ``--version``."""

_SKIPPED = frozenset({"activity.output"})
"""What a conversation's record leaves out for an engine host: streamed output (the whole
is referenced by its entry, and a long conversation holds a great deal of it)."""


class HostedRecord:
    """What the hub recorded of a hosted agent's conversations, read for its engine host."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def conversation(self, workspace_id: str, conversation_id: str) -> list[RecordedEvent]:
        """The conversation's recorded events in log order, streamed output left out."""
        subject: Subject = ("conversation", conversation_id)
        found: list[RecordedEvent] = []
        after: int | None = None
        while True:
            page = await self._store.read(
                partial(_page, workspace_id=workspace_id, subject=subject, after=after)
            )
            found.extend(
                RecordedEvent(e.sequence, e.type, e.actor, e.payload, e.task_id)
                for e in page.events
                if e.type not in _SKIPPED
            )
            if not page.has_more or not page.events:
                return found
            after = page.events[-1].sequence


@dataclass(frozen=True, slots=True)
class HostedDefinition:
    """What an engine host needs to run one hosted agent."""

    agent_id: str
    workspace_id: str
    name: str
    engine: str
    cwd: str
    api: str
    base_url: str
    model: str
    credential: str = field(repr=False)
    """The agent's own credential, to connect to this hub like any agent."""
    api_key: str | None = field(default=None, repr=False)
    record: HostedRecord | None = field(default=None, repr=False, compare=False)
    """Where the host reads the agent's conversations as the hub recorded them."""


class EngineHost(Protocol):
    """Runs hosted agents next to the hub (``lineup.engines.hosting`` is the one LineUp has)."""

    def drivers(self) -> Sequence[str]:
        """The engines it has a driver for, installed here or not."""
        ...

    def statuses(self) -> Sequence[EngineStatus]:
        """Every engine it knows, runnable or not: installed, version, the command that adds
        it (what ``lineup engines doctor`` prints). Blocking: it runs the engines' binaries."""
        ...

    async def start(self, definition: HostedDefinition) -> None:
        """Run the agent from now on (returns at once; it connects in the background)."""
        ...

    async def stop(self, agent_id: str) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class NewHosted:
    name: str
    engine: str
    cwd: str
    api: str
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    project_id: str | None = None


@dataclass(frozen=True, slots=True)
class EngineChoice:
    """One engine as a person choosing where to host an agent sees it."""

    status: EngineStatus
    runnable: bool
    """LineUp has a driver for it: installed, it can host agents."""


def _host(hub: HubState) -> EngineHost:
    if hub.engine_host is None:
        raise Unavailable(
            "This hub runs no engines: start it with `lineup serve` (not as a bare app) to host "
            "agents."
        )
    host: EngineHost = hub.engine_host
    return host


def refuse_if_hosted(read: Reader, workspace_id: str, agent_id: str, action: str) -> None:
    """A hosted agent's credential is the hub's own, kept sealed for its host: revoking or
    rotating it by hand would leave the host retrying a dead credential. Deleting the hosted
    agent is how it ends."""
    row = hosted_store.get_hosted(read.connection, agent_id)
    if row is not None and row.workspace_id == workspace_id:
        raise Conflict(
            f"This agent is hosted by the hub: it cannot be {action} by hand. Delete the hosted "
            "agent instead (DELETE …/hosted-agents/{agentId}), which stops its engine too.",
            details={"reason": "hosted_agent", "agentId": agent_id},
        )


async def engine_choices(hub: HubState, *, fresh: bool = False) -> list[EngineChoice]:
    """The engines of this hub's host (none without one), read at most every
    ``STATUS_SECONDS`` unless ``fresh``."""
    host = hub.engine_host
    if host is None:
        return []
    now = time.monotonic()
    cached = hub.engine_statuses
    if fresh or cached is None or now - cached[0] > STATUS_SECONDS:
        found = tuple(await asyncio.to_thread(host.statuses))
        hub.engine_statuses = cached = (now, found)
    driven = set(host.drivers())
    return [EngineChoice(s, s.engine in driven) for s in cached[1]]


async def runnable_engines(hub: HubState) -> list[str]:
    """The engines a hosted agent can be given here: installed, with a driver."""
    choices = await engine_choices(hub)
    return sorted(c.status.engine for c in choices if c.runnable and c.status.installed)


async def _check_engine(hub: HubState, engine: str) -> None:
    """Refuses an engine this hub cannot run, saying what adds it when it knows. Asked
    through ``engine_choices`` only: probing the engines' binaries happens off the event loop,
    at most every ``STATUS_SECONDS``."""
    choice = await _choice_of(hub, engine)
    if choice is None:
        offered = ", ".join(await runnable_engines(hub)) or "none is installed"
        raise InvalidArgument(
            f"There is no engine {engine!r} here; choose one of {offered}.",
            details={"field": "engine"},
        )
    if not choice.runnable:
        raise InvalidArgument(
            f"This LineUp has no driver for the {engine} engine yet, so it cannot host it; "
            "choose another engine.",
            details={"field": "engine", "engine": engine},
        )
    if not choice.status.installed:
        fresh = await _choice_of(hub, engine, fresh=True)  # installed since it was asked?
        if fresh is None or not fresh.status.installed:
            raise InvalidArgument(
                f"The {engine} engine is not installed on this machine. Install it with "
                f"`{choice.status.install_hint}`, then choose it again.",
                details={"field": "engine", "engine": engine},
            )


async def _choice_of(hub: HubState, engine: str, *, fresh: bool = False) -> EngineChoice | None:
    choices = await engine_choices(hub, fresh=fresh)
    return next((c for c in choices if c.status.engine == engine), None)


async def create(hub: HubState, person: Person, new: NewHosted) -> hosted_store.HostedAgentRow:
    host = _host(hub)
    if not new.name.strip():
        raise InvalidArgument("Give the agent a name.", details={"field": "name"})
    await _check_engine(hub, new.engine)
    if new.api not in APIS:
        raise InvalidArgument(
            f"api must be one of {', '.join(APIS)}.", details={"field": "model.api"}
        )
    url = urlsplit(new.base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise InvalidArgument("baseUrl must be an http(s) URL.", details={"field": "model.baseUrl"})
    if not new.model.strip():
        raise InvalidArgument(
            "Name the model the engine should use.", details={"field": "model.model"}
        )
    if new.project_id is not None:
        await hub.store.read(lambda r: project_to_start_in(r, person, str(new.project_id)))
    cwd = confine(new.cwd, hub.settings.engine_roots)
    agent_id = new_id("agent")
    credential = new_token(CREDENTIAL_PREFIX)
    keyring = hub.keyring
    sealed_credential = keyring.seal(credential, hosted_store.credential_context(agent_id))
    sealed_key = (
        keyring.seal(new.api_key, hosted_store.api_key_context(agent_id)) if new.api_key else None
    )
    name = new.name.strip()[:100]

    def job(w: Writing) -> hosted_store.HostedAgentRow:
        ws = person.workspace_id
        w.append(
            ws,
            facts.AgentPairedPayload(
                agent_id=agent_id,
                name=name,
                runtime=f"engine:{new.engine}",
                agent_version=None,
                awaiting_confirmation=True,
                capabilities=None,
            ),
            actor=person.actor,
        )
        w.append(
            ws,
            facts.AgentConfirmedPayload(
                agent_id=agent_id,
                name=name,
                confirmed_by=person.actor,
                target_agent_id=agent_id,
            ),
            actor=person.actor,
        )
        store_auth.insert_agent_credential(
            w.connection,
            AgentCredentialRecord(
                id=new_id("cred"),
                agent_id=agent_id,
                workspace_id=ws,
                secret_hash=token_hash(credential),
                created_at=w.now_ms,
            ),
        )
        row = hosted_store.HostedAgentRow(
            agent_id=agent_id,
            workspace_id=ws,
            engine=new.engine,
            cwd=cwd,
            api=new.api,
            base_url=new.base_url,
            model=new.model,
            sealed_credential=sealed_credential,
            sealed_api_key=sealed_key,
            created_by=person.actor,
            created_at=w.now_ms,
            project_id=new.project_id,
        )
        if new.project_id is not None:  # checked again in the write: it may have changed
            project_to_start_in(w.read, person, new.project_id)
        hosted_store.insert_hosted(w.connection, row)
        return row

    row = await hub.recorder.run(job)
    await host.start(_definition(hub, row, name))
    return row


def may_delete(person: Person, row: hosted_store.HostedAgentRow) -> bool:
    """The workspace's owners and whoever created it: it runs on the hub's machine."""
    return person.role == "owner" or row.created_by == person.actor


async def delete(hub: HubState, person: Person, agent_id: str) -> None:
    """Stop the engine and revoke the agent (its history stays); the definition goes."""
    row = await get(hub, person, agent_id)
    if not may_delete(person, row):
        raise Forbidden(
            "Only the workspace's owners and the person who created a hosted agent delete it."
        )

    def job(w: Writing) -> None:
        revoke(w, person, row.agent_id)
        hosted_store.delete_hosted(w.connection, row.agent_id)

    await hub.recorder.run(job)
    if hub.engine_host is not None:
        await hub.engine_host.stop(agent_id)


async def get(hub: HubState, person: Person, agent_id: str) -> hosted_store.HostedAgentRow:
    row = await hub.store.read(lambda r: hosted_store.get_hosted(r.connection, agent_id))
    if row is None or row.workspace_id != person.workspace_id:
        raise NotFound(f"No hosted agent {agent_id!r} in this workspace.")
    return row


async def listed(hub: HubState, person: Person) -> list[hosted_store.HostedAgentRow]:
    return await hub.store.read(
        lambda r: hosted_store.list_hosted(r.connection, person.workspace_id)
    )


def _definition(hub: HubState, row: hosted_store.HostedAgentRow, name: str) -> HostedDefinition:
    keyring = hub.keyring
    return HostedDefinition(
        agent_id=row.agent_id,
        workspace_id=row.workspace_id,
        name=name,
        engine=row.engine,
        cwd=row.cwd,
        api=row.api,
        base_url=row.base_url,
        model=row.model,
        credential=keyring.open(
            row.sealed_credential, hosted_store.credential_context(row.agent_id)
        ),
        api_key=(
            keyring.open(row.sealed_api_key, hosted_store.api_key_context(row.agent_id))
            if row.sealed_api_key is not None
            else None
        ),
        record=HostedRecord(hub.store),
    )


def _page(r: Reader, *, workspace_id: str, subject: Subject, after: int | None) -> SubjectPage:
    return r.subject_events(workspace_id, subject, after=after, limit=1000)


def _agent_of(r: Reader, row: hosted_store.HostedAgentRow) -> Agent | None:
    return r.get_agent(row.workspace_id, row.agent_id)


async def start_all(hub: HubState) -> int:
    """At the hub's start: hand every hosted agent to the engine host. How many."""
    if hub.engine_host is None:
        return 0
    rows = await hub.store.read(lambda r: hosted_store.list_hosted(r.connection))
    started = 0
    for row in rows:
        agent = await hub.store.read(partial(_agent_of, row=row))
        if agent is None or agent.status == "revoked":
            continue
        try:
            await hub.engine_host.start(_definition(hub, row, agent.name))
        except Exception as exc:  # one broken definition does not stop the others
            log.warning("hosted agent %s did not start: %s", row.agent_id, exc)
            continue
        started += 1
    return started
