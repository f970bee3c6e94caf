"""What a hosted engine may ask of LineUp during a turn: its tools, and its approvals.

An engine session is offered LineUp's tools (its :class:`~lineup.engines.runtime.SessionSpec`
``tools``):

* the **questions** — ``ask_approval``, ``ask_choice``, ``ask_input``, ``ask_review`` — which
  put a card to the person and return their answer;
* the people's **app tools** — ``list_app_tools`` and ``call_app_tool`` — which are
  ``tool.list`` / ``tool.call`` on the person's LineUp apps;
* the agent's **governed capabilities**, one tool each, which go through the hub's core
  (``capability.invoke``: policy, a confirm card bound to the parameters' digest for a
  write, the execution, the audit entry) and return its outcome.

The first two are defined once for every model-facing host in
:mod:`lineup.protocol.question_tools` (the MCP server offers the same). :class:`MessageHost`
answers the engine's calls of them, and its approval requests, through the SDK context of the
message or task the turn runs for: every question, tool call and invocation is a journaled
step of that handler, so it survives reconnects and is never asked twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    ToolInvocation,
    ToolOutcome,
    ToolSpec,
)
from lineup.protocol import question_tools as q
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.codec import describe_validation_error
from lineup.protocol.errors import LineupError
from lineup.protocol.interaction import MAX_INPUT_JSON, Interaction
from lineup.sdk import MessageContext, TaskContext

log = logging.getLogger("lineup.engines")

Context = MessageContext | TaskContext
"""The SDK context a turn runs for: a person's message, or a task given to the agent."""

INSTRUCTIONS = (
    "You work for people who follow you in LineUp, often from a phone. When you need a "
    "person's decision, use LineUp's tools: ask_approval, ask_choice, ask_input or "
    "ask_review (each waits for the answer). list_app_tools and call_app_tool reach the "
    "tools of their LineUp apps. The other LineUp tools are capabilities of outside systems, "
    "governed by LineUp: a change may wait for a person's approval."
)
"""What every hosted engine is told about LineUp before the conversation."""

_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64
"""Engines (and the models behind them) take tool names of up to 64 ``A-Z a-z 0-9 _ -``."""


@dataclass(frozen=True, slots=True)
class CapabilityTool:
    """A governed capability as an engine's tool."""

    spec: ToolSpec
    capability: str
    instances: tuple[str, ...]

    @property
    def wrapped(self) -> bool:
        """With several instances the arguments are ``{instance, params}``."""
        return len(self.instances) > 1


def capability_tool(capability: CapabilitySpec) -> CapabilityTool:
    name = _TOOL_NAME.sub("_", capability.id.replace(".", "__"))
    if len(name) > MAX_TOOL_NAME:
        digest = hashlib.sha256(capability.id.encode()).hexdigest()[:8]
        name = f"{name[: MAX_TOOL_NAME - 9]}_{digest}"
    effect = (
        "a change: a person may have to approve it" if capability.effect == "write" else ("a read")
    )
    description = f"{capability.description} (LineUp capability {capability.id}; {effect}.)"
    schema: Mapping[str, Any] = capability.input_schema
    instances = tuple(capability.instances)
    if len(instances) > 1:
        schema = {
            "type": "object",
            "properties": {
                "instance": {"type": "string", "enum": list(instances)},
                "params": capability.input_schema,
            },
            "required": ["instance", "params"],
        }
    return CapabilityTool(ToolSpec(name, description, schema), capability.id, instances)


def question_specs() -> list[ToolSpec]:
    """The questions and the app tools, as every hosted session is offered them."""
    return [ToolSpec(t.name, t.description, t.input_schema()) for t in (*q.QUESTIONS, *q.APP_TOOLS)]


def tool_specs(capabilities: Sequence[CapabilityTool]) -> list[ToolSpec]:
    return [*question_specs(), *(c.spec for c in capabilities)]


class MessageHost:
    """Answers an engine's approval requests and LineUp tool calls during one turn, through
    the context of the message or task the turn runs for."""

    def __init__(self, context: Context, capabilities: Sequence[CapabilityTool] = ()) -> None:
        self.context = context
        self.capabilities = {c.spec.name: c for c in capabilities}

    # --- approvals ------------------------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        card = approval_card(request)
        approval = await self.context.ask_approval(**card)
        if not approval.approved:
            return ApprovalDecision(
                allow=False, reason=approval.note or "The person denied it in LineUp."
            )
        updated = approval.input if request.editable else None
        return ApprovalDecision(allow=True, updated_input=updated, reason=approval.note)

    # --- tools ----------------------------------------------------------------------------

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        try:
            if call.name in q.BY_NAME:
                return await self._lineup_tool(call.name, call.arguments)
            capability = self.capabilities.get(call.name)
            if capability is not None:
                return await self._invoke(capability, call.arguments)
        except ValidationError as invalid:
            message, problems = describe_validation_error(invalid)
            return _failed("invalid_argument", f"Invalid arguments: {message}", problems)
        except LineupError as error:
            return _failed(error.code.value, error.message)
        return _failed("not_found", f"LineUp offers no tool {call.name!r}.")

    async def _lineup_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        model = q.BY_NAME[name].arguments.model_validate(dict(arguments))
        context = self.context
        if isinstance(model, q.ListAppTools):
            return _ok({"tools": await context.tools.list()})
        if isinstance(model, q.CallAppTool):
            reply = await context.tools.call(
                model.name, model.action, arguments=model.arguments, timeout_ms=model.timeout_ms
            )
            return _ok({"message": reply.message, "data": reply.data})
        assert isinstance(model, q.AskApproval | q.AskChoice | q.AskInput | q.AskReview)
        card = q.card(model)
        resolved = await context.ask(card)
        asked = Interaction.model_validate({"id": resolved.interaction_id, **card})
        answer = q.answer(asked, resolved.response)
        answer["answered_by"] = resolved.responded_by_name or resolved.responded_by
        return _ok(answer)

    async def _invoke(self, tool: CapabilityTool, arguments: Mapping[str, Any]) -> ToolOutcome:
        params: Mapping[str, Any] = arguments
        instance = tool.instances[0] if len(tool.instances) == 1 else None
        if tool.wrapped:
            instance = str(arguments.get("instance") or "") or None
            inner = arguments.get("params")
            params = inner if isinstance(inner, Mapping) else {}
        outcome = await self.context.invoke(tool.capability, dict(params), instance=instance)
        result: dict[str, Any] = {"status": outcome.status.value}
        if outcome.output is not None:
            result["output"] = outcome.output
        if outcome.error is not None:
            result["error"] = outcome.error.model_dump(mode="json", exclude_none=True)
        if outcome.execution_id is not None:
            result["execution_id"] = outcome.execution_id
        return ToolOutcome(text=json.dumps(result, ensure_ascii=False), ok=outcome.succeeded)


def approval_card(request: ApprovalRequest) -> dict[str, Any]:
    """An engine's approval request as ``ask_approval``'s arguments: the command and its
    directory, or the diff, or the tool and its input — and, when the engine takes an edited
    one, the input it will use (a command's, a file change's, a tool's) offered for editing."""
    details: dict[str, Any] = {"kind": request.kind}
    card: dict[str, Any] = {
        "title": request.title[:200] or "Allow the engine to go on?",
        "description": request.reason,
        "risk": "high" if request.kind == "command" else "medium",
        "approve_label": "Allow",
        "reject_label": "Deny",
    }
    if request.kind == "command":
        details.update(command=request.command, cwd=request.cwd)
        card["content"] = f"$ {request.command or ''}"
        card["impact"] = f"Runs in {request.cwd}." if request.cwd else None
    elif request.kind == "file_change":
        details["cwd"] = request.cwd
        card["content"] = request.diff
        card["impact"] = f"Changes files under {request.cwd}." if request.cwd else None
    else:
        details["tool"] = request.tool
        inputs = dict(request.input or {})
        card["content"] = json.dumps(inputs, ensure_ascii=False, indent=2) if inputs else None
        card["impact"] = (
            f"Runs the engine's {request.tool} tool with this input." if request.tool else None
        )
    if request.editable and _fits(request.input or {}):
        card["editable_input"] = dict(request.input or {})  # what the engine will use
    card["details"] = {k: v for k, v in details.items() if v is not None}
    if card["content"] is not None and len(card["content"]) > 20_000:
        card["content"] = card["content"][:19_990] + "\n…"
    return card


def _fits(value: Mapping[str, Any]) -> bool:
    """Whether an input is small enough to offer for editing (a card's limit); a larger one
    (a ``Write`` of a big file) is allowed or denied as proposed."""
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    return size <= MAX_INPUT_JSON


def _ok(value: Any) -> ToolOutcome:
    return ToolOutcome(text=json.dumps(value, ensure_ascii=False))


def _failed(code: str, message: str, problems: Any = None) -> ToolOutcome:
    error: dict[str, Any] = {"code": code, "message": message}
    if problems:
        error["problems"] = problems
    return ToolOutcome(text=json.dumps({"error": error}, ensure_ascii=False), ok=False)
