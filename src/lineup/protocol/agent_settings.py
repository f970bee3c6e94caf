"""An agent's settings (seed 001 §6 "绑定 / 配置"): a flat object its adapter describes with a
JSON Schema in ``agent.hello``, which people fill in as a form in the app.

The schema is a deliberately small subset of JSON Schema, so that any app can render it as a
plain form and the hub can validate it without surprises: an object of at most
:data:`MAX_PROPERTIES` named properties, each a ``string``, ``number``, ``integer`` or
``boolean``, optionally an ``enum`` of such values, with ``title``, ``description``,
``default`` and simple bounds. No references, no patterns (a regular expression from an agent
would run in the hub), no nesting. This module checks a schema, checks values against it and
works out the values an agent runs with; it does no I/O.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from lineup.protocol.envelope import wire_size
from lineup.protocol.errors import InvalidArgument

MAX_SCHEMA_BYTES = 16 * 1024
"""The largest settings schema, as compact UTF-8 JSON."""
MAX_VALUES_BYTES = 32 * 1024
"""The largest object of values a person may save."""
MAX_PROPERTIES = 50
MAX_ENUM = 100
MAX_TEXT = 2000
"""The longest ``title`` or ``description`` (and string ``enum`` member)."""

PROPERTY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
SCALAR_TYPES = ("string", "number", "integer", "boolean")

_TOP_KEYS = frozenset(
    {"$schema", "type", "title", "description", "properties", "required", "additionalProperties"}
)
_PROPERTY_KEYS: Mapping[str, frozenset[str]] = {
    "string": frozenset({"minLength", "maxLength"}),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "integer": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "boolean": frozenset(),
}
_COMMON_KEYS = frozenset({"type", "title", "description", "default", "enum"})

Problem = dict[str, str]
"""``{"path", "problem"}``, as in every ``details.problems`` list (docs/protocol.md §4)."""


def _is_type(value: Any, kind: str) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, int | float) and math.isfinite(value)


def schema_problems(schema: Any) -> list[Problem]:
    """Everything that keeps ``schema`` from being a settings schema (empty when it is one)."""
    if not isinstance(schema, dict):
        return [{"path": "", "problem": "A settings schema is a JSON object."}]
    try:
        size = wire_size(schema)
    except (TypeError, ValueError):
        return [{"path": "", "problem": "A settings schema must be plain JSON."}]
    if size > MAX_SCHEMA_BYTES:
        return [{"path": "", "problem": f"It is {size} bytes; at most {MAX_SCHEMA_BYTES}."}]
    problems: list[Problem] = []
    for key in sorted(set(schema) - _TOP_KEYS):
        problems.append({"path": key, "problem": f"{key!r} is not supported in a settings schema."})
    if schema.get("type") != "object":
        problems.append({"path": "type", "problem": 'It must be "object".'})
    if schema.get("additionalProperties", False) is not False:
        problems.append({"path": "additionalProperties", "problem": "Only false is allowed."})
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return [*problems, {"path": "properties", "problem": "It must be an object."}]
    if len(properties) > MAX_PROPERTIES:
        problems.append(
            {"path": "properties", "problem": f"At most {MAX_PROPERTIES} settings are allowed."}
        )
    for name, prop in properties.items():
        problems.extend(_property_problems(str(name), prop))
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append({"path": "required", "problem": "It must be a list of setting names."})
    else:
        for name in required:
            if name not in properties:
                problems.append({"path": "required", "problem": f"{name!r} is not a property."})
    for key in ("title", "description"):
        if key in schema and not (isinstance(schema[key], str) and len(schema[key]) <= MAX_TEXT):
            problems.append({"path": key, "problem": f"It must be text of at most {MAX_TEXT}."})
    if not problems:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = ".".join(str(p) for p in exc.path)
            problems.append({"path": where, "problem": exc.message})
    return problems


def _property_problems(name: str, prop: Any) -> list[Problem]:
    path = f"properties.{name}"
    if not PROPERTY_NAME.match(name):
        return [
            {
                "path": path,
                "problem": "A setting's name is 1–64 letters, digits or _ . - (not first).",
            }
        ]
    if not isinstance(prop, dict):
        return [{"path": path, "problem": "A setting is described by an object."}]
    kind = prop.get("type")
    if kind not in SCALAR_TYPES:
        return [
            {"path": f"{path}.type", "problem": f"It must be one of {', '.join(SCALAR_TYPES)}."}
        ]
    problems: list[Problem] = []
    allowed = _COMMON_KEYS | _PROPERTY_KEYS[kind]
    for key in sorted(set(prop) - allowed):
        problems.append(
            {"path": f"{path}.{key}", "problem": f"{key!r} is not supported for a {kind}."}
        )
    for key in ("title", "description"):
        if key in prop and not (isinstance(prop[key], str) and len(prop[key]) <= MAX_TEXT):
            problems.append(
                {"path": f"{path}.{key}", "problem": f"It must be text of at most {MAX_TEXT}."}
            )
    for key in _PROPERTY_KEYS[kind]:
        if key in prop and not _is_type(prop[key], "integer" if kind == "string" else "number"):
            problems.append({"path": f"{path}.{key}", "problem": "It must be a number."})
    if "enum" in prop:
        enum = prop["enum"]
        if not isinstance(enum, list) or not 1 <= len(enum) <= MAX_ENUM:
            problems.append({"path": f"{path}.enum", "problem": f"A list of 1–{MAX_ENUM} values."})
        elif not all(_is_type(v, kind) for v in enum) or len({json.dumps(v) for v in enum}) < len(
            enum
        ):
            problems.append({"path": f"{path}.enum", "problem": f"Distinct {kind} values only."})
        elif kind == "string" and any(len(v) > MAX_TEXT for v in enum):
            problems.append({"path": f"{path}.enum", "problem": f"At most {MAX_TEXT} characters."})
    if not problems and "default" in prop:
        wrong = value_problems(name, prop, prop["default"])
        problems.extend({"path": f"{path}.default", "problem": p} for p in wrong)
    return problems


def check_schema(schema: Any) -> dict[str, Any]:
    """``schema`` when it is a settings schema, else ``invalid_argument`` listing why."""
    problems = schema_problems(schema)
    if problems:
        first = problems[0]
        where = f" at {first['path']}" if first["path"] else ""
        raise InvalidArgument(
            f"The settings schema is not usable{where}: {first['problem']}",
            details={"problems": problems},
        )
    assert isinstance(schema, dict)
    return schema


def value_problems(name: str, prop: Mapping[str, Any], value: Any) -> list[str]:
    """Why ``value`` does not fit the setting ``name`` described by ``prop`` (empty: it fits).
    The sentences name the setting by its title, as the person saw it on the form."""
    label = repr(prop.get("title") or name)
    kind = prop["type"]
    if not _is_type(value, kind):
        article = "an" if kind == "integer" else "a"
        return [f"{label} must be {article} {kind}."]
    validator = Draft202012Validator(dict(prop))
    return [f"{label}: {error.message}." for error in validator.iter_errors(value)]


def properties_of(schema: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    props = schema.get("properties", {})
    return props if isinstance(props, Mapping) else {}


def checked_values(schema: Mapping[str, Any], values: Any) -> dict[str, Any]:
    """The complete settings a person saves: ``values`` checked against ``schema``, with each
    left-out setting at its default. ``invalid_argument`` names the first field at fault
    (``details.field``) and lists every problem (``details.problems``)."""
    if not isinstance(values, dict):
        raise InvalidArgument("Settings are a JSON object.", details={"field": ""})
    size = wire_size(values)
    if size > MAX_VALUES_BYTES:
        raise InvalidArgument(
            f"The settings are {size} bytes; at most {MAX_VALUES_BYTES}.",
            details={"field": "", "maxBytes": MAX_VALUES_BYTES},
        )
    props = properties_of(schema)
    problems: list[Problem] = []
    for name in sorted(set(values) - set(props)):
        problems.append({"path": name, "problem": f"This agent has no setting {name!r}."})
    complete: dict[str, Any] = {}
    for name, prop in props.items():
        if name in values and values[name] is not None:
            wrong = value_problems(name, prop, values[name])
            problems.extend({"path": name, "problem": p} for p in wrong)
            complete[name] = values[name]
        elif "default" in prop:
            complete[name] = prop["default"]
        elif name in schema.get("required", []):
            label = repr(prop.get("title") or name)
            problems.append({"path": name, "problem": f"{label} is required."})
    if problems:
        first = problems[0]
        raise InvalidArgument(
            first["problem"], details={"field": first["path"], "problems": problems}
        )
    return complete


def effective(schema: Mapping[str, Any] | None, saved: Mapping[str, Any] | None) -> dict[str, Any]:
    """The settings an agent runs with: each saved value that still fits the schema (an
    adapter may have changed its schema since), else the setting's default; a setting with
    neither is absent."""
    if not schema:
        return {}
    saved = saved or {}
    found: dict[str, Any] = {}
    for name, prop in properties_of(schema).items():
        if name in saved and not value_problems(name, prop, saved[name]):
            found[name] = saved[name]
        elif "default" in prop:
            found[name] = prop["default"]
    return found


__all__ = [
    "MAX_PROPERTIES",
    "MAX_SCHEMA_BYTES",
    "MAX_VALUES_BYTES",
    "SCALAR_TYPES",
    "check_schema",
    "checked_values",
    "effective",
    "schema_problems",
    "value_problems",
]
