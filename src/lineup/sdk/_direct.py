"""Direct mode (seed 000 §3.1) as the SDK sees it: its configuration, and how it is hosted.

An agent normally connects out to a hub. In direct mode it serves LineUp itself: a *host*
in the agent's own process — :func:`lineup.direct.run` provides one, the hub's application
embedded — listens for people on ``host:port`` (9527 by default) with a pre-shared token, and
the agent connects to it over loopback. The SDK knows nothing of the hub: it hands the host a
:class:`HostedAgent` (how to run, stop and announce the agent) through the small
:class:`AgentHost` protocol. The configuration says which mode runs (``{"mode": "direct",
"token": …}`` in the credentials file, or ``LINEUP_MODE=direct`` with
``LINEUP_DIRECT_TOKEN``); the handlers, tools and ``ask_*`` calls are the same in both.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import quote

if TYPE_CHECKING:
    from lineup.sdk._config import AgentConfig

DEFAULT_HOST = "0.0.0.0"  # noqa: S104 - direct mode is for phones on the same network
DEFAULT_PORT = 9527
MIN_TOKEN_LENGTH = 8
MAX_TOKEN_LENGTH = 256
_TOKEN_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # noqa: S105 - no i l o 0 1
_TOKEN_CHARS = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII, no spaces


def new_direct_token() -> str:
    """A random pre-shared token (about 99 bits), easy to type: ``k7wq-3hxa-…`` (5 × 4)."""
    raw = "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(20))
    return "-".join(raw[i : i + 4] for i in range(0, 20, 4))


def check_direct_token(token: str) -> str:
    """The token as it will be compared; raises ``ValueError`` for one too weak or odd."""
    clean = token.strip()
    if len(clean) < MIN_TOKEN_LENGTH:
        raise ValueError(
            f"The direct-mode token must have at least {MIN_TOKEN_LENGTH} characters; "
            "leave it out to get a random one."
        )
    if len(clean) > MAX_TOKEN_LENGTH:
        raise ValueError(f"The direct-mode token must have at most {MAX_TOKEN_LENGTH} characters.")
    if not _TOKEN_CHARS.match(clean):
        raise ValueError("The direct-mode token may hold printable ASCII only, without spaces.")
    return clean


@dataclass(frozen=True, slots=True)
class DirectOptions:
    """Where a direct-mode agent listens and the token people open it with.

    ``host`` ``0.0.0.0`` (the default) listens on every network of the machine; use
    ``127.0.0.1`` to allow this machine only. ``port`` 0 picks a free one. ``person_name`` is
    how the one person appears (default: the login name). The token stays out of ``repr()``.
    """

    token: str = field(repr=False)
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    person_name: str | None = None
    tls_cert: str | None = None
    """Serve ``https`` with this certificate (PEM) and ``tls_key``; see ``tls_self_signed``."""
    tls_key: str | None = None
    tls_self_signed: bool = False
    """Serve ``https`` with a self-signed certificate made once under ``$LINEUP_HOME/tls``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "token", check_direct_token(self.token))
        if isinstance(self.port, bool) or not isinstance(self.port, int):
            raise ValueError("The direct-mode port must be a whole number.")
        if not 0 <= self.port <= 65535:
            raise ValueError("The direct-mode port must be between 0 and 65535.")
        if not self.host.strip():
            raise ValueError("The direct-mode host must not be empty (0.0.0.0 = every network).")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("A direct-mode TLS certificate and its key go together.")
        if self.tls_cert is not None and self.tls_self_signed:
            raise ValueError("Choose either your own TLS certificate or a self-signed one.")

    @property
    def serves_tls(self) -> bool:
        return self.tls_self_signed or self.tls_cert is not None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, source: str = "config") -> DirectOptions:
        """From ``{"mode": "direct", "token", "host"?, "port"?, "personName"?}``."""
        token = data.get("token")
        if not isinstance(token, str) or not token.strip():
            raise ValueError(f'{source} is in direct mode but has no "token".')
        port = data.get("port", DEFAULT_PORT)
        host = data.get("host", DEFAULT_HOST)
        person = data.get("personName")
        if not isinstance(host, str):
            raise ValueError(f'{source}: "host" must be a string.')
        if not isinstance(port, int) or isinstance(port, bool):
            raise ValueError(f'{source}: "port" must be a whole number.')
        if person is not None and not isinstance(person, str):
            raise ValueError(f'{source}: "personName" must be a string.')
        tls_cert, tls_key = data.get("tlsCert"), data.get("tlsKey")
        self_signed = data.get("tlsSelfSigned", False)
        for key, value in (("tlsCert", tls_cert), ("tlsKey", tls_key)):
            if value is not None and not isinstance(value, str):
                raise ValueError(f'{source}: "{key}" must be a path.')
        if not isinstance(self_signed, bool):
            raise ValueError(f'{source}: "tlsSelfSigned" must be true or false.')
        return cls(
            token=token,
            host=host,
            port=port,
            person_name=person,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_self_signed=self_signed,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DirectOptions:
        """From ``LINEUP_DIRECT_TOKEN`` (required), ``LINEUP_DIRECT_HOST``,
        ``LINEUP_DIRECT_PORT``, ``LINEUP_DIRECT_PERSON`` and the hub's ``LINEUP_TLS_CERT``,
        ``LINEUP_TLS_KEY`` and ``LINEUP_TLS_SELF_SIGNED``."""
        env = os.environ if environ is None else environ
        token = env.get("LINEUP_DIRECT_TOKEN", "")
        if not token.strip():
            raise ValueError(
                "LINEUP_MODE=direct needs LINEUP_DIRECT_TOKEN (the token people open the agent "
                "with); `lineup direct` makes one for you."
            )
        raw_port = env.get("LINEUP_DIRECT_PORT") or str(DEFAULT_PORT)
        try:
            port = int(raw_port)
        except ValueError:
            raise ValueError(f"LINEUP_DIRECT_PORT must be a number, not {raw_port!r}.") from None
        return cls(
            token=token,
            host=env.get("LINEUP_DIRECT_HOST") or DEFAULT_HOST,
            port=port,
            person_name=env.get("LINEUP_DIRECT_PERSON") or None,
            tls_cert=env.get("LINEUP_TLS_CERT") or None,
            tls_key=env.get("LINEUP_TLS_KEY") or None,
            tls_self_signed=env.get("LINEUP_TLS_SELF_SIGNED", "").strip().lower()
            in ("1", "true", "yes", "on"),
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "mode": "direct",
            "host": self.host,
            "port": self.port,
            "token": self.token,
        }
        if self.person_name:
            data["personName"] = self.person_name
        if self.tls_cert and self.tls_key:
            data["tlsCert"], data["tlsKey"] = self.tls_cert, self.tls_key
        if self.tls_self_signed:
            data["tlsSelfSigned"] = True
        return data


@dataclass(frozen=True, slots=True)
class DirectEndpoint:
    """Where people open a direct-mode agent: ``urls`` (without the token), best first."""

    host: str
    port: int
    urls: tuple[str, ...]
    tls_fingerprint: str | None = None
    """The SHA-256 fingerprint of the certificate served, when it serves ``https``."""

    def with_token(self, token: str) -> tuple[str, ...]:
        """The same addresses carrying the token after ``#``, which browsers never send to
        the server (so it stays out of every log); the web app reads it and removes it."""
        return tuple(f"{url}/#token={quote(token, safe='')}" for url in self.urls)


class DirectModeError(RuntimeError):
    """Direct mode could not start or its embedded server stopped (the message says why)."""


@dataclass(frozen=True, slots=True)
class HostedIdentity:
    """The agent's identity in a hub its host keeps between runs (relay mode): the run then
    uses these instead of the configuration's, which are made anew each start."""

    agent_id: str
    workspace_id: str
    credential: str = field(repr=False)


class RunHosted(Protocol):
    def __call__(
        self,
        hub_url: str,
        state_path: Path,
        tls_fingerprint: str | None = None,
        *,
        identity: HostedIdentity | None = None,
    ) -> Coroutine[Any, Any, None]: ...


@dataclass(frozen=True, slots=True)
class HostedAgent:
    """What an agent hands the host that serves its LineUp (see :class:`AgentHost`).

    ``run(hub_url, state_path, tls_fingerprint, identity=None)`` runs the agent against the
    hub at ``hub_url`` with its state file at ``state_path`` until it stops (``stop()`` asks
    it to), pinning the certificate ``tls_fingerprint`` names when the host serves ``https``,
    as ``identity`` when the host keeps one;
    ``serving(endpoint)`` tells the agent where people can open it, for
    :meth:`lineup.sdk.Agent.serving`.
    """

    config: AgentConfig
    name: str
    run: RunHosted
    stop: Callable[[], None]
    serving: Callable[[DirectEndpoint], None]


@runtime_checkable
class AgentHost(Protocol):
    """Serves a direct-mode agent's LineUp from the agent's own process.

    ``lineup.direct.DirectHost`` is the one LineUp ships: ``await lineup.direct.run(agent)``.
    """

    async def serve(self, agent: HostedAgent) -> None:
        """Serve until the agent stops; raise :class:`DirectModeError` if serving fails."""
        ...


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "AgentHost",
    "DirectEndpoint",
    "DirectModeError",
    "DirectOptions",
    "HostedAgent",
    "HostedIdentity",
    "RunHosted",
    "check_direct_token",
    "new_direct_token",
]
