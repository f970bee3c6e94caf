"""Agents' settings schemas and values (seed 001 §6): the safe subset, and values checked
against it field by field."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.protocol import agent_settings
from lineup.protocol.errors import InvalidArgument

SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Builder",
    "properties": {
        "model": {
            "type": "string",
            "title": "Model",
            "enum": ["small", "large"],
            "default": "small",
        },
        "retries": {
            "type": "integer",
            "title": "Retries",
            "minimum": 0,
            "maximum": 5,
            "default": 2,
        },
        "temperature": {"type": "number", "minimum": 0, "maximum": 1},
        "dryRun": {"type": "boolean", "title": "Dry run", "default": False},
        "token": {"type": "string", "maxLength": 10},
    },
    "required": ["token"],
}


def test_the_example_schema_is_usable() -> None:
    assert agent_settings.schema_problems(SCHEMA) == []


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ([], ""),
        ({"type": "array"}, "type"),
        ({"type": "object", "properties": {"a": {"type": "object"}}}, "properties.a.type"),
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}, "pattern"),
        ({"type": "object", "properties": {"a": {"$ref": "#/x", "type": "string"}}}, "$ref"),
        ({"type": "object", "$defs": {}}, "$defs"),
        ({"type": "object", "properties": {"1a": {"type": "string"}}}, "properties.1a"),
        ({"type": "object", "properties": {"a": {"type": "integer", "default": "x"}}}, "default"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": []}}}, "enum"),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": [1]}}}, "enum"),
        ({"type": "object", "properties": {}, "required": ["b"]}, "required"),
        ({"type": "object", "additionalProperties": True}, "additionalProperties"),
        (
            {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(51)}},
            "properties",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string", "description": "x" * 17_000}},
            },
            "",
        ),
    ],
)
def test_a_schema_outside_the_subset_is_refused_naming_where(schema: Any, where: str) -> None:
    problems = agent_settings.schema_problems(schema)
    assert problems and any(where in p["path"] for p in problems), problems
    with pytest.raises(InvalidArgument) as refused:
        agent_settings.check_schema(schema)
    assert refused.value.details["problems"] == problems


def test_values_are_completed_with_defaults() -> None:
    assert agent_settings.checked_values(SCHEMA, {"token": "abc"}) == {
        "model": "small",
        "retries": 2,
        "dryRun": False,
        "token": "abc",
    }


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"token": "a", "retries": 9}, "retries"),
        ({"token": "a", "retries": "2"}, "retries"),
        ({"token": "a", "retries": True}, "retries"),
        ({"token": "a", "retries": 1.5}, "retries"),
        ({"token": "a", "model": "huge"}, "model"),
        ({"token": "a", "dryRun": 1}, "dryRun"),
        ({"token": "a", "temperature": 2}, "temperature"),
        ({"token": "a" * 11}, "token"),
        ({}, "token"),
        ({"token": "a", "colour": "red"}, "colour"),
    ],
)
def test_a_wrong_value_is_refused_naming_its_field(values: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        agent_settings.checked_values(SCHEMA, values)
    assert refused.value.details["field"] == field
    assert any(p["path"] == field for p in refused.value.details["problems"])


def test_a_saved_value_that_no_longer_fits_falls_back_to_the_default() -> None:
    saved = {"model": "medium", "retries": 3, "gone": 1}
    assert agent_settings.effective(SCHEMA, saved) == {
        "model": "small",
        "retries": 3,
        "dryRun": False,
    }
    assert agent_settings.effective(None, saved) == {}


fitting = st.fixed_dictionaries(
    {"token": st.text(max_size=10)},
    optional={
        "model": st.sampled_from(["small", "large"]),
        "retries": st.integers(0, 5),
        "temperature": st.floats(0, 1),
        "dryRun": st.booleans(),
    },
)


@given(fitting)
def test_values_that_fit_are_kept_as_given(values: dict[str, Any]) -> None:
    complete = agent_settings.checked_values(SCHEMA, values)
    assert {k: complete[k] for k in values} == values
    assert agent_settings.effective(SCHEMA, complete) == complete


@given(
    fitting,
    st.sampled_from(["model", "retries", "temperature", "dryRun", "token"]),
    st.one_of(st.none(), st.lists(st.integers()), st.dictionaries(st.text(), st.integers())),
)
def test_a_value_of_no_scalar_type_is_refused(values: dict[str, Any], field: str, bad: Any) -> None:
    values = {**values, field: bad}
    if bad is None and field != "token":
        return  # null is "left out": the default holds
    with pytest.raises(InvalidArgument) as refused:
        agent_settings.checked_values(SCHEMA, values)
    assert refused.value.details["field"] == field
