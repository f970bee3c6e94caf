"""An agent rotates its own credential: a new one from the hub, saved before it is used.

The hub ends the old credential as it answers, so the new one is written to the credentials
file (mode 0600, atomically) before this returns. If it cannot be saved, the new credential
is lost with the old one: the error says so, and the way back is to have a person rotate it
again from the app (Agents → Rotate credential), not to pair again.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace

import httpx

from lineup import __version__
from lineup.protocol.errors import ErrorCode, LineupError, error_from_code
from lineup.sdk._config import AgentConfig
from lineup.sdk._hub_answers import json_object, refusal

logger = logging.getLogger("lineup.sdk")

ROTATE_PATH = "/api/agent/credential/rotate"


async def rotate_credential(
    config: AgentConfig,
    *,
    credentials_path: str | os.PathLike[str] | None = None,
    client: httpx.AsyncClient | None = None,
    http_timeout: float = 30.0,
) -> AgentConfig:
    """Exchange this agent's credential for a new one and save it to ``credentials_path``
    (default ``$LINEUP_AGENT_HOME/credentials.json``); returns the new configuration.

    The old credential stops working for new connections at once; a connection already open
    with it stays open, so run this before :meth:`~lineup.sdk.Agent.run` (or restart the
    agent with the configuration this returns). Raises a :class:`~lineup.sdk.LineupError`
    subclass with the hub's code: ``unauthenticated`` when the credential is already not
    valid (revoked or rotated by a person), ``unavailable`` when the hub cannot be reached.
    """
    if config.hosted:
        raise error_from_code(
            ErrorCode.INVALID_ARGUMENT.value,
            f"In {config.mode} mode the agent's credential is its own host's; there is none "
            "to rotate.",
        )
    base = config.hub_url.rstrip("/")
    headers = {
        "Authorization": f"Bearer {config.credential}",
        "User-Agent": f"lineup-sdk/{__version__}",
    }
    owned = client is None
    http = client if client is not None else httpx.AsyncClient(timeout=http_timeout)
    try:
        response = await http.post(base + ROTATE_PATH, headers=headers)
    except httpx.HTTPError as exc:
        raise error_from_code(
            ErrorCode.UNAVAILABLE.value, f"Could not reach the hub at {base}: {exc}"
        ) from exc
    finally:
        if owned:
            await http.aclose()
    if response.status_code != 200:
        raise _error(response)
    credential = json_object(response).get("credential")
    if not isinstance(credential, str) or not credential:
        raise error_from_code(
            ErrorCode.UNKNOWN_RESULT.value,
            "The hub rotated the credential but its answer lacks the new one; ask a person to "
            "rotate it from LineUp (Agents → Rotate credential).",
        )
    rotated = replace(config, credential=credential)
    path = rotated.save(credentials_path)
    logger.info("rotated the credential of agent %s; saved in %s", config.agent_id, path)
    return rotated


def _error(response: httpx.Response) -> LineupError:
    refused = refusal(response)
    if refused is not None:
        return error_from_code(
            refused.code,
            refused.message or f"Rotation failed with HTTP {response.status_code}.",
            refused.details,
        )
    return error_from_code(
        ErrorCode.UNAVAILABLE.value
        if response.status_code >= 500
        else ErrorCode.UNKNOWN_RESULT.value,
        f"Rotation failed with HTTP {response.status_code}.",
    )
