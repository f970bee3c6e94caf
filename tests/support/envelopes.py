"""LAP envelopes as a test sends them over a socket: the JSON text, built by hand so a test can
also send what the hub must refuse."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from lineup.protocol.ids import new_id


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(
    type_: str,
    payload: dict[str, Any],
    workspace_id: str,
    *,
    event_id: str | None = None,
    **env: Any,
) -> dict[str, Any]:
    """One envelope; ``env`` adds or overrides fields (``taskId``, ``workspaceId``, …)."""
    return {
        "id": event_id or new_id("evt"),
        "type": type_,
        "version": "0.1",
        "occurredAt": now_iso(),
        "workspaceId": workspace_id,
        "payload": payload,
        **env,
    }


def envelope_text(
    type_: str,
    payload: dict[str, Any],
    workspace_id: str,
    *,
    event_id: str | None = None,
    **env: Any,
) -> str:
    return json.dumps(envelope(type_, payload, workspace_id, event_id=event_id, **env))
