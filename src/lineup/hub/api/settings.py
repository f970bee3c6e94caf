"""Layered settings: every key's effective value for a place, and changes to one level."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from pydantic import Field, JsonValue

from lineup.domain import settings as layered
from lineup.domain.settings import Level
from lineup.hub import scoped_settings
from lineup.hub.api.deps import Hub, Member
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import View
from lineup.hub.recorder import Writing
from lineup.store import Reader

router = APIRouter(prefix="/api/workspaces/{workspace_id}", tags=["settings"])

Id = Annotated[str, Path(max_length=128)]


class SettingView(View):
    key: str
    description: str
    value_schema: dict[str, Any] = Field(alias="schema")
    default: JsonValue
    levels: list[Level] = Field(description="Where it may be set, least specific first.")
    value: JsonValue = Field(description="The effective value here.")
    level: Level = Field(description="Where `value` comes from.")


class SettingScopes(View):
    workspace: str
    project: str | None
    user: str | None
    conversation: str | None


class SettingsView(View):
    scopes: SettingScopes
    settings: list[SettingView]
    values: dict[str, dict[str, JsonValue]] = Field(
        description="The values set at each level of this place, by level then key."
    )


class LevelValues(View):
    level: Level
    scope_id: str
    values: dict[str, JsonValue]


@router.get("/settings", **answers(SettingsView, 400, 401, 403, 404))
async def get_settings(
    hub: Hub,
    person: Member,
    project_id: Annotated[str | None, Query(alias="projectId", max_length=128)] = None,
    conversation_id: Annotated[str | None, Query(alias="conversationId", max_length=128)] = None,
) -> SettingsView:
    """Every setting's effective value for the workspace, a project or a conversation."""

    def read(r: Reader) -> SettingsView:
        place = scoped_settings.place_for(r, person, project_id, conversation_id)
        layers = scoped_settings.layers_of(r, hub.settings, place)
        found = scoped_settings.resolve(layers)
        return SettingsView.model_validate(
            {
                "scopes": {
                    "workspace": place.workspace_id,
                    "project": place.project_id,
                    "user": place.user_id,
                    "conversation": place.conversation_id,
                },
                "settings": [
                    {
                        "key": key.name,
                        "description": key.description,
                        "schema": dict(key.schema),
                        "default": layers["system"].get(key.name, key.default),
                        "levels": [lv for lv in layered.SETTABLE if lv in key.levels],
                        "value": found[key.name].value,
                        "level": found[key.name].level,
                    }
                    for key in layered.CATALOGUE.values()
                ],
                "values": {lv: v for lv, v in layers.items() if lv != "system"},
            }
        )

    return await hub.store.read(read)


@router.put("/settings/{level}/{scope_id}", **answers(LevelValues, 400, 401, 403, 404, 413))
async def put_settings(
    hub: Hub,
    person: Member,
    level: Annotated[str, Path(max_length=20)],
    scope_id: Id,
    body: Annotated[dict[str, JsonValue], Body()],
) -> LevelValues:
    """Set values at one level (``null`` clears one), all or none."""

    def job(w: Writing) -> LevelValues:
        values = scoped_settings.change(w, person, level, scope_id, body)
        return LevelValues.model_validate({"level": level, "scope_id": scope_id, "values": values})

    return await hub.recorder.run(job)
