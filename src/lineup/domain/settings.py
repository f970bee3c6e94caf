"""Layered settings (seed 003 §1): system → workspace → project → user → conversation, each
level overriding the ones before it. The conversation level holds for that conversation alone.

Every known key is in :data:`CATALOGUE` with a JSON Schema for its value, its default (the
system level, which the hub's configuration may change) and the levels where people may set
it. :func:`effective` resolves a key from the values set at each level and says which level
won, so a screen can show "from the project" next to a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from jsonschema import Draft202012Validator

from lineup.domain.errors import DomainError

Level = Literal["system", "workspace", "project", "user", "conversation"]
LEVELS: tuple[Level, ...] = get_args(Level)
"""Least to most specific: a later level overrides an earlier one."""
SETTABLE: tuple[Level, ...] = LEVELS[1:]
"""The system level is the catalogue's default and the hub's configuration, not set by people."""


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    description: str
    schema: Mapping[str, Any]
    default: Any
    levels: frozenset[Level]
    """Where people may set it (the system level always has the default)."""
    _validator: Draft202012Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        Draft202012Validator.check_schema(dict(self.schema))
        object.__setattr__(self, "_validator", Draft202012Validator(dict(self.schema)))

    def problems(self, value: Any) -> list[str]:
        return [e.message for e in self._validator.iter_errors(value)]


_MINUTES_30_DAYS = 30 * 24 * 60

CATALOGUE: Mapping[str, Key] = {
    k.name: k
    for k in (
        Key(
            "approvals.ttlMinutes",
            "Minutes a confirm card waits for a decision before it expires. The system "
            "default is the hub's LINEUP_APPROVAL_TTL.",
            {"type": "integer", "minimum": 1, "maximum": _MINUTES_30_DAYS},
            24 * 60,
            frozenset({"workspace", "project", "user", "conversation"}),
        ),
        Key(
            "approvals.standingMaxMinutes",
            'The longest a standing permission ("don\'t ask again") may last, in minutes.',
            {"type": "integer", "minimum": 1, "maximum": 7 * 24 * 60},
            7 * 24 * 60,
            frozenset({"workspace", "project"}),
        ),
        Key(
            "approvals.standingMaxCalls",
            "The most calls a standing permission may allow.",
            {"type": "integer", "minimum": 1, "maximum": 10_000},
            10_000,
            frozenset({"workspace", "project"}),
        ),
        Key(
            "retention.maxAgeDays",
            "Days the workspace's event log is kept in full; older events are compacted "
            "(0: kept however old). The system default is the hub's LINEUP_RETENTION_DAYS.",
            {"type": "integer", "minimum": 0, "maximum": 36_500},
            90,
            frozenset({"workspace"}),
        ),
        Key(
            "retention.maxEvents",
            "The most of the workspace's latest events kept in full; older ones are "
            "compacted (0: no limit). The system default is LINEUP_RETENTION_MAX_EVENTS.",
            {"type": "integer", "minimum": 0, "maximum": 1_000_000_000},
            0,
            frozenset({"workspace"}),
        ),
        Key(
            "tasks.cancelTimeoutMinutes",
            "Minutes a requested cancel waits for the agent to confirm before LineUp records "
            "the task cancelled itself (an agent offline or stuck cannot hold a task open). "
            "The system default is the hub's LINEUP_CANCEL_TIMEOUT.",
            {"type": "integer", "minimum": 1, "maximum": _MINUTES_30_DAYS},
            10,
            frozenset({"workspace"}),
        ),
        Key(
            "conversations.defaultProjectId",
            "The project an app preselects for a new conversation (unset: a personal one). "
            "The hub does not apply it by itself.",
            {"type": "string", "minLength": 1, "maxLength": 128},
            None,
            frozenset({"workspace", "user"}),
        ),
    )
}

Layers = Mapping[Level, Mapping[str, Any]]
"""The values set at each level, by key; a level or key that is absent is not set there."""


@dataclass(frozen=True, slots=True)
class Effective:
    value: Any
    level: Level


def key_of(name: str) -> Key:
    key = CATALOGUE.get(name)
    if key is None:
        raise DomainError(
            "invalid_argument",
            f"There is no setting {name!r}; known settings: {', '.join(sorted(CATALOGUE))}.",
            details={"key": name},
        )
    return key


def effective(key: Key, layers: Layers) -> Effective:
    """The value of ``key``: the most specific level where it is set and may be set; the
    system level (``layers["system"]`` when given, else the default) otherwise."""
    system = layers.get("system", {})
    found = Effective(system.get(key.name, key.default), "system")
    for level in SETTABLE:
        values = layers.get(level)
        if values is not None and key.name in values and level in key.levels:
            found = Effective(values[key.name], level)
    return found


def check_value(name: str, level: Level, value: Any) -> Key:
    """Refuse a value people may not set: an unknown key, a level the key is not set at, or a
    value its schema rejects. ``None`` (clearing) is always allowed where the key may be set."""
    key = key_of(name)
    if level not in key.levels:
        where = ", ".join(lv for lv in SETTABLE if lv in key.levels)
        raise DomainError(
            "invalid_argument",
            f"{name} cannot be set for a {level}; it can be set for: {where}.",
            details={"key": name, "level": level},
        )
    if value is not None:
        problems = key.problems(value)
        if problems:
            raise DomainError(
                "invalid_argument",
                f"{name}: {problems[0]}",
                details={"key": name, "problems": problems},
            )
    return key
