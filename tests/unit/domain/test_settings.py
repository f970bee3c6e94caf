"""Layered settings (seed 003 §1): the most specific level where a key is set wins."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.domain import settings as layered
from lineup.domain.errors import DomainError
from lineup.domain.settings import LEVELS, SETTABLE, Level

TTL = layered.CATALOGUE["approvals.ttlMinutes"]


def test_with_nothing_set_a_key_has_its_default_from_the_system_level() -> None:
    found = layered.effective(TTL, {})
    assert (found.value, found.level) == (TTL.default, "system")


def test_the_system_level_given_by_the_hub_replaces_the_catalogue_default() -> None:
    found = layered.effective(TTL, {"system": {TTL.name: 5}})
    assert (found.value, found.level) == (5, "system")


@given(
    key=st.sampled_from(sorted(layered.CATALOGUE)),
    assigned=st.dictionaries(st.sampled_from(SETTABLE), st.integers(1, 100)),
)
def test_the_most_specific_level_that_sets_a_key_wins(key: str, assigned: dict[Level, int]) -> None:
    spec = layered.CATALOGUE[key]
    layers: dict[Level, dict[str, Any]] = {lv: {key: v} for lv, v in assigned.items()}
    layers.setdefault("project", {})["some.other.key"] = -1
    found = layered.effective(spec, layers)
    allowed = [lv for lv in LEVELS if lv in assigned and lv in spec.levels]
    if allowed:
        winner = allowed[-1]
        assert (found.level, found.value) == (winner, assigned[winner])
    else:
        assert (found.level, found.value) == ("system", spec.default)


def test_a_value_set_where_the_key_may_not_be_set_is_ignored() -> None:
    standing = layered.CATALOGUE["approvals.standingMaxCalls"]
    found = layered.effective(standing, {"project": {standing.name: 3}, "user": {standing.name: 9}})
    assert (found.value, found.level) == (3, "project")


def test_values_are_checked_against_the_key_schema_and_level() -> None:
    assert layered.check_value("approvals.ttlMinutes", "project", 30) is TTL
    assert layered.check_value("approvals.ttlMinutes", "conversation", None) is TTL
    for name, level, value in (
        ("approvals.ttlMinutes", "project", 0),
        ("approvals.ttlMinutes", "project", "30"),
        ("approvals.ttlMinutes", "project", True),
        ("approvals.standingMaxMinutes", "user", 10),
        ("no.such.key", "workspace", 1),
    ):
        with pytest.raises(DomainError) as refused:
            layered.check_value(name, level, value)  # type: ignore[arg-type]
        assert refused.value.code == "invalid_argument"
        assert refused.value.details["key"] == name


def test_every_key_documents_itself_and_its_default_fits_its_schema() -> None:
    for key in layered.CATALOGUE.values():
        assert key.description
        assert key.levels <= set(SETTABLE)
        assert key.default is None or key.problems(key.default) == []
