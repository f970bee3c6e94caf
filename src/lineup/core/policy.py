"""Who may have an agent call which capability, where (seed 003 §1, §5).

Rules are held per workspace and per project, each for a capability (an id, a prefix ending in
``*``, or ``*``), optionally one instance and some project roles, and either ``allow`` or
``deny``. The defaults are the safe ones: a read is allowed to any member of the project (and
in a personal conversation); a write is denied unless a rule allows it — and a write is never
possible outside a project, because approvals, audit and evidence all need a project to
belong to. A project's rules speak before the workspace's; within one scope a ``deny`` beats an
``allow``, so an operator can close a hole without reading every rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lineup.protocol.capabilities import Effect

ROLES = ("owner", "editor", "viewer")
APPROVER_ROLES = frozenset({"owner", "editor"})
"""Who may decide a confirm card: never a viewer."""


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    capability: str
    effect: Literal["allow", "deny"]
    project_id: str | None = None
    instance: str | None = None
    roles: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Where:
    """The place of a call: its project (None: a personal conversation) and the role there
    of the person on whose behalf the agent acts (None: not a member)."""

    project_id: str | None
    role: str | None


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    reason: str
    """For a person: why, in a sentence."""
    code: str
    """``default_read``, ``default_write``, ``personal_write``, ``not_member``, ``rule``."""
    rule_id: str | None = None


def matches_capability(pattern: str, capability: str) -> bool:
    if pattern == "*":
        return True
    if pattern.endswith(".*"):
        return capability.startswith(pattern[:-1])
    return pattern == capability


def valid_pattern(pattern: str) -> bool:
    if pattern == "*":
        return True
    body = pattern[:-2] if pattern.endswith(".*") else pattern
    parts = body.split(".")
    return bool(body) and all(p and p[0].isalpha() and p.replace("_", "a").isalnum() for p in parts)


def _applies(rule: Rule, capability: str, instance: str, role: str | None) -> bool:
    if not matches_capability(rule.capability, capability):
        return False
    if rule.instance is not None and rule.instance != instance:
        return False
    return rule.roles is None or (role is not None and role in rule.roles)


def decide(
    rules: Sequence[Rule], *, capability: str, effect: Effect, instance: str, where: Where
) -> Verdict:
    """Whether a call of ``capability`` on ``instance`` may go ahead ``where``. For a write,
    allowed means it may be proposed: it still waits for a person's approval."""
    if where.project_id is None:
        if effect is Effect.WRITE:
            return Verdict(
                False,
                "Changes happen only in a project's conversations; this one is personal.",
                "personal_write",
            )
    elif where.role is None:
        return Verdict(
            False,
            "The person this agent works for is not a member of the conversation's project.",
            "not_member",
        )
    scopes: list[list[Rule]] = []
    if where.project_id is not None:
        scopes.append([r for r in rules if r.project_id == where.project_id])
    scopes.append([r for r in rules if r.project_id is None])
    for scoped in scopes:
        found = [r for r in scoped if _applies(r, capability, instance, where.role)]
        denied = next((r for r in found if r.effect == "deny"), None)
        if denied is not None:
            return Verdict(False, f"A policy rule denies {capability}.", "rule", denied.id)
        allowed = next((r for r in found if r.effect == "allow"), None)
        if allowed is not None:
            return Verdict(True, f"A policy rule allows {capability}.", "rule", allowed.id)
    if effect is Effect.READ:
        return Verdict(True, "Reads are allowed unless a rule denies them.", "default_read")
    return Verdict(
        False,
        f"No policy rule allows {capability} here; a project owner can add one.",
        "default_write",
    )
