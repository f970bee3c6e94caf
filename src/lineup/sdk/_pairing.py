"""Redeem a one-time pairing code for an agent credential (seed 001 §7.1)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from lineup import __version__
from lineup.protocol.errors import HTTP_STATUS, ErrorCode
from lineup.sdk._config import AgentConfig
from lineup.sdk._errors import PairingFailed
from lineup.sdk._hub_answers import json_object, refusal
from lineup.sdk._tls import TlsOptions, TlsTrust, check_plain_text, is_verification_failure

logger = logging.getLogger("lineup.sdk")

_STATUS_CODES = {status: code for code, status in HTTP_STATUS.items()}


async def pair(
    hub_url: str,
    code: str,
    *,
    name: str,
    runtime: str = "python",
    agent_version: str = __version__,
    capabilities: Sequence[str] | None = None,
    credentials_path: str | os.PathLike[str] | None = None,
    client: httpx.AsyncClient | None = None,
    http_timeout: float = 30.0,
    tls_fingerprint: str | None = None,
    ca_file: str | None = None,
    allow_insecure: bool | None = None,
) -> AgentConfig:
    """Exchange a pairing code for this agent's credential and save it (mode 0600).

    ``hub_url`` is the hub's address (``http://127.0.0.1:8000``), ``code`` the code LineUp
    showed (``ABCD-EFGH``; valid 10 minutes, single use), ``name`` how the agent appears to
    people. The credentials go to ``credentials_path``, by default
    ``$LINEUP_AGENT_HOME/credentials.json`` (``~/.lineup-agent/``). Pass ``client`` to use
    your own :class:`httpx.AsyncClient` (tests pass one with a mock transport).

    Raises :class:`~lineup.sdk.PairingFailed` with the hub's diagnostic and next step: a
    wrong, used or expired code is ``not_found``; too many attempts is ``rate_limited`` (see
    ``retry_after``); an unreachable hub is ``unavailable``.

    **Transport security.** ``hub_url`` must be ``https://`` unless the hub is this machine
    (loopback) or ``allow_insecure`` is true: the answer carries the credential. A hub's
    self-signed certificate is trusted by ``tls_fingerprint`` (``AB:CD:…``, as LineUp shows
    it); ``ca_file`` names other authorities to trust. They default to
    ``LINEUP_TLS_FINGERPRINT``, ``LINEUP_TLS_CA_FILE`` and ``LINEUP_ALLOW_INSECURE``, and are
    saved with the credentials; a self-signed hub's answer names its fingerprint, which is
    pinned from then on. A refusal is :class:`~lineup.sdk.InsecureConnection`, raised before
    the code is sent.

    Pairing does not finish the binding: a person confirms the agent in the app (its name,
    version, runtime and capabilities shown there). The agent may run meanwhile; it is
    welcomed, waits (:attr:`~lineup.sdk.Agent.awaiting_confirmation`) and gets work once
    confirmed.
    """
    base = hub_url.rstrip("/")
    body: dict[str, Any] = {
        "code": code.strip(),
        "name": name,
        "runtime": runtime,
        "agentVersion": agent_version,
    }
    if capabilities is not None:  # shown to the person who confirms the agent
        body["capabilities"] = list(capabilities)
    env = TlsOptions.from_env()
    options = TlsOptions(
        fingerprint=tls_fingerprint or env.fingerprint,
        ca_file=ca_file or env.ca_file,
        allow_insecure=env.allow_insecure if allow_insecure is None else allow_insecure,
    )
    trust = TlsTrust(options)
    check_plain_text(base, options)  # raises InsecureConnection before anything is sent
    secure = urlsplit(base).scheme.lower() == "https"
    # a client of the caller's own (tests' mock transport) does its own I/O and checks
    try:
        verify = await trust.context(base) if client is None else None
    except (OSError, TimeoutError) as exc:  # the pin's check could not reach the hub
        raise PairingFailed(
            ErrorCode.UNAVAILABLE.value,
            f"Could not reach the hub at {base}: {exc}",
            diagnostic="LNP-PAIR-UNREACHABLE",
            next_step="Check the hub address and that this machine can reach it, then retry.",
        ) from exc
    owned = client is None
    http = (
        client
        if client is not None
        else httpx.AsyncClient(timeout=http_timeout, verify=verify if verify else True)
    )
    try:
        response = await http.post(f"{base}/api/pairing/redeem", json=body)
    except httpx.HTTPError as exc:
        if is_verification_failure(exc):
            raise await trust.untrusted(base, exc) from None
        raise PairingFailed(
            ErrorCode.UNAVAILABLE.value,
            f"Could not reach the hub at {base}: {exc}",
            diagnostic="LNP-PAIR-UNREACHABLE",
            next_step="Check the hub address and that this machine can reach it, then retry.",
        ) from exc
    finally:
        if owned:
            await http.aclose()
    if response.status_code != 200:
        raise _failure(response)
    data = json_object(response)
    try:
        websocket_url = _absolute_websocket_url(base, str(data["websocketUrl"]))
        config = AgentConfig(
            hub_url=base,
            websocket_url=websocket_url,
            agent_id=str(data["agentId"]),
            workspace_id=str(data["workspaceId"]),
            credential=str(data["credential"]),
            tls=_pinned_after(options, data.get("tlsFingerprint"), secure=secure),
        )
    except (KeyError, TypeError) as exc:
        raise PairingFailed(
            ErrorCode.UNKNOWN_RESULT.value,
            f"The hub accepted the code but its answer lacks {exc}; the code is now used.",
            diagnostic="LNP-PAIR-BAD-ANSWER",
            next_step="Create a new pairing code and try again; report this if it repeats.",
        ) from None
    path = config.save(credentials_path)
    logger.info(
        "paired as agent %s in workspace %s; credentials in %s",
        config.agent_id,
        config.workspace_id,
        path,
    )
    if data.get("awaitingConfirmation"):
        logger.info(
            "a person now confirms %r in LineUp (Agents → Confirm); the agent may connect "
            "meanwhile and gets work once confirmed",
            data.get("name") or name,
        )
    return config


def _pinned_after(options: TlsOptions, answered: object, *, secure: bool) -> TlsOptions:
    """What to save: the options pairing used, pinning the hub's self-signed certificate
    when it named one over a connection this agent verified (a pin it was given wins)."""
    if options.fingerprint or not secure or not isinstance(answered, str):
        return options
    try:
        return options.pinning(answered)
    except ValueError:
        return options


def _failure(response: httpx.Response) -> PairingFailed:
    refused = refusal(response)
    if refused is not None:
        return PairingFailed(
            refused.code,
            refused.message or f"Pairing failed with HTTP {response.status_code}.",
            details=refused.details,
        )
    status = response.status_code
    fallback = ErrorCode.UNAVAILABLE if status >= 500 else ErrorCode.INVALID_ARGUMENT
    code = _STATUS_CODES.get(status, fallback)
    return PairingFailed(
        code.value,
        f"Pairing failed with HTTP {status}.",
        diagnostic="LNP-PAIR-HTTP",
        next_step="Check that the address is a LineUp hub, then try again.",
    )


def _absolute_websocket_url(base: str, url: str) -> str:
    """The hub may answer with a path; resolve it against the hub, http(s) → ws(s)."""
    if urlsplit(url).scheme in ("ws", "wss"):
        return url
    parts = urlsplit(urljoin(base + "/", url))
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment))
