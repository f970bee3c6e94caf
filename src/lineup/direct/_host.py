"""The direct-mode host: the embedded hub serves people, and the agent connects to it.

The SDK hands a :class:`~lineup.sdk.HostedAgent` to :meth:`DirectHost.serve`; this module
binds the port (so a busy one is reported before anything starts), starts the hub, runs the
agent against it over loopback with its state in the hub's temporary directory, announces
where people open it, and takes everything down — the data with it — when the agent stops
or the server does.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable

from lineup.direct._server import EmbeddedHub
from lineup.hub.config import lineup_home
from lineup.hub.tls import TlsSetupError, lan_address, tls_from_options
from lineup.sdk import Agent, DirectEndpoint, DirectModeError, HostedAgent

logger = logging.getLogger("lineup.direct")

STOP_SECONDS = 10.0
"""How long a stopping agent may take before it is cancelled."""


class DirectHost:
    """Serves a direct-mode agent's LineUp from its own process (an ``AgentHost``)."""

    async def serve(self, agent: HostedAgent) -> None:
        options = agent.config.direct
        if options is None:
            raise DirectModeError("This agent's configuration names a hub, not direct mode.")
        try:
            tls = tls_from_options(
                cert=options.tls_cert,
                key=options.tls_key,
                self_signed=options.tls_self_signed,
                home=lineup_home(),
                hosts=(options.host,),
            )
        except (TlsSetupError, OSError) as problem:
            raise DirectModeError(f"Cannot serve TLS: {problem}") from None
        hub = EmbeddedHub.for_agent(
            agent.config,
            options,
            agent_name=agent.name,
            person_name=options.person_name or _default_person(),
            tls=tls,
        )
        scheme = "https" if tls is not None else "http"
        pin = tls.fingerprint if tls is not None else None
        try:
            try:
                hub.bind()
            except OSError as exc:
                raise DirectModeError(
                    f"Cannot listen on {options.host}:{options.port} ({exc.strerror or exc}). "
                    "Is another program using that port? Choose another one."
                ) from None
            base = f"{scheme}://{_url_host(loopback_host(options.host))}:{hub.port}"
            server = await hub.start()
            core = asyncio.create_task(
                agent.run(base, hub.directory / "agent" / "state.db", pin),
                name="lineup-direct-agent",
            )
            serving = asyncio.create_task(hub.wait_serving(), name="lineup-direct-ready")
            try:
                done, _ = await asyncio.wait({core, serving}, return_when=asyncio.FIRST_COMPLETED)
                if serving in done and serving.exception() is None:
                    endpoint = DirectEndpoint(
                        options.host,
                        hub.port,
                        people_urls(options.host, hub.port, scheme=scheme),
                        tls_fingerprint=pin,
                    )
                    logger.info(
                        "direct mode: LineUp for %s is at %s (open it and enter the token)",
                        agent.name,
                        ", ".join(endpoint.urls),
                    )
                    agent.serving(endpoint)
                elif serving in done:
                    await end_agent(core, agent.stop)
                    raise DirectModeError(
                        f"The direct-mode server did not start: {serving.exception()}"
                    )
                finished, _ = await asyncio.wait(
                    {core, server}, return_when=asyncio.FIRST_COMPLETED
                )
                if core not in finished:
                    await end_agent(core, agent.stop)
                    raise DirectModeError(
                        "The direct-mode server stopped; the agent stopped with it."
                    )
                await core
            finally:
                serving.cancel()
                if not core.done():
                    await end_agent(core, agent.stop)
        finally:
            await hub.stop()


async def run(agent: Agent) -> None:
    """Run ``agent`` in whichever mode its configuration says: connected to a hub, in
    direct mode serving LineUp itself (with :class:`DirectHost`), or in relay mode serving it
    through WuKongIM (with :class:`~lineup.direct.RelayHost`)."""
    if agent.config.relay is not None:
        from lineup.direct._relay import RelayHost

        await agent.run(host=RelayHost())
        return
    await agent.run(host=DirectHost())


async def end_agent(core: asyncio.Task[None], stop: Callable[[], None]) -> None:
    """Stop the agent gently; cancel it if it does not stop (or had not started yet)."""
    stop()
    await asyncio.wait({core}, timeout=STOP_SECONDS)
    if not core.done():
        core.cancel()
    await asyncio.gather(core, return_exceptions=True)


def people_urls(host: str, port: int, *, scheme: str = "http") -> tuple[str, ...]:
    """How people reach a server bound to ``host:port``: the LAN address first."""
    if host in ("0.0.0.0", "::", ""):  # noqa: S104
        hosts = [h for h in (lan_address(), "127.0.0.1") if h]
    elif host == "localhost":
        hosts = ["127.0.0.1"]
    else:
        hosts = [host]
    return tuple(f"{scheme}://{_url_host(h)}:{port}" for h in dict.fromkeys(hosts))


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


def _default_person() -> str:
    try:
        import getpass

        return getpass.getuser() or "you"
    except Exception:
        return "you"
