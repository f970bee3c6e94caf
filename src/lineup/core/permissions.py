"""Standing permissions: "yes to this capability on this target, within these bounds, for a
while or a number of calls" (seed 003 §5), so a person is not asked the same thing all day.

Bounds are per top-level parameter: ``{"equals": v}``, ``{"in": [v, …]}`` or ``{"min": a,
"max": b}`` (either end optional, numbers only). A call is inside them when every bounded
parameter is present and satisfies its bound; unbounded parameters are free. Anything else
asks again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lineup.core.canonical import canonical

MAX_BOUNDS = 20


class BoundsError(ValueError):
    """Bounds that cannot be checked, worded for a person."""


def check_bounds(bounds: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``bounds`` as stored, or :class:`BoundsError`."""
    if not isinstance(bounds, Mapping):
        raise BoundsError("Bounds are an object of parameter names.")
    if len(bounds) > MAX_BOUNDS:
        raise BoundsError(f"At most {MAX_BOUNDS} parameters may be bounded.")
    out: dict[str, dict[str, Any]] = {}
    for name, bound in bounds.items():
        if not isinstance(name, str) or not name or len(name) > 100:
            raise BoundsError("A bounded parameter needs a name of 1–100 characters.")
        if not isinstance(bound, Mapping) or not bound:
            raise BoundsError(f"The bound of {name!r} is an object: equals, in, or min/max.")
        keys = set(bound)
        if keys == {"equals"}:
            _json(name, bound["equals"])
        elif keys == {"in"}:
            values = bound["in"]
            if not isinstance(values, list) or not 1 <= len(values) <= 100:
                raise BoundsError(f"The bound 'in' of {name!r} is a list of 1–100 values.")
            _json(name, values)
        elif keys and keys <= {"min", "max"}:
            for end in keys:
                if not _is_number(bound[end]):
                    raise BoundsError(f"The {end} of {name!r} must be a number.")
            if keys == {"min", "max"} and bound["min"] > bound["max"]:
                raise BoundsError(f"The min of {name!r} is above its max.")
        else:
            raise BoundsError(f"The bound of {name!r} is equals, in, or min and/or max.")
        out[name] = dict(bound)
    return out


def _json(name: str, value: Any) -> None:
    try:
        canonical(value)
    except ValueError as exc:
        raise BoundsError(f"The bound of {name!r} is not plain JSON: {exc}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    try:
        return canonical(a) == canonical(b)
    except ValueError:
        return False


def outside(bounds: Mapping[str, Mapping[str, Any]], params: Mapping[str, Any]) -> str | None:
    """Why ``params`` are outside ``bounds`` (a sentence), or None when inside."""
    for name, bound in bounds.items():
        if name not in params:
            return f"{name} is bounded but not given."
        value = params[name]
        if "equals" in bound and not _same(value, bound["equals"]):
            return f"{name} must be {bound['equals']!r}."
        if "in" in bound and not any(_same(value, v) for v in bound["in"]):
            return f"{name} must be one of the allowed values."
        if "min" in bound or "max" in bound:
            if not _is_number(value):
                return f"{name} must be a number."
            if "min" in bound and value < bound["min"]:
                return f"{name} is below {bound['min']}."
            if "max" in bound and value > bound["max"]:
                return f"{name} is above {bound['max']}."
    return None


@dataclass(frozen=True, slots=True)
class Standing:
    """A standing permission as the core judges it."""

    id: str
    project_id: str
    capability: str
    instance: str
    bounds: Mapping[str, Mapping[str, Any]]
    expires_at_ms: int | None
    max_calls: int | None
    calls_used: int
    revoked: bool


def covers(
    permission: Standing,
    *,
    project_id: str | None,
    capability: str,
    instance: str,
    params: Mapping[str, Any],
    now_ms: int,
) -> bool:
    """Whether this call may go ahead on ``permission`` without asking."""
    if permission.revoked or project_id != permission.project_id:
        return False
    if (permission.capability, permission.instance) != (capability, instance):
        return False
    if permission.expires_at_ms is not None and now_ms >= permission.expires_at_ms:
        return False
    if permission.max_calls is not None and permission.calls_used >= permission.max_calls:
        return False
    return outside(permission.bounds, params) is None
