"""Hosted agents: a person creates an agent the hub runs itself (an engine in a working
directory of this machine, talking to a model endpoint), lists them, and deletes one; and
sees what this hub can host — its engines (installed or not, their versions and the command
that adds each) and the directories engines may work in.

The endpoint's API key goes into the hub's secret store; no answer ever carries it back
(``hasApiKey`` says whether one is held). The agent itself appears in the agents list, confirmed,
and is talked to like any other.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Response
from pydantic import Field

from lineup.hub import hosted
from lineup.hub.actors import Person
from lineup.hub.api.deps import Body, Hub, Member
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import Timestamp, View
from lineup.protocol.times import iso
from lineup.store.hosted import HostedAgentRow

router = APIRouter(prefix="/api", tags=["hosted agents"])

Api = Literal["openai-responses", "openai-chat", "anthropic-messages"]


class ModelSettings(Body):
    api: Api
    base_url: Annotated[str, Field(min_length=1, max_length=500)]
    model: Annotated[str, Field(min_length=1, max_length=200)]
    api_key: Annotated[str | None, Field(min_length=1, max_length=1000, repr=False)] = None
    """Kept in the hub's secret store; never shown again."""


class NewHostedAgent(Body):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    engine: Annotated[str, Field(min_length=1, max_length=32)]
    cwd: Annotated[str, Field(min_length=1, max_length=1000)]
    """An absolute directory under the hub's allowed roots (``LINEUP_ENGINE_ROOTS``)."""
    project_id: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    """The project whose conversations it works in (the person is one of its owners or
    editors); none: any conversation of the workspace."""
    model: ModelSettings


class ModelView(View):
    api: str
    base_url: str
    model: str
    has_api_key: bool


class HostedAgentView(View):
    agent_id: str
    engine: str
    cwd: str
    project_id: str | None
    """The project its conversations start in; none: any conversation of the workspace."""
    model: ModelView
    created_by: str
    """The actor (``user:…``) who created it."""
    created_at: Timestamp
    may_delete: bool
    """Whether the person asking may delete it (the workspace's owners and its creator)."""


class HostedAgentList(View):
    hosted_agents: list[HostedAgentView]
    engines: list[str]
    """The engines this hub can run (empty: it hosts none)."""


class EngineView(View):
    name: str
    runnable: bool
    """LineUp has a driver for it: once installed, it can host agents."""
    installed: bool
    version: str | None
    install_hint: str
    """The one command that adds it to the hub's machine (``lineup engines doctor``)."""


class EngineCatalog(View):
    hosting: bool
    """Whether this hub runs engines at all (``lineup serve`` without ``--no-engines``)."""
    engines: list[EngineView]
    roots: list[str]
    """The directories a hosted agent's working directory must be in (``LINEUP_ENGINE_ROOTS``)."""


def _view(row: HostedAgentRow, person: Person) -> HostedAgentView:
    return HostedAgentView(
        agent_id=row.agent_id,
        engine=row.engine,
        cwd=row.cwd,
        project_id=row.project_id,
        model=ModelView(
            api=row.api,
            base_url=row.base_url,
            model=row.model,
            has_api_key=row.sealed_api_key is not None,
        ),
        created_by=row.created_by,
        created_at=iso(row.created_at) or "",
        may_delete=hosted.may_delete(person, row),
    )


PATH = "/workspaces/{workspace_id}/hosted-agents"


@router.get(PATH, **answers(HostedAgentList, 400, 401, 403))
async def list_hosted(hub: Hub, person: Member) -> HostedAgentList:
    """The workspace's hosted agents, and the engines this hub can run."""
    rows = await hosted.listed(hub, person)
    engines = await hosted.runnable_engines(hub)
    return HostedAgentList(hosted_agents=[_view(r, person) for r in rows], engines=engines)


@router.post(PATH, status_code=201, **answers(HostedAgentView, 400, 401, 403, 404, 413, 503))
async def create_hosted(body: NewHostedAgent, hub: Hub, person: Member) -> HostedAgentView:
    """Create a hosted agent: it appears in the agents list, confirmed, and its engine starts
    on the first message of each conversation."""
    row = await hosted.create(
        hub,
        person,
        hosted.NewHosted(
            name=body.name,
            engine=body.engine,
            cwd=body.cwd,
            api=body.model.api,
            base_url=body.model.base_url,
            model=body.model.model,
            api_key=body.model.api_key,
            project_id=body.project_id,
        ),
    )
    return _view(row, person)


@router.get(f"{PATH}/{{agent_id}}", **answers(HostedAgentView, 400, 401, 403, 404))
async def get_hosted(agent_id: str, hub: Hub, person: Member) -> HostedAgentView:
    return _view(await hosted.get(hub, person, agent_id), person)


@router.delete(f"{PATH}/{{agent_id}}", status_code=204, **answers(None, 400, 401, 403, 404))
async def delete_hosted(agent_id: str, hub: Hub, person: Member) -> Response:
    """Stop its engines and revoke the agent; its conversations and tasks stay. The
    workspace's owners and the person who created it may."""
    await hosted.delete(hub, person, agent_id)
    return Response(status_code=204)


@router.get("/workspaces/{workspace_id}/engines", **answers(EngineCatalog, 400, 401, 403))
async def engine_catalog(hub: Hub, person: Member) -> EngineCatalog:
    """The engines this hub knows — runnable, installed, version, how to add each — and the
    directories hosted agents may work in."""
    choices = await hosted.engine_choices(hub)
    return EngineCatalog(
        hosting=hub.engine_host is not None,
        engines=[
            EngineView(
                name=c.status.engine,
                runnable=c.runnable,
                installed=c.status.installed,
                version=c.status.version,
                install_hint=c.status.install_hint,
            )
            for c in choices
        ],
        roots=[str(r) for r in hub.settings.engine_roots],
    )
