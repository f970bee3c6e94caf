"""What a hosted engine is offered and shown: LineUp's tools as the engine sees them, its
approval requests as the cards a person answers, a governed capability as a tool."""

from __future__ import annotations

import json

from lineup.engines.runtime import ApprovalRequest
from lineup.engines.tool_surface import (
    MAX_TOOL_NAME,
    approval_card,
    capability_tool,
    question_specs,
)
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.question_tools import QUESTIONS


def spec(capability: str, instances: list[str], effect: str = "write") -> CapabilitySpec:
    return CapabilitySpec.model_validate(
        {
            "id": capability,
            "provider": capability.split(".")[0],
            "effect": effect,
            "description": "Post an entry.",
            "inputSchema": {"type": "object", "properties": {"amount": {"type": "integer"}}},
            "instances": instances,
        }
    )


def test_every_session_is_offered_the_questions_and_the_app_tools() -> None:
    names = [t.name for t in question_specs()]
    assert names == [*(q.name for q in QUESTIONS), "list_app_tools", "call_app_tool"]
    assert all(t.input_schema["type"] == "object" for t in question_specs())


def test_a_command_approval_shows_the_command_and_where_it_runs() -> None:
    card = approval_card(
        ApprovalRequest(
            "r1", "command", "Run make build", command="make build", cwd="/srv/app", reason="why"
        )
    )
    assert card["content"] == "$ make build"
    assert card["impact"] == "Runs in /srv/app."
    assert card["details"] == {"kind": "command", "command": "make build", "cwd": "/srv/app"}
    assert card["risk"] == "high" and card["description"] == "why"
    assert "editable_input" not in card


def test_a_file_change_approval_shows_the_diff() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    card = approval_card(ApprovalRequest("r2", "file_change", "Change files", cwd="/w", diff=diff))
    assert card["content"] == diff and card["details"] == {"kind": "file_change", "cwd": "/w"}


def test_a_tool_approval_shows_its_input_editable_only_when_the_engine_takes_an_edit() -> None:
    asked = {"path": "notes.txt", "text": "draft"}
    fixed = approval_card(ApprovalRequest("r3", "tool", "Use Write?", tool="Write", input=asked))
    assert json.loads(fixed["content"]) == asked and "editable_input" not in fixed
    assert fixed["details"] == {"kind": "tool", "tool": "Write"}
    editable = approval_card(
        ApprovalRequest("r4", "tool", "Use Write?", tool="Write", input=asked, editable=True)
    )
    assert editable["editable_input"] == asked


def test_a_command_or_file_change_is_editable_when_the_engine_takes_an_edited_input() -> None:
    command = {"command": "make build", "description": "Build it"}
    card = approval_card(
        ApprovalRequest(
            "r5",
            "command",
            "Run make build",
            tool="Bash",
            input=command,
            command="make build",
            cwd="/w",
            editable=True,
        )
    )
    assert card["content"] == "$ make build" and card["editable_input"] == command
    write = {"file_path": "/w/big.txt", "content": "x" * 70_000}
    large = approval_card(
        ApprovalRequest(
            "r6",
            "file_change",
            "Write big.txt",
            tool="Write",
            input=write,
            diff="--- /dev/null\n",
            editable=True,
        )
    )
    assert "editable_input" not in large  # past a card's limit: allowed or denied as proposed


def test_an_engines_yes_or_no_question_shows_no_empty_input() -> None:
    card = approval_card(ApprovalRequest("r7", "tool", "Sure?", reason="You picked blue."))
    assert card["content"] is None and card["impact"] is None
    assert card["description"] == "You picked blue."


def test_a_capability_is_a_tool_named_for_engines_with_its_schema() -> None:
    tool = capability_tool(spec("ledger.entry.post", ["books"]))
    assert tool.spec.name == "ledger__entry__post"
    assert tool.spec.input_schema["properties"] == {"amount": {"type": "integer"}}
    assert "a person may have to approve it" in tool.spec.description
    assert tool.capability == "ledger.entry.post" and not tool.wrapped


def test_a_capability_of_several_instances_asks_which_one() -> None:
    tool = capability_tool(spec("ledger.balance.read", ["books", "archive"], effect="read"))
    assert tool.wrapped
    assert tool.spec.input_schema["properties"]["instance"]["enum"] == ["books", "archive"]
    assert tool.spec.input_schema["required"] == ["instance", "params"]


def test_a_long_capability_name_still_fits_an_engines_tool_name() -> None:
    long = "ledger." + ".".join(["segment_of_a_long_name"] * 4)
    name = capability_tool(spec(long, [])).spec.name
    assert len(name) <= MAX_TOOL_NAME
    assert name != capability_tool(spec(long + "x", [])).spec.name
