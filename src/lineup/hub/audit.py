"""Placeholder until the audit chain lands: governance records its audit entries here."""

from __future__ import annotations

from typing import Any

from lineup.hub.recorder import Writing


def record(
    w: Writing,
    kind: str,
    *,
    workspace_id: str | None,
    actor: str,
    subject: str,
    data: dict[str, Any],
) -> None:
    del w, kind, workspace_id, actor, subject, data


def entries_for(read: Any, workspace_id: str, subjects: list[str]) -> list[dict[str, Any]]:
    del read, workspace_id, subjects
    return []
