"""Reading the hub's HTTP answers: a JSON object, or the ``{"error": {...}}`` body it refuses
with (docs/protocol.md, "Errors"). A proxy's HTML page or an empty body reads as no answer,
and each caller then says what failed in its own words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str | None
    details: dict[str, Any] | None


def json_object(response: httpx.Response) -> dict[str, Any]:
    """The body as a JSON object; empty when it is not one."""
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def refusal(response: httpx.Response) -> Refusal | None:
    """The hub's error in the body, if the body holds one."""
    error = json_object(response).get("error")
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return None
    message = error.get("message")
    details = error.get("details")
    return Refusal(
        error["code"],
        str(message) if message else None,
        details if isinstance(details, dict) else None,
    )
