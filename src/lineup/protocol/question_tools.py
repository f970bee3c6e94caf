"""LineUp's questions and the people's app tools, as tools a model calls.

Two places offer them to a model: the MCP server (``lineup mcp``) to MCP hosts, and hosted
agents (``lineup.engines.hosting``) to the engines LineUp runs. Both take the same arguments,
put the same card to the person and tell the model the answer in the same words; this module
is that one definition — the argument models (whose JSON Schemas are the tools' input
schemas), the card each question makes, and the answer as the model reads it. Pure:
arguments in, card fields and answers out.

==============  ===============================================  ===========================
tool            card                                             the model reads
==============  ===============================================  ===========================
ask_approval    ``approval`` with the two labelled options       ``approved``, ``note``
ask_choice      ``choice``; options ``option-1`` … in order      ``choices`` (labels), ``other``
ask_input       ``input`` with its format, pattern, placeholder  ``text``
ask_review      ``review`` with ``approve``/``request_changes``  ``approved``,
                                                                 ``changes_requested``,
                                                                 ``comment``
list_app_tools  — (``tool.list``)                                the apps' tool definitions
call_app_tool   — (``tool.call``)                                the app's ``message``, ``data``
==============  ===============================================  ===========================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lineup.protocol.interaction import Interaction, InteractionResponse

Title = Annotated[str, Field(min_length=1, max_length=200, description="The question, short.")]
Text = Annotated[str, Field(max_length=20_000)]
Label = Annotated[str, Field(min_length=1, max_length=200)]
Risk = Literal["low", "medium", "high"]
InputFormat = Literal["text", "email", "url", "number", "integer"]
Why = Annotated[Text | None, Field(description="Why the person is asked.")]
Impact = Annotated[Text | None, Field(description="What happens if approved.")]
Options = Annotated[
    list[Label], Field(min_length=2, max_length=5, description="2 to 5 option labels.")
]
Recommended = Annotated[str | None, Field(description="One of the options.")]
AllowOther = Annotated[bool, Field(description="The person may write their own.")]
Multiple = Annotated[bool, Field(description="The person may pick several.")]
Pattern = Annotated[str | None, Field(max_length=500, description="A regular expression to match.")]
Placeholder = Annotated[str | None, Field(max_length=200)]
ReviewContent = Annotated[Text | None, Field(description="What to review: a plan, a diff.")]
ReviewFiles = Annotated[
    list[dict[str, str]] | None,
    Field(max_length=20, description="Files to review: {name, url, mimeType?}."),
]
ToolName = Annotated[
    str, Field(min_length=1, max_length=200, description="A tool from list_app_tools.")
]
TimeoutMs = Annotated[int | None, Field(ge=1)]


class Arguments(BaseModel):
    """A tool's arguments: unknown ones are refused (a model that misspells one hears so)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AskApproval(Arguments):
    title: Title
    description: Text | None = None
    why: Why = None
    impact: Impact = None
    risk: Risk = "medium"
    details: dict[str, Any] | None = None
    approve_label: Label = "Approve"
    reject_label: Label = "Reject"


class AskChoice(Arguments):
    title: Title
    options: Options
    recommended: Recommended = None
    allow_other: AllowOther = False
    multiple: Multiple = False
    description: Text | None = None
    why: Text | None = None
    impact: Text | None = None
    details: dict[str, Any] | None = None


class AskInput(Arguments):
    title: Title
    format: InputFormat | None = None
    pattern: Pattern = None
    placeholder: Placeholder = None
    description: Text | None = None
    why: Text | None = None
    details: dict[str, Any] | None = None


class AskReview(Arguments):
    title: Title
    content: ReviewContent = None
    attachments: ReviewFiles = None
    description: Text | None = None
    why: Text | None = None
    details: dict[str, Any] | None = None


class ListAppTools(Arguments):
    pass


class CallAppTool(Arguments):
    name: ToolName
    action: str | None = None
    arguments: dict[str, Any] | None = None
    timeout_ms: TimeoutMs = None


Question = AskApproval | AskChoice | AskInput | AskReview


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    title: str
    description: str
    arguments: type[Arguments]

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as a tool's ``inputSchema``."""
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        return schema


QUESTIONS: tuple[ToolDefinition, ...] = (
    ToolDefinition(
        "ask_approval",
        "Ask for approval",
        "Ask the person to approve or reject an action; returns approved true/false.",
        AskApproval,
    ),
    ToolDefinition(
        "ask_choice",
        "Ask to choose",
        "Offer options and return the person's pick (labels, or their own text).",
        AskChoice,
    ),
    ToolDefinition(
        "ask_input",
        "Ask for input",
        "Ask the person to type something (text, email, URL or number).",
        AskInput,
    ),
    ToolDefinition(
        "ask_review",
        "Ask for a review",
        "Show content for review; returns approved, or changes requested with a comment.",
        AskReview,
    ),
)

APP_TOOLS: tuple[ToolDefinition, ...] = (
    ToolDefinition(
        "list_app_tools",
        "List the app's tools",
        "The tools people's LineUp apps offer (tool.list): choice, confirm, input, …",
        ListAppTools,
    ),
    ToolDefinition(
        "call_app_tool",
        "Call an app tool",
        "Call a tool on people's LineUp apps (tool.call) and return its result.",
        CallAppTool,
    ),
)

BY_NAME: Mapping[str, ToolDefinition] = {t.name: t for t in (*QUESTIONS, *APP_TOOLS)}


def _present(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def card(question: Question) -> dict[str, Any]:
    """The card a question puts to the person: an interaction's fields (docs/protocol.md
    §6), snake_case, without ``id``."""
    common = _present(
        title=question.title,
        description=question.description,
        why=question.why,
        details=question.details,
    )
    match question:
        case AskApproval():
            return {
                "type": "approval",
                **common,
                **_present(impact=question.impact, risk=question.risk),
                "options": [
                    {"id": "approve", "label": question.approve_label, "style": "primary"},
                    {"id": "reject", "label": question.reject_label, "style": "danger"},
                ],
            }
        case AskChoice():
            return {
                "type": "choice",
                **common,
                **_present(impact=question.impact),
                "options": [
                    {
                        "id": f"option-{number}",
                        "label": label,
                        "recommended": label == question.recommended,
                    }
                    for number, label in enumerate(question.options, start=1)
                ],
                "allow_other": question.allow_other,
                "multiple": question.multiple,
            }
        case AskInput():
            return {
                "type": "input",
                **common,
                **_present(
                    format=question.format,
                    pattern=question.pattern,
                    placeholder=question.placeholder,
                ),
            }
        case AskReview():
            return {
                "type": "review",
                **common,
                **_present(content=question.content, attachments=question.attachments),
                "options": [
                    {"id": "approve", "label": "Approve", "style": "primary"},
                    {"id": "request_changes", "label": "Request changes"},
                ],
            }


def answer(asked: Interaction, response: InteractionResponse | Mapping[str, Any]) -> dict[str, Any]:
    """What the model reads of the person's answer to ``asked``: the decision in plain
    fields (``approved``, ``choices``, ``text``, …), never option ids alone."""
    if isinstance(response, InteractionResponse):
        response = response.wire()
    picked = list(response.get("optionIds") or []) or (
        [response["optionId"]] if response.get("optionId") else []
    )
    labels = {o.id: o.label for o in asked.options or []}
    text = response.get("text")
    decision: dict[str, Any] = {}
    kind = asked.type.value
    if kind in ("approval", "review"):
        decision["approved"] = "approve" in picked
        if kind == "review":
            decision["changes_requested"] = "request_changes" in picked
        if text:
            decision["note" if kind == "approval" else "comment"] = text
        if kind == "approval" and response.get("input") is not None:
            decision["input"] = response["input"]
    elif kind == "choice":
        decision["choices"] = [labels[i] for i in picked if i in labels]
        if text:
            decision["other"] = text
    else:
        decision["text"] = text or ""
    return decision


__all__ = [
    "APP_TOOLS",
    "BY_NAME",
    "QUESTIONS",
    "AskApproval",
    "AskChoice",
    "AskInput",
    "AskReview",
    "CallAppTool",
    "ListAppTools",
    "Question",
    "ToolDefinition",
    "answer",
    "card",
]
