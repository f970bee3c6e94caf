"""The built-in tools of a person's app (seed 000 §4.2), and the pure rules of their results.

Five tools, defined in seed 000's format (``name``, ``type``, ``description`` and either
``inputSchema`` or ``actions``):

* ``choice`` (``action``): a question and its options → the chosen option;
* ``confirm`` (``action``): a yes/no question → ``"yes"`` or ``"no"``;
* ``input`` (``action``): a question with an optional ``format`` → the typed text;
* ``calculator`` (``toolset``): ``add``, ``subtract``, ``multiply``, ``divide``, computed by
  the app; dividing by zero (or a result that is not a finite number) is ``invalid_argument``;
* ``canvas`` (``app``): ``open`` (→ an ``instance_id``), ``draw`` (an SVG path), ``undo``,
  ``clear`` and ``close``; several instances may be open at once.

Results follow seed 000 §4.5: ``result.message`` is always a string; tools add fields
(``confirmed``, ``value``, ``instance_id``). The seed's schemas are kept as they are and only
tightened with bounds (lengths, sizes, an SVG path alphabet) so a hostile or broken caller
cannot put megabytes or markup into a person's screen.

This module does no I/O: the hub, the SDK, direct mode and the tests share it. The web app
mirrors it in ``web/src/tools/``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final

from pydantic import Field

from lineup.protocol.errors import InvalidArgument
from lineup.protocol.fields import INPUT_FORMATS, input_problem
from lineup.protocol.tools import (
    ActionTool,
    AppTool,
    ToolList,
    ToolsetTool,
    _SeedModel,
)

# --- limits ------------------------------------------------------------------------------

MAX_PATH_LENGTH: Final = 10_000
"""Characters of SVG path data in one ``canvas.draw`` (about 1,000 points)."""

MAX_CANVAS_SIDE: Final = 4096
"""Largest ``width`` or ``height`` of a canvas, in pixels."""

MAX_STROKE_WIDTH: Final = 100
"""Thickest line a ``canvas.draw`` may ask for."""

MAX_DRAWS_PER_CANVAS: Final = 2000
"""``draw`` calls one canvas instance accepts over its life; open a new one beyond."""

MAX_OPTIONS: Final = 20
MAX_TEXT: Final = 2000

SVG_PATH_PATTERN: Final = r"^[MmLlHhVvCcSsQqTtAaZz0-9eE.,+\-\s]+$"
"""SVG path data: the path commands, numbers, separators — nothing that could be markup."""

COLOR_PATTERN: Final = (
    r"^(#[0-9A-Fa-f]{3,8}|[A-Za-z]{1,32}|(rgb|rgba|hsl|hsla)\([0-9.,%\s]{1,64}\))$"
)
"""A CSS colour: ``#rgb``, ``#rrggbb(aa)``, a name, or an ``rgb()``/``hsl()`` function."""

ASK_TOOLS: Final = frozenset({"choice", "confirm", "input"})
"""Built-ins a person answers; the others (``calculator``, ``canvas``) the app answers itself."""

# --- definitions -------------------------------------------------------------------------

_INSTANCE = {
    "type": "object",
    "properties": {"instance_id": {"type": "string", "description": "The canvas instance ID"}},
    "required": ["instance_id"],
}


def _numbers(description: str) -> dict[str, Any]:
    return {
        "name": description.split(" ", 1)[0].lower(),
        "description": description.split(" ", 1)[1],
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    }


CHOICE: Final[dict[str, Any]] = {
    "name": "choice",
    "type": "action",
    "description": "Offer the person a set of options and return the one they choose.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "description": "The question",
                "minLength": 1,
                "maxLength": MAX_TEXT,
            },
            "options": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 200},
                "description": "The options to choose from",
                "minItems": 2,
                "maxItems": MAX_OPTIONS,
                "uniqueItems": True,
            },
        },
        "required": ["question", "options"],
    },
}

CONFIRM: Final[dict[str, Any]] = {
    "name": "confirm",
    "type": "action",
    "description": 'Ask the person a yes/no question; the answer is "yes" or "no".',
    "inputSchema": {
        "type": "object",
        "properties": {
            "message": {
                "type": "string",
                "description": "What the person confirms",
                "minLength": 1,
                "maxLength": MAX_TEXT,
            },
        },
        "required": ["message"],
    },
}

INPUT: Final[dict[str, Any]] = {
    "name": "input",
    "type": "action",
    "description": "Ask the person to type an answer, optionally in a given format.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "description": "The question",
                "minLength": 1,
                "maxLength": MAX_TEXT,
            },
            "format": {
                "type": "string",
                "enum": list(INPUT_FORMATS),
                "description": "The form the answer must have (default text)",
            },
            "placeholder": {
                "type": "string",
                "description": "An example shown in the empty field",
                "maxLength": 200,
            },
        },
        "required": ["question"],
    },
}

CALCULATOR: Final[dict[str, Any]] = {
    "name": "calculator",
    "type": "toolset",
    "description": "A basic calculator; stateless, every call stands alone.",
    "actions": [
        _numbers("add Add two numbers"),
        _numbers("subtract Subtract b from a"),
        _numbers("multiply Multiply two numbers"),
        _numbers("divide Divide a by b"),
    ],
}

CANVAS: Final[dict[str, Any]] = {
    "name": "canvas",
    "type": "app",
    "description": "A drawing board: open one, draw SVG paths, undo, clear, close.",
    "actions": [
        {
            "name": "open",
            "description": "Create a canvas instance; returns its instance_id",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "width": {
                        "type": "integer",
                        "description": "Canvas width",
                        "minimum": 1,
                        "maximum": MAX_CANVAS_SIDE,
                    },
                    "height": {
                        "type": "integer",
                        "description": "Canvas height",
                        "minimum": 1,
                        "maximum": MAX_CANVAS_SIDE,
                    },
                },
                "required": ["width", "height"],
            },
        },
        {
            "name": "draw",
            "description": "Draw a path on the canvas",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "instance_id": {"type": "string", "description": "The canvas instance ID"},
                    "path": {
                        "type": "string",
                        "description": "SVG path data",
                        "minLength": 1,
                        "maxLength": MAX_PATH_LENGTH,
                        "pattern": SVG_PATH_PATTERN,
                    },
                    "color": {
                        "type": "string",
                        "description": "Line colour",
                        "pattern": COLOR_PATTERN,
                    },
                    "width": {
                        "type": "integer",
                        "description": "Line width",
                        "minimum": 1,
                        "maximum": MAX_STROKE_WIDTH,
                    },
                },
                "required": ["instance_id", "path"],
            },
        },
        {"name": "undo", "description": "Undo the last operation", "inputSchema": _INSTANCE},
        {"name": "clear", "description": "Clear the canvas", "inputSchema": _INSTANCE},
        {"name": "close", "description": "Close the canvas and free it", "inputSchema": _INSTANCE},
    ],
}

BUILTIN_DEFINITIONS: Final[tuple[dict[str, Any], ...]] = (
    CHOICE,
    CONFIRM,
    INPUT,
    CALCULATOR,
    CANVAS,
)
"""The five definitions as they go on the wire, in the order the app lists them."""

BUILTIN_NAMES: Final = frozenset(d["name"] for d in BUILTIN_DEFINITIONS)


@functools.cache
def builtin_catalogue() -> ToolList:
    """The built-in tools as a ``tool.list`` (checked: every schema is valid JSON Schema).

    Made once: checking the schemas takes milliseconds, and every ``tool.call`` in a workspace
    whose apps registered nothing looks its tool up here, inside the writer's transaction.
    Read it, never change it."""
    return ToolList.model_validate({"tools": list(BUILTIN_DEFINITIONS)})


def builtin_registry() -> dict[str, ActionTool | ToolsetTool | AppTool]:
    return {tool.name: tool for tool in builtin_catalogue().tools}


# --- tool.cancel -------------------------------------------------------------------------


class ToolCancel(_SeedModel):
    """``tool.cancel`` (agent → hub): withdraw a call nobody has answered yet."""

    call_id: Annotated[str, Field(min_length=1, max_length=128)]
    reason: Annotated[str, Field(max_length=500)] | None = None


# --- results -----------------------------------------------------------------------------


def choice_result(options: Sequence[str], picked: str) -> dict[str, Any]:
    """``{"message": <the option>, "index": n}``; ``invalid_argument`` if it is not one."""
    if picked not in options:
        raise InvalidArgument(
            f"{picked!r} is not one of the options.",
            details={"options": list(options)},
        )
    return {"message": picked, "index": list(options).index(picked)}


def confirm_result(confirmed: bool) -> dict[str, Any]:
    return {"message": "yes" if confirmed else "no", "confirmed": confirmed}


def input_result(format: str | None, text: str) -> dict[str, Any]:
    problem = input_problem(format, text)
    if problem is not None:
        raise InvalidArgument(problem, details={"format": format or "text"})
    return {"message": text}


def _number(value: Any, name: str) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidArgument(f"{name} must be a number.", details={"argument": name})
    return value


def calculate(action: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The calculator's result: ``{"message": "7", "value": 7}``.

    ``invalid_argument`` for an unknown action, a non-number, dividing by zero, or a result
    that is not a finite number (an overflow).
    """
    a = _number(arguments.get("a"), "a")
    b = _number(arguments.get("b"), "b")
    if action == "add":
        value: float | int = a + b
    elif action == "subtract":
        value = a - b
    elif action == "multiply":
        value = a * b
    elif action == "divide":
        if b == 0:
            raise InvalidArgument("Cannot divide by zero.", details={"argument": "b"})
        value = a / b
    else:
        raise InvalidArgument(f"The calculator has no action {action!r}.")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument("The result is not a finite number.")
        if value.is_integer() and abs(value) < 2**53:
            value = int(value)
    return {"message": format_number(value), "value": value}


def format_number(value: float | int) -> str:
    """As JavaScript prints it (``7``, ``2.5``, ``0.1``), so app and hub agree on the text."""
    if isinstance(value, int):
        return str(value)
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def canvas_result(action: str, instance_id: str) -> dict[str, Any]:
    """What every app answers for a canvas call (the same on every device, so a second
    answer is "the same answer again", never a conflict)."""
    if action == "open":
        return {"message": f"instance_id: {instance_id}", "instance_id": instance_id}
    done = {"draw": "drawn", "undo": "undone", "clear": "cleared", "close": "closed"}
    if action not in done:
        raise InvalidArgument(f"The canvas has no action {action!r}.")
    return {"message": done[action], "instance_id": instance_id}


def check_result(
    name: str,
    action: str | None,
    arguments: Mapping[str, Any],
    result: Mapping[str, Any],
    *,
    instance_id: str | None = None,
) -> None:
    """Refuse (``invalid_argument``) a built-in tool's result that its call could not have.

    ``result.message`` must be a string for every tool; beyond that a choice must be one of
    the options, a confirmation yes or no, an input in its format, the calculator right, and
    a canvas answer the one every app gives. Other tools' results are not checked here.
    """
    message = result.get("message")
    if not isinstance(message, str):
        raise InvalidArgument("A tool result needs a message (a string), as seed 000 §4.5 says.")
    if name == "choice":
        choice_result([str(o) for o in arguments.get("options", [])], message)
    elif name == "confirm":
        confirmed = result.get("confirmed", message == "yes")
        if message not in ("yes", "no") or confirmed is not (message == "yes"):
            raise InvalidArgument('A confirmation is answered "yes" or "no".')
    elif name == "input":
        input_result(arguments.get("format"), message)
    elif name == "calculator":
        expected = calculate(action or "", arguments)
        value = result.get("value", expected["value"])
        if not isinstance(value, int | float) or not math.isclose(
            float(value), float(expected["value"]), rel_tol=1e-9, abs_tol=1e-12
        ):
            raise InvalidArgument(
                f"{arguments.get('a')} {action} {arguments.get('b')} is {expected['message']}.",
                details={"expected": expected["message"]},
            )
    elif name == "canvas" and instance_id is not None:
        expected = canvas_result(action or "", instance_id)
        if action == "open" and result.get("instance_id", instance_id) != instance_id:
            raise InvalidArgument(
                f"This canvas's instance_id is {instance_id!r}; every app answers with it.",
                details={"instance_id": instance_id},
            )
        if message != expected["message"]:
            raise InvalidArgument(
                f"A canvas {action} is answered {expected['message']!r}.",
                details={"expected": expected["message"]},
            )


# --- canvas state ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stroke:
    """One visible path on a canvas."""

    path: str
    color: str | None
    width: int | None
    call_id: str


@dataclass(frozen=True, slots=True)
class CanvasOp:
    """An operation as recorded: a ``draw`` (with its stroke) or a ``clear``; ``undone`` once
    an ``undo`` took it back."""

    kind: str
    undone: bool
    stroke: Stroke | None = None


def visible_strokes(ops: Iterable[CanvasOp]) -> list[Stroke]:
    """What a canvas shows after ``ops`` (in order): draws add a stroke, a clear empties the
    canvas; undone operations never happened. ``undo`` takes back the last operation, so
    undoing a clear brings its strokes back."""
    strokes: list[Stroke] = []
    for op in ops:
        if op.undone:
            continue
        if op.kind == "draw" and op.stroke is not None:
            strokes.append(op.stroke)
        elif op.kind == "clear":
            strokes = []
    return strokes


def last_undoable(ops: Sequence[CanvasOp]) -> int | None:
    """The index of the operation an ``undo`` takes back: the latest one not undone yet."""
    for index in range(len(ops) - 1, -1, -1):
        if not ops[index].undone:
            return index
    return None


__all__ = [
    "ASK_TOOLS",
    "BUILTIN_DEFINITIONS",
    "BUILTIN_NAMES",
    "CALCULATOR",
    "CANVAS",
    "CHOICE",
    "COLOR_PATTERN",
    "CONFIRM",
    "INPUT",
    "INPUT_FORMATS",
    "MAX_CANVAS_SIDE",
    "MAX_DRAWS_PER_CANVAS",
    "MAX_PATH_LENGTH",
    "MAX_STROKE_WIDTH",
    "SVG_PATH_PATTERN",
    "CanvasOp",
    "Stroke",
    "ToolCancel",
    "builtin_catalogue",
    "builtin_registry",
    "calculate",
    "canvas_result",
    "check_result",
    "choice_result",
    "confirm_result",
    "format_number",
    "input_problem",
    "input_result",
    "last_undoable",
    "visible_strokes",
]
