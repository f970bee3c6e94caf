import pytest
from pydantic import ValidationError

from lineup.protocol.errors import InvalidArgument, NotFound
from lineup.protocol.tools import (
    ActionTool,
    AppTool,
    ToolCall,
    ToolList,
    ToolResult,
    ToolsetTool,
    validate_call,
)

from .samples import CHOICE_TOOL

NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}
CALCULATOR = {
    "name": "calculator",
    "type": "toolset",
    "description": "Stateless calculator",
    "actions": [{"name": op, "inputSchema": NUMBERS} for op in ("add", "subtract")],
}
INSTANCE = {
    "type": "object",
    "properties": {"instance_id": {"type": "string"}},
    "required": ["instance_id"],
}
CANVAS = {
    "name": "canvas",
    "type": "app",
    "description": "Drawing board",
    "actions": [
        {
            "name": "open",
            "inputSchema": {
                "type": "object",
                "properties": {"width": {"type": "integer"}, "height": {"type": "integer"}},
                "required": ["width", "height"],
            },
        },
        {"name": "close", "inputSchema": INSTANCE},
    ],
}


def registry():
    listing = ToolList.model_validate({"tools": [CHOICE_TOOL, CALCULATOR, CANVAS]})
    return {tool.name: tool for tool in listing.tools}


def test_the_three_seed_tool_types_parse_to_their_models():
    tools = registry()
    assert isinstance(tools["choice"], ActionTool)
    assert isinstance(tools["calculator"], ToolsetTool)
    assert isinstance(tools["canvas"], AppTool)


def test_tool_list_round_trips_in_the_seed_format():
    listing = ToolList.model_validate({"tools": [CHOICE_TOOL]})
    assert listing.wire() == {"tools": [CHOICE_TOOL]}


def test_an_invalid_input_schema_is_refused():
    bad = {**CHOICE_TOOL, "inputSchema": {"type": "object", "properties": {"q": {"type": 7}}}}
    with pytest.raises(ValidationError, match="not a valid JSON Schema"):
        ToolList.model_validate({"tools": [bad]})


def test_an_unknown_tool_type_is_refused():
    with pytest.raises(ValidationError):
        ToolList.model_validate({"tools": [{**CHOICE_TOOL, "type": "daemon"}]})


def test_valid_arguments_pass():
    call = ToolCall(call_id="c1", name="calculator", action="add", arguments={"a": 1, "b": 2})
    validate_call(registry(), call)


def test_arguments_that_break_the_schema_are_invalid_argument_naming_the_path():
    call = ToolCall(call_id="c1", name="calculator", action="add", arguments={"a": "x", "b": 2})
    with pytest.raises(InvalidArgument) as caught:
        validate_call(registry(), call)
    assert "'a'" in caught.value.message
    assert caught.value.details["problems"][0]["path"] == "a"


def test_missing_required_argument_is_invalid_argument():
    call = ToolCall(call_id="c1", name="canvas", action="open", arguments={"width": 3})
    with pytest.raises(InvalidArgument, match="height"):
        validate_call(registry(), call)


def test_unknown_tool_is_not_found():
    with pytest.raises(NotFound, match="No tool named 'fax'"):
        validate_call(registry(), ToolCall(call_id="c1", name="fax"))


def test_unknown_action_is_not_found_and_lists_the_actions():
    with pytest.raises(NotFound) as caught:
        validate_call(registry(), ToolCall(call_id="c1", name="calculator", action="pow"))
    assert caught.value.details["actions"] == ["add", "subtract"]


def test_a_toolset_call_without_an_action_is_invalid():
    with pytest.raises(InvalidArgument, match="must name one of its actions"):
        validate_call(registry(), ToolCall(call_id="c1", name="canvas", arguments={}))


def test_an_action_tool_may_omit_the_action():
    call = ToolCall(call_id="c1", name="choice", arguments={"question": "q", "options": ["a"]})
    validate_call(registry(), call)


def test_tool_result_follows_the_seed_message_convention():
    result = ToolResult.model_validate(
        {
            "call_id": "c1",
            "name": "canvas",
            "action": "open",
            "result": {"message": "instance_id: i1"},
        }
    )
    assert result.result is not None
    assert result.result.message == "instance_id: i1"
    assert result.wire()["call_id"] == "c1"
