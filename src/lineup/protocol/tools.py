"""The tool protocol of seed 000 §4: tool definitions, tool.list, tool.call, tool.result.

Tools come in three types: ``app`` (stateful, with an ``instance_id`` lifecycle), ``toolset``
(stateless, several actions) and ``action`` (one action). Their ``inputSchema`` is JSON Schema,
as in MCP, and arguments are validated against it on both sides — by this module, which does no
I/O. Field names follow the seed exactly (``call_id``, ``inputSchema``), not LAP's camelCase.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, field_validator

from lineup.protocol.errors import InvalidArgument, NotFound

ToolName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$")]


class _SeedModel(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _checked_schema(schema: dict[str, Any]) -> dict[str, Any]:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"inputSchema is not a valid JSON Schema: {exc.message}") from None
    if schema.get("type", "object") != "object":
        raise ValueError("inputSchema must describe an object")
    return schema


class ToolAction(_SeedModel):
    name: ToolName
    description: Annotated[str, Field(max_length=2000)] = ""
    input_schema: dict[str, Any] = Field(alias="inputSchema")

    _check = field_validator("input_schema")(_checked_schema)


class ActionTool(_SeedModel):
    """A single-command tool (``choice``, ``confirm``, ``input``); ``action`` may be omitted."""

    name: ToolName
    type: Literal["action"]
    description: Annotated[str, Field(max_length=2000)] = ""
    input_schema: dict[str, Any] = Field(alias="inputSchema")

    _check = field_validator("input_schema")(_checked_schema)


class ToolsetTool(_SeedModel):
    """A stateless set of actions (``calculator``)."""

    name: ToolName
    type: Literal["toolset"]
    description: Annotated[str, Field(max_length=2000)] = ""
    actions: Annotated[list[ToolAction], Field(min_length=1, max_length=64)]


class AppTool(_SeedModel):
    """A stateful application (``canvas``): ``open`` returns an ``instance_id`` later calls use."""

    name: ToolName
    type: Literal["app"]
    description: Annotated[str, Field(max_length=2000)] = ""
    actions: Annotated[list[ToolAction], Field(min_length=1, max_length=64)]


ToolDefinition = Annotated[ActionTool | ToolsetTool | AppTool, Field(discriminator="type")]


class ToolList(_SeedModel):
    """``tool.list``: one structure for registering tools and for answering a query."""

    tools: Annotated[list[ToolDefinition], Field(max_length=256)]


class ToolCall(_SeedModel):
    call_id: Annotated[str, Field(min_length=1, max_length=128)]
    name: ToolName
    action: ToolName | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    timeout_ms: Annotated[int, Field(ge=1, le=7 * 24 * 3600 * 1000)] | None = None


class ToolResultBody(_SeedModel):
    """Results carry ``message`` by convention (seed 000 §4.5); tools may add fields."""

    message: str


class ToolError(_SeedModel):
    code: str
    message: str


class ToolResult(_SeedModel):
    call_id: Annotated[str, Field(min_length=1, max_length=128)]
    name: ToolName
    action: ToolName | None = None
    result: ToolResultBody | None = None
    error: ToolError | None = None


def find_action_schema(
    tools: Mapping[str, ActionTool | ToolsetTool | AppTool], name: str, action: str | None
) -> dict[str, Any]:
    """The inputSchema a call must satisfy, or ``not_found`` naming what is missing."""
    tool = tools.get(name)
    if tool is None:
        raise NotFound(f"No tool named {name!r} is available.", details={"tool": name})
    if isinstance(tool, ActionTool):
        if action not in (None, tool.name, "select"):
            raise NotFound(
                f"Tool {name!r} has one action; {action!r} is not it.",
                details={"tool": name, "action": action},
            )
        return tool.input_schema
    if action is None:
        raise InvalidArgument(
            f"Tool {name!r} is a {tool.type}; the call must name one of its actions.",
            details={"tool": name, "actions": [a.name for a in tool.actions]},
        )
    for candidate in tool.actions:
        if candidate.name == action:
            return candidate.input_schema
    raise NotFound(
        f"Tool {name!r} has no action {action!r}.",
        details={"tool": name, "action": action, "actions": [a.name for a in tool.actions]},
    )


def validate_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Raise ``invalid_argument`` listing every way ``arguments`` break ``schema``."""
    validator = Draft202012Validator(schema)
    problems = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if problems:
        details = [
            {"path": ".".join(str(p) for p in error.absolute_path), "problem": error.message}
            for error in problems[:20]
        ]
        first = details[0]
        where = f" at {first['path']!r}" if first["path"] else ""
        raise InvalidArgument(
            f"The arguments do not match the tool's inputSchema{where}: {first['problem']}",
            details={"problems": details},
        )


def validate_call(tools: Mapping[str, ActionTool | ToolsetTool | AppTool], call: ToolCall) -> None:
    validate_arguments(find_action_schema(tools, call.name, call.action), call.arguments)
