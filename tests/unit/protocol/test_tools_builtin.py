"""The built-in tools (seed 000 §4.2): their definitions, results and every error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from lineup.protocol import Sender, decode_frame
from lineup.protocol.builtin_tools import (
    BUILTIN_DEFINITIONS,
    BUILTIN_NAMES,
    CALCULATOR,
    CANVAS,
    CHOICE,
    MAX_CANVAS_SIDE,
    MAX_PATH_LENGTH,
    CanvasOp,
    Stroke,
    ToolCancel,
    builtin_catalogue,
    builtin_registry,
    calculate,
    canvas_result,
    check_result,
    choice_result,
    confirm_result,
    format_number,
    input_problem,
    input_result,
    last_undoable,
    visible_strokes,
)
from lineup.protocol.errors import InvalidArgument, NotFound
from lineup.protocol.tools import ActionTool, AppTool, ToolCall, ToolsetTool, validate_call

from .samples import envelope

TOOLS = builtin_registry()


def call(name: str, action: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(call_id="c1", name=name, action=action, arguments=arguments)


# --- definitions -----------------------------------------------------------------------------


def test_the_catalogue_has_the_five_builtins_in_the_three_seed_types():
    assert [t.name for t in builtin_catalogue().tools] == [
        "choice",
        "confirm",
        "input",
        "calculator",
        "canvas",
    ]
    assert all(isinstance(TOOLS[n], ActionTool) for n in ("choice", "confirm", "input"))
    assert isinstance(TOOLS["calculator"], ToolsetTool)
    assert isinstance(TOOLS["canvas"], AppTool)
    assert set(TOOLS) == BUILTIN_NAMES


def test_every_definition_round_trips_in_the_seed_format():
    for definition in BUILTIN_DEFINITIONS:
        wire = TOOLS[definition["name"]].wire()
        assert wire == definition
        shape = {"name", "type", "description"} | (
            {"inputSchema"} if definition["type"] == "action" else {"actions"}
        )
        assert set(wire) == shape


def test_the_seed_field_names_and_required_arguments_are_kept():
    assert CHOICE["inputSchema"]["required"] == ["question", "options"]
    assert [a["name"] for a in CALCULATOR["actions"]] == ["add", "subtract", "multiply", "divide"]
    for action in CALCULATOR["actions"]:
        assert action["inputSchema"]["required"] == ["a", "b"]
    required = {a["name"]: a["inputSchema"]["required"] for a in CANVAS["actions"]}
    assert required == {
        "open": ["width", "height"],
        "draw": ["instance_id", "path"],
        "undo": ["instance_id"],
        "clear": ["instance_id"],
        "close": ["instance_id"],
    }


def test_the_definitions_are_json_and_travel_in_a_tool_list_frame():
    raw = json.dumps(envelope("tool.list", {"tools": list(BUILTIN_DEFINITIONS)}))
    assert json.loads(json.dumps(BUILTIN_DEFINITIONS)) == list(BUILTIN_DEFINITIONS)
    decoded = decode_frame(raw, Sender.HUB)
    assert [t.name for t in decoded.payload.tools] == [d["name"] for d in BUILTIN_DEFINITIONS]


# --- calls against the schemas -----------------------------------------------------------------

VALID_CALLS = [
    call("choice", "select", question="Where?", options=["test", "prod"]),
    call("choice", None, question="Where?", options=["test", "prod"]),
    call("confirm", None, message="Restart?"),
    call("confirm", "confirm", message="Restart?"),
    call("input", None, question="Email?", format="email", placeholder="a@b.c"),
    call("input", None, question="Anything?"),
    call("calculator", "divide", a=1, b=4.5),
    call("canvas", "open", width=800, height=600),
    call("canvas", "draw", instance_id="i", path="M10 10 L50 50", color="red", width=2),
    call("canvas", "draw", instance_id="i", path="m1,2 c3 4 5 6 7 8 z", color="#ff000080"),
    call("canvas", "draw", instance_id="i", path="M0 0", color="rgb(1, 2, 3)"),
    call("canvas", "undo", instance_id="i"),
    call("canvas", "clear", instance_id="i"),
    call("canvas", "close", instance_id="i"),
]


@pytest.mark.parametrize("valid", VALID_CALLS, ids=lambda c: f"{c.name}.{c.action}")
def test_valid_calls_pass_the_builtin_schemas(valid: ToolCall):
    validate_call(TOOLS, valid)


INVALID_CALLS = [
    ("choice needs options", call("choice", None, question="Where?"), ""),
    ("choice needs two options", call("choice", None, question="?", options=["a"]), "options"),
    ("choice options differ", call("choice", None, question="?", options=["a", "a"]), "options"),
    (
        "choice question not empty",
        call("choice", None, question="", options=["a", "b"]),
        "question",
    ),
    ("confirm needs a message", call("confirm", None), ""),
    ("input format is known", call("input", None, question="?", format="date"), "format"),
    ("calculator takes numbers", call("calculator", "add", a="1", b=2), "a"),
    ("calculator refuses booleans", call("calculator", "add", a=True, b=2), "a"),
    ("calculator needs b", call("calculator", "multiply", a=1), ""),
    (
        "canvas size is bounded",
        call("canvas", "open", width=MAX_CANVAS_SIDE + 1, height=1),
        "width",
    ),
    ("canvas size is whole", call("canvas", "open", width=1.5, height=1), "width"),
    ("draw needs a path", call("canvas", "draw", instance_id="i"), ""),
    (
        "draw path is bounded",
        call("canvas", "draw", instance_id="i", path="M0 0" + " L1 1" * MAX_PATH_LENGTH),
        "path",
    ),
    ("draw path is path data", call("canvas", "draw", instance_id="i", path="<svg/>"), "path"),
    (
        "draw colour is a colour",
        call("canvas", "draw", instance_id="i", path="M0 0", color="url(#x)"),
        "color",
    ),
    (
        "draw width is bounded",
        call("canvas", "draw", instance_id="i", path="M0 0", width=0),
        "width",
    ),
    ("undo needs the instance", call("canvas", "undo"), ""),
]


@pytest.mark.parametrize(("case", "bad", "path"), INVALID_CALLS, ids=[c[0] for c in INVALID_CALLS])
def test_calls_that_break_a_builtin_schema_are_invalid_argument(
    case: str, bad: ToolCall, path: str
):
    with pytest.raises(InvalidArgument) as caught:
        validate_call(TOOLS, bad)
    assert path in {p["path"] for p in caught.value.details["problems"]}


def test_unknown_builtin_tools_and_actions_are_not_found():
    with pytest.raises(NotFound):
        validate_call(TOOLS, call("fax"))
    with pytest.raises(NotFound):
        validate_call(TOOLS, call("canvas", "erase", instance_id="i"))
    with pytest.raises(NotFound):
        validate_call(TOOLS, call("confirm", "ask", message="?"))
    with pytest.raises(InvalidArgument):
        validate_call(TOOLS, call("canvas", None, instance_id="i"))


# --- results ---------------------------------------------------------------------------------


def test_a_choice_result_is_the_chosen_option_and_nothing_else():
    assert choice_result(["test", "staging"], "staging") == {"message": "staging", "index": 1}
    with pytest.raises(InvalidArgument):
        choice_result(["test", "staging"], "moon")


def test_a_confirmation_is_yes_or_no():
    assert confirm_result(True) == {"message": "yes", "confirmed": True}
    assert confirm_result(False) == {"message": "no", "confirmed": False}


@pytest.mark.parametrize(
    ("format", "text", "ok"),
    [
        (None, "anything", True),
        ("text", " ", False),
        ("email", "ana@example.test", True),
        ("email", "ana@", False),
        ("url", "https://example.test/x", True),
        ("url", "example.test", False),
        ("url", "https://exa mple.test", False),
        ("number", "2.5", True),
        ("number", "-3e2", True),
        ("number", "two", False),
        ("integer", "42", True),
        ("integer", "4.2", False),
    ],
)
def test_an_input_answer_must_have_the_requested_format(format: str | None, text: str, ok: bool):
    assert (input_problem(format, text) is None) is ok
    if ok:
        assert input_result(format, text) == {"message": text}
    else:
        with pytest.raises(InvalidArgument):
            input_result(format, text)


@pytest.mark.parametrize(
    ("action", "a", "b", "message"),
    [
        ("add", 2, 3, "5"),
        ("subtract", 2, 3.5, "-1.5"),
        ("multiply", 2.5, 4, "10"),
        ("divide", 1, 4, "0.25"),
        ("divide", 1, 3, "0.3333333333333333"),
        ("add", 0.1, 0.2, "0.30000000000000004"),
    ],
)
def test_the_calculator_computes_as_the_app_does(action: str, a: float, b: float, message: str):
    result = calculate(action, {"a": a, "b": b})
    assert result["message"] == message
    assert result["value"] == pytest.approx(float(message))


def test_dividing_by_zero_is_invalid_argument():
    with pytest.raises(InvalidArgument, match="divide by zero"):
        calculate("divide", {"a": 1, "b": 0})
    with pytest.raises(InvalidArgument, match="divide by zero"):
        calculate("divide", {"a": 0, "b": 0.0})


@pytest.mark.parametrize("bad", ["1", None, True, float("nan"), float("inf"), [1]])
def test_the_calculator_refuses_what_is_not_a_number(bad: Any):
    with pytest.raises(InvalidArgument):
        calculate("add", {"a": bad, "b": 1})


def test_a_result_that_overflows_is_invalid_argument():
    with pytest.raises(InvalidArgument, match="finite"):
        calculate("multiply", {"a": 1e308, "b": 10})
    with pytest.raises(InvalidArgument):
        calculate("power", {"a": 1, "b": 1})


def test_numbers_print_as_javascript_prints_them():
    assert [format_number(v) for v in (7, 2.5, -0.1, 1e-7)] == ["7", "2.5", "-0.1", "1e-07"]


def test_every_app_answers_a_canvas_call_the_same_way():
    assert canvas_result("open", "inst_1") == {
        "message": "instance_id: inst_1",
        "instance_id": "inst_1",
    }
    assert [canvas_result(a, "inst_1")["message"] for a in ("draw", "undo", "clear", "close")] == [
        "drawn",
        "undone",
        "cleared",
        "closed",
    ]
    with pytest.raises(InvalidArgument):
        canvas_result("erase", "inst_1")


ARGS: dict[str, dict[str, Any]] = {
    "choice": {"question": "?", "options": ["a", "b"]},
    "confirm": {"message": "?"},
    "input": {"question": "?", "format": "integer"},
    "calculator": {"a": 2, "b": 3},
}


@pytest.mark.parametrize(
    ("name", "action", "result"),
    [
        ("choice", None, {"message": "b", "index": 1}),
        ("confirm", None, {"message": "no", "confirmed": False}),
        ("confirm", None, {"message": "yes"}),
        ("input", None, {"message": "12"}),
        ("calculator", "add", {"message": "5", "value": 5}),
        ("calculator", "add", {"message": "5"}),
        ("weather", None, {"message": "sunny", "extra": [1, 2]}),
    ],
)
def test_results_a_call_could_have_pass(name: str, action: str | None, result: dict[str, Any]):
    check_result(name, action, ARGS.get(name, {}), result)


@pytest.mark.parametrize(
    ("name", "action", "result"),
    [
        ("choice", None, {"message": "c"}),
        ("choice", None, {}),
        ("confirm", None, {"message": "maybe"}),
        ("confirm", None, {"message": "yes", "confirmed": False}),
        ("input", None, {"message": "twelve"}),
        ("input", None, {"message": 12}),
        ("calculator", "add", {"message": "6", "value": 6}),
        ("weather", None, {"message": None}),
    ],
)
def test_results_a_call_could_not_have_are_invalid_argument(
    name: str, action: str | None, result: dict[str, Any]
):
    with pytest.raises(InvalidArgument):
        check_result(name, action, ARGS.get(name, {}), result)


def test_a_canvas_open_must_be_answered_with_the_assigned_instance():
    check_result(
        "canvas",
        "open",
        {"width": 1, "height": 1},
        {"message": "instance_id: inst_1", "instance_id": "inst_1"},
        instance_id="inst_1",
    )
    with pytest.raises(InvalidArgument, match="inst_1"):
        check_result(
            "canvas",
            "open",
            {"width": 1, "height": 1},
            {"message": "instance_id: inst_2", "instance_id": "inst_2"},
            instance_id="inst_1",
        )
    with pytest.raises(InvalidArgument):
        check_result("canvas", "draw", {}, {"message": "cleared"}, instance_id="inst_1")


# --- canvas state ----------------------------------------------------------------------------


def draw(n: int, undone: bool = False) -> CanvasOp:
    return CanvasOp("draw", undone, Stroke(f"M{n} {n}", "red", 1, f"c{n}"))


def test_draws_add_strokes_and_a_clear_empties_the_canvas():
    ops = [draw(1), draw(2), CanvasOp("clear", False), draw(3)]
    assert [s.path for s in visible_strokes(ops)] == ["M3 3"]


def test_undone_operations_never_happened_so_undoing_a_clear_restores_its_strokes():
    ops = [draw(1), draw(2), CanvasOp("clear", True), draw(3, undone=True)]
    assert [s.path for s in visible_strokes(ops)] == ["M1 1", "M2 2"]


def test_undo_takes_back_the_latest_operation_not_already_undone():
    ops = [draw(1), CanvasOp("clear", False), draw(2, undone=True)]
    assert last_undoable(ops) == 1
    assert last_undoable([draw(1, undone=True)]) is None
    assert last_undoable([]) is None


# --- tool.cancel -----------------------------------------------------------------------------


def test_tool_cancel_names_the_call_in_the_seed_style():
    cancel = ToolCancel.model_validate({"call_id": "c1", "reason": "moot"})
    assert cancel.wire() == {"call_id": "c1", "reason": "moot"}
    with pytest.raises(ValidationError):
        ToolCancel.model_validate({"call_id": ""})
    decoded = decode_frame(json.dumps(envelope("tool.cancel", {"call_id": "c1"})), Sender.AGENT)
    assert decoded.payload.call_id == "c1"
    refused = decode_frame(json.dumps(envelope("tool.cancel", {"call_id": "c1"})), Sender.USER)
    assert refused.error.code == "invalid_argument"


def test_the_web_app_ships_the_same_definitions():
    """``web/src/tools/builtin-tools.json`` is what the app registers; it must not drift."""
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[3] / "web" / "src" / "tools" / "builtin-tools.json"
    assert json.loads(shipped.read_text(encoding="utf-8")) == list(BUILTIN_DEFINITIONS)
