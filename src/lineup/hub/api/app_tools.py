"""Tools on people's apps: registration, pending calls and their answers, canvases.

* ``GET /tools`` — what agents may call: the union of the apps' registrations, or the
  built-in catalogue; and which devices registered what.
* ``PUT /devices/{deviceId}/tools`` — an app registers its tools (seed 000 §4.6 ``tool.list``).
* ``GET /tool-calls`` / ``GET /tool-calls/{id}`` — calls, pending or answered.
* ``POST /tool-calls/{id}/result`` — an app answers (``result`` or ``error``); the first
  answer wins, the same answer again changes nothing, a different one is a ``conflict``.
* ``GET /canvases`` / ``GET /canvases/{instanceId}`` — canvas instances with their strokes.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import Field, ValidationError

from lineup.hub import app_tools as tools
from lineup.hub import commands
from lineup.hub.api import responses, views
from lineup.hub.api.deps import Body, Hub, IdempotencyKey, Member
from lineup.hub.api.openapi import answers
from lineup.hub.sight import Sight
from lineup.protocol import builtin_tools as builtin
from lineup.protocol.errors import NotFound
from lineup.protocol.tools import ToolError, ToolList, ToolResult
from lineup.store import Reader

router = APIRouter(prefix="/api/workspaces/{workspace_id}", tags=["tools"])

STATUSES = "^(pending|completed|failed|expired|cancelled)$"


class Registration(Body):
    """A ``tool.list`` (seed 000 §4.6) from one device, with an optional name to show."""

    tools: Annotated[list[dict[str, Any]], Field(max_length=256)]
    name: Annotated[str, Field(max_length=100)] | None = None


class ToolAnswer(Body):
    """``tool.result`` fields (seed 000 §4.5) minus ``call_id``, which is in the path."""

    result: dict[str, Any] | None = None
    error: ToolError | None = None
    name: str | None = None
    action: str | None = None
    device_id: Annotated[str, Field(max_length=64)] | None = None


@router.get("/tools", **answers(responses.AvailableTools, 400, 401, 403))
async def available(hub: Hub, person: Member) -> dict[str, Any]:
    """The tools agents in this workspace may call, and the devices that registered them."""

    def read(r: Reader) -> dict[str, Any]:
        devices = r.list_tool_devices(person.workspace_id)
        listed, is_builtin = tools.tools_of(devices)
        return {
            "tools": listed,
            "builtin": is_builtin,
            "devices": [views.tool_device(d) for d in devices],
        }

    return await hub.store.read(read)


@router.get("/tools/builtin", **answers(responses.ToolDefinitions, 400, 401, 403))
async def builtin_catalogue(hub: Hub, person: Member) -> dict[str, Any]:
    """The built-in catalogue (choice, confirm, input, calculator, canvas)."""
    return {"tools": list(builtin.BUILTIN_DEFINITIONS)}


@router.put("/devices/{device_id}/tools", **answers(responses.Registered, 400, 401, 403, 409, 413))
async def register(
    device_id: str, body: Registration, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Register (or replace) the tools this device offers; an empty list withdraws them."""
    try:
        listing = ToolList.model_validate({"tools": body.tools})
    except ValidationError as exc:
        raise tools.invalid_payload(exc, "tool.list") from None
    recorded = await hub.recorder.run(
        lambda w: tools.register_device(w, person, device_id, listing, name=body.name, event_id=key)
    )
    device = recorded.value
    return {
        "device": views.tool_device(device) if device is not None else None,
        "changed": recorded.result is not None and not recorded.duplicate,
        "sequence": recorded.sequence,
    }


@router.get("/tool-calls", **answers(responses.ToolCalls, 400, 401, 403))
async def list_calls(
    hub: Hub,
    person: Member,
    status: Annotated[str | None, Query(pattern=STATUSES)] = None,
    conversation_id: Annotated[str | None, Query(alias="conversationId", max_length=128)] = None,
    task_id: Annotated[str | None, Query(alias="taskId", max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 200,
) -> dict[str, Any]:
    def read(r: Reader) -> list[Any]:
        sight = Sight.load(r, person)
        rows = r.list_tool_calls(
            person.workspace_id,
            statuses=[status] if status else None,
            conversation_id=conversation_id,
            task_id=task_id,
            limit=limit,
        )
        return [c for c in rows if sight.sees_item(c.conversation_id, c.task_id)]

    rows = await hub.store.read(read)
    return {"toolCalls": [views.tool_call(row) for row in rows]}


@router.get("/tool-calls/{tool_call_id}", **answers(responses.ToolCall, 400, 401, 403, 404))
async def get_call(tool_call_id: str, hub: Hub, person: Member) -> dict[str, Any]:
    def read(r: Reader) -> Any:
        row = r.get_tool_call(person.workspace_id, tool_call_id)
        if row is None or not Sight.load(r, person).sees_item(row.conversation_id, row.task_id):
            return None
        return row

    row = await hub.store.read(read)
    if row is None:
        raise NotFound(f"No tool call {tool_call_id!r} in this workspace.")
    return views.tool_call(row)


@router.post(
    "/tool-calls/{tool_call_id}/result",
    **answers(responses.ToolCall, 400, 401, 403, 404, 409, 413),
)
async def answer(
    tool_call_id: str, body: ToolAnswer, hub: Hub, person: Member, key: IdempotencyKey
) -> dict[str, Any]:
    """Answer a call once. The same answer again changes nothing; a different one is a
    ``conflict`` naming who answered first; after the call's timeout, a ``conflict`` too."""
    row = await hub.store.read(lambda r: r.get_tool_call(person.workspace_id, tool_call_id))
    if row is None:
        raise NotFound(f"No tool call {tool_call_id!r} in this workspace.")
    wire: dict[str, Any] = {"call_id": tool_call_id, "name": body.name or row.name}
    if body.action is not None:
        wire["action"] = body.action
    if body.result is not None:
        wire["result"] = body.result
    if body.error is not None:
        wire["error"] = body.error.wire()
    try:
        result = ToolResult.model_validate(wire)
    except ValidationError as exc:
        raise tools.invalid_payload(exc, "tool.result") from None
    recorded = await hub.recorder.run(
        lambda w: tools.complete_call(
            w, person, tool_call_id, result, device_id=body.device_id, event_id=key
        )
    )
    if isinstance(recorded.value, commands.Expired):
        raise recorded.value.refusal
    return views.tool_call(recorded.value)  # the row as the answer's transaction left it


@router.get("/canvases", **answers(responses.Canvases, 400, 401, 403))
async def list_canvases(
    hub: Hub,
    person: Member,
    conversation_id: Annotated[str | None, Query(alias="conversationId", max_length=128)] = None,
    status: Annotated[str | None, Query(pattern="^(open|closed)$")] = None,
) -> dict[str, Any]:
    def read(r: Reader) -> dict[str, Any]:
        sight = Sight.load(r, person)
        canvases = [
            c
            for c in r.list_canvases(
                person.workspace_id,
                conversation_id=conversation_id,
                statuses=[status] if status else None,
            )
            if sight.sees_item(c.conversation_id, c.task_id)
        ]
        return {
            "canvases": [
                views.canvas(c, r.list_canvas_ops(person.workspace_id, c.id)) for c in canvases
            ]
        }

    return await hub.store.read(read)


@router.get("/canvases/{instance_id}", **answers(responses.Canvas, 400, 401, 403, 404))
async def get_canvas(instance_id: str, hub: Hub, person: Member) -> dict[str, Any]:
    def read(r: Reader) -> dict[str, Any]:
        canvas = r.get_canvas(person.workspace_id, instance_id)
        if canvas is None or not Sight.load(r, person).sees_item(
            canvas.conversation_id, canvas.task_id
        ):
            raise NotFound(f"No canvas {instance_id!r} in this workspace.")
        return views.canvas(canvas, r.list_canvas_ops(person.workspace_id, instance_id))

    return await hub.store.read(read)
