"""JSON Schemas generated from the protocol models — the language-neutral contract.

``docs/spec/schemas/`` holds the output of :func:`all_schemas`; a test fails when the files and
the code drift apart, and ``lineup schemas --out docs/spec/schemas`` regenerates them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import models_json_schema

from lineup.protocol.builtin_tools import ToolCancel
from lineup.protocol.envelope import Envelope
from lineup.protocol.events import AGENT_PAYLOADS, CATALOG, HUB_PAYLOADS
from lineup.protocol.facts import FACTS
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.interaction import Interaction, InteractionResponse
from lineup.protocol.session_file.lines import AnyEntry, Header
from lineup.protocol.tools import ToolCall, ToolDefinition, ToolList, ToolResult

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _schema(model: Any, title: str) -> dict[str, Any]:
    adapter = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    schema: dict[str, Any] = adapter.json_schema(by_alias=True, mode="validation")
    return {
        "$schema": _DIALECT,
        "title": title,
        **{k: v for k, v in schema.items() if k != "title"},
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    """Relative file path → schema, for every wire shape LineUp defines."""
    schemas: dict[str, dict[str, Any]] = {
        "envelope.json": _schema(Envelope, "LAP/0.1 envelope"),
        "frames/ack.json": _schema(Ack, "ack"),
        "frames/error.json": _schema(ErrorFrame, "error"),
        "interaction.json": _schema(Interaction, "interaction"),
        "interaction-response.json": _schema(InteractionResponse, "interaction response"),
        "tools/tool-definition.json": _schema(TypeAdapter(ToolDefinition), "tool definition"),
        "tools/tool.list.json": _schema(ToolList, "tool.list"),
        "tools/tool.call.json": _schema(ToolCall, "tool.call"),
        "tools/tool.result.json": _schema(ToolResult, "tool.result"),
        "tools/tool.cancel.json": _schema(ToolCancel, "tool.cancel"),
        "tools/tool.cancelled.json": _schema(ToolCancel, "tool.cancelled"),
        "session-file/header.json": _schema(Header, "session file header line (version 2)"),
        "session-file/entry.json": _schema(
            TypeAdapter(AnyEntry), "session file entry line (version 2)"
        ),
    }
    for event_type, spec in sorted(CATALOG.items()):
        if event_type.startswith("tool."):
            continue
        schemas[f"payloads/{event_type}.json"] = _schema(spec.payload, f"{event_type} payload")
    for event_type, model in sorted(AGENT_PAYLOADS.items()):
        schemas[f"payloads/{event_type}.agent.json"] = _schema(
            model, f"{event_type} payload (sent by an agent)"
        )
    for event_type, model in sorted(HUB_PAYLOADS.items()):
        schemas[f"payloads/{event_type}.hub.json"] = _schema(
            model, f"{event_type} payload (sent by the hub)"
        )
    for event_type, fact in sorted(FACTS.items()):
        schemas[f"facts/{event_type}.json"] = _fact_schema(fact)
    schemas["facts.json"] = _all_facts_schema()
    return schemas


def _fact_schema(fact: type[Any]) -> dict[str, Any]:
    """A fact's payload as the hub records it (serialization mode: what readers get)."""
    schema: dict[str, Any] = TypeAdapter(fact).json_schema(by_alias=True, mode="serialization")
    return {"$schema": _DIALECT, **schema, "title": fact.__name__}


def _all_facts_schema() -> dict[str, Any]:
    """A recorded event's ``type`` and ``payload``, one branch per fact, keyed by the type."""
    keyed, shared = models_json_schema(
        [(fact, "serialization") for _, fact in sorted(FACTS.items())],
        by_alias=True,
        ref_template="#/$defs/{model}",
    )
    branches = [
        {
            "type": "object",
            "title": f"{fact.__name__[: -len('Payload')]}Fact",
            "properties": {
                "type": {"const": event_type},
                "payload": keyed[(fact, "serialization")],
            },
            "required": ["type", "payload"],
        }
        for event_type, fact in sorted(FACTS.items())
    ]
    return {
        "$schema": _DIALECT,
        "title": "RecordedFact",
        "description": "A recorded event's type and payload; the type says which payload.",
        "oneOf": branches,
        **shared,
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    written = []
    for relative, schema in all_schemas().items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written
