"""Direct mode (seed 000 §3.1): the agent serves LineUp itself, with no hub.

An agent normally connects out to a hub. In direct mode :meth:`lineup.sdk.Agent.run` starts
the hub's own application inside the agent's process, listening on ``host:port`` (9527 by
default) for people on the same network, and connects to it over loopback with a credential
made for this run. People open ``http://<agent-ip>:9527`` and enter the pre-shared token.
The handlers, tools and ``ask_*`` calls are the same in both modes: only the configuration
says which one runs (``{"mode": "direct", "token": …}`` in the credentials file, or
``LINEUP_MODE=direct`` with ``LINEUP_DIRECT_TOKEN``).

Everything the embedded hub records lives in a temporary directory that is deleted when
``run()`` returns: there is no history beyond the agent process. The agent's own state
(outbox, cursor, journal) lives there too, since it only has meaning against that log.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import re
import secrets
import socket
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from lineup.sdk._settings import Settings

logger = logging.getLogger("lineup.sdk")

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

    def __post_init__(self) -> None:
        object.__setattr__(self, "token", check_direct_token(self.token))
        if isinstance(self.port, bool) or not isinstance(self.port, int):
            raise ValueError("The direct-mode port must be a whole number.")
        if not 0 <= self.port <= 65535:
            raise ValueError("The direct-mode port must be between 0 and 65535.")
        if not self.host.strip():
            raise ValueError("The direct-mode host must not be empty (0.0.0.0 = every network).")

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
        return cls(token=token, host=host, port=port, person_name=person)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DirectOptions:
        """From ``LINEUP_DIRECT_TOKEN`` (required), ``LINEUP_DIRECT_HOST``,
        ``LINEUP_DIRECT_PORT`` and ``LINEUP_DIRECT_PERSON``."""
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
        return data


@dataclass(frozen=True, slots=True)
class DirectEndpoint:
    """Where people open a direct-mode agent: ``urls`` (without the token), best first."""

    host: str
    port: int
    urls: tuple[str, ...]

    def with_token(self, token: str) -> tuple[str, ...]:
        """The same addresses carrying the token after ``#``, which browsers never send to
        the server (so it stays out of every log); the web app reads it and removes it."""
        return tuple(f"{url}/#token={quote(token, safe='')}" for url in self.urls)


def people_urls(host: str, port: int) -> tuple[str, ...]:
    """How people reach a server bound to ``host:port``: the LAN address first."""
    if host in ("0.0.0.0", "::", ""):  # noqa: S104
        hosts = [h for h in (_lan_address(), "127.0.0.1") if h]
    elif host == "localhost":
        hosts = ["127.0.0.1"]
    else:
        hosts = [host]
    return tuple(f"http://{_url_host(h)}:{port}" for h in dict.fromkeys(hosts))


def loopback_host(host: str) -> str:
    """The address this process uses to reach its own server bound to ``host``."""
    if host in ("0.0.0.0", "", "localhost"):  # noqa: S104
        return "127.0.0.1"
    if host == "::":
        return "::1"
    return host


def _url_host(host: str) -> str:
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


def _lan_address() -> str | None:
    """This machine's address on its default route (no packet is sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address  # noqa: S104


def _default_person() -> str:
    try:
        import getpass

        return getpass.getuser() or "you"
    except Exception:
        return "you"


class DirectModeError(RuntimeError):
    """Direct mode could not start or its embedded server stopped (the message says why)."""


async def run_direct(
    settings: Settings,
    agent_name: str,
    run_core: Callable[[Settings], Coroutine[Any, Any, None]],
    stop_core: Callable[[], None],
    on_serving: Callable[[DirectEndpoint], None],
) -> None:
    """Serve LineUp from this process and run the agent against it until it stops."""
    from lineup.direct import EmbeddedHub  # the hub's code loads only in direct mode

    options = settings.config.direct
    assert options is not None
    hub = EmbeddedHub.for_agent(
        settings.config,
        options,
        agent_name=agent_name,
        person_name=options.person_name or _default_person(),
    )
    try:
        try:
            hub.bind()
        except OSError as exc:
            raise DirectModeError(
                f"Cannot listen on {options.host}:{options.port} ({exc.strerror or exc}). "
                "Is another program using that port? Choose another one."
            ) from None
        base = f"http://{_url_host(loopback_host(options.host))}:{hub.port}"
        config = replace(
            settings.config,
            hub_url=base,
            websocket_url=base.replace("http://", "ws://", 1) + "/ws/agent",
        )
        runtime = replace(settings, config=config, state_path=hub.directory / "agent" / "state.db")
        server = await hub.start()
        core = asyncio.create_task(run_core(runtime), name="lineup-direct-agent")
        serving = asyncio.create_task(hub.wait_serving(), name="lineup-direct-ready")
        try:
            done, _ = await asyncio.wait({core, serving}, return_when=asyncio.FIRST_COMPLETED)
            if serving in done and serving.exception() is None:
                endpoint = DirectEndpoint(
                    options.host, hub.port, people_urls(options.host, hub.port)
                )
                logger.info(
                    "direct mode: LineUp for %s is at %s (open it and enter the token)",
                    agent_name,
                    ", ".join(endpoint.urls),
                )
                on_serving(endpoint)
            elif serving in done:
                await _end(core, stop_core)
                raise DirectModeError(
                    f"The direct-mode server did not start: {serving.exception()}"
                )
            finished, _ = await asyncio.wait({core, server}, return_when=asyncio.FIRST_COMPLETED)
            if core not in finished:
                await _end(core, stop_core)
                raise DirectModeError("The direct-mode server stopped; the agent stopped with it.")
            await core
        finally:
            serving.cancel()
            if not core.done():
                await _end(core, stop_core)
    finally:
        await hub.stop()


async def _end(core: asyncio.Task[None], stop_core: Callable[[], None]) -> None:
    """Stop the agent gently; cancel it if it does not stop (or had not started yet)."""
    stop_core()
    await asyncio.wait({core}, timeout=10.0)
    if not core.done():
        core.cancel()
    await asyncio.gather(core, return_exceptions=True)


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DirectEndpoint",
    "DirectModeError",
    "DirectOptions",
    "check_direct_token",
    "new_direct_token",
    "people_urls",
    "run_direct",
]
