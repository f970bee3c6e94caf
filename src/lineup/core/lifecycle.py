"""Where a provider stands in a workspace, and where each lifecycle action takes it (seed 003
§5's lifecycle table): which actions a standing allows, and the standing an approved action
leaves. Pure: the hub reads the standing, asks here, and records the answer as a fact."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

State = Literal["enabled", "disabled", "removed"]
Source = Literal["bundled", "package"]
Action = Literal["install", "upgrade", "enable", "disable", "rollback", "uninstall"]


@dataclass(frozen=True, slots=True)
class Version:
    version: str
    digest: str
    source: Source


@dataclass(frozen=True, slots=True)
class Standing:
    state: State
    current: Version | None
    previous: Version | None = None
    """What a rollback returns to."""


NOT_INSTALLED = Standing("removed", None)


def refusal(action: Action, standing: Standing) -> tuple[str, str] | None:
    """``(reason, message)`` when ``action`` cannot be asked for from ``standing``."""
    installed = standing.state != "removed" and standing.current is not None
    if action == "install":
        if installed:
            assert standing.current is not None
            return "installed", f"it is already installed ({standing.current.version}); upgrade it"
        return None
    if not installed:
        return "not_installed", "it is not installed in this workspace"
    if action == "enable" and standing.state == "enabled":
        return "enabled", "it is already enabled"
    if action == "disable" and standing.state == "disabled":
        return "disabled", "it is already disabled"
    if action == "rollback" and standing.previous is None:
        return "no_previous", "it has no previous version to roll back to"
    return None


def after(action: Action, standing: Standing, target: Version | None = None) -> Standing:
    """The standing an approved ``action`` leaves; ``target`` is the version an install or
    upgrade switches to (a rollback's is the standing's previous)."""
    problem = refusal(action, standing)
    if problem is not None:
        raise ValueError(f"{action}: {problem[1]}")
    if action == "install":
        assert target is not None
        return Standing("enabled", target, None)
    assert standing.current is not None
    if action == "upgrade":
        assert target is not None
        return replace(standing, current=target, previous=standing.current)
    if action == "rollback":
        # the version rolled back from is kept, so the step can be undone the same way
        return replace(standing, current=standing.previous, previous=standing.current)
    if action == "enable":
        return replace(standing, state="enabled")
    if action == "disable":
        return replace(standing, state="disabled")
    return Standing("removed", standing.current, None)
