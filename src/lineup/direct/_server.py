"""The embedded hub: LineUp's own application, in the agent's process, for one person.

Why the hub itself rather than a second, smaller server: the web app, the people's socket
(replay, resume, live), the task state machine, interactions, streaming and — as they are
added — tools and everything else the hub does then work in direct mode without a second
implementation. What direct mode changes is configuration (:class:`~lineup.hub.config.
DirectMode`): a throwaway SQLite database in a temporary directory, one workspace, one person
signed in with the pre-shared token, one agent whose credential never leaves the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from lineup.hub.config import DirectMode, Settings
from lineup.hub.tls import ServedTls
from lineup.protocol.ids import new_id

if TYPE_CHECKING:
    from lineup.sdk import AgentConfig, DirectOptions

log = logging.getLogger("lineup.direct")

SHUTDOWN_SECONDS = 3.0


class DirectServerFailed(RuntimeError):
    """The embedded hub could not start (its log says why)."""


class EmbeddedHub:
    """The hub application on ``host:port`` with its data in a temporary directory.

    ``bind()`` opens the listening socket at once (so a busy port is reported before anything
    starts, and port 0 is resolved); ``start()`` serves on it; ``stop()`` shuts down and
    deletes the directory — the database with it. Given a ``directory`` (relay mode's), the
    data lives there and is kept: the next start opens the same database.
    """

    def __init__(
        self,
        mode: DirectMode,
        *,
        host: str,
        port: int,
        static_dir: Path | None = None,
        heartbeat_interval: float = 25.0,
        server_log_level: str = "warning",
        tls: ServedTls | None = None,
        directory: Path | None = None,
    ) -> None:
        self.mode = mode
        self.tls = tls
        self.host = host
        self.requested_port = port
        self.keep = directory is not None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="lineup-direct-"))
        self.settings = Settings(
            database_url=f"sqlite+aiosqlite:///{self.directory / 'hub' / 'lineup.db'}",
            home=self.directory / "hub",
            host=host,
            port=port,
            heartbeat_interval=heartbeat_interval,
            static_dir=static_dir,
            notify_enabled=False,  # no notifications in direct mode (see docs/direct-mode.md)
            direct=mode,
            tls=tls,
        )
        self._server_log_level = server_log_level
        self._socket: socket.socket | None = None
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_agent(
        cls,
        config: AgentConfig,
        options: DirectOptions,
        *,
        agent_name: str,
        person_name: str,
        static_dir: Path | None = None,
        heartbeat_interval: float = 25.0,
        server_log_level: str = "warning",
        tls: ServedTls | None = None,
    ) -> EmbeddedHub:
        """The embedded hub for one agent: its identity and credential from ``config``."""
        mode = DirectMode(
            token=options.token,
            agent_credential=config.credential,
            workspace_id=config.workspace_id,
            user_id=new_id("user"),
            agent_id=config.agent_id,
            agent_name=agent_name[:100] or "agent",
            person_name=person_name[:100] or "you",
        )
        return cls(
            mode,
            host=options.host,
            port=options.port,
            static_dir=static_dir,
            heartbeat_interval=heartbeat_interval,
            server_log_level=server_log_level,
            tls=tls,
        )

    @property
    def port(self) -> int:
        if self._socket is None:
            return self.requested_port
        return int(self._socket.getsockname()[1])

    def bind(self) -> None:
        """Listen on ``host:port`` now; raises ``OSError`` (port in use, no such address)."""
        if self._socket is not None:
            return
        (self.directory / "hub").mkdir(parents=True, exist_ok=True)
        family, kind, proto, _, address = socket.getaddrinfo(
            self.host, self.requested_port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and self.host == "::":
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind(address)
            sock.listen(128)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._socket = sock

    async def start(self) -> asyncio.Task[None]:
        """Serve in the background; returns the server's task (done = the server stopped)."""
        from lineup.hub.app import create_app
        from lineup.hub.connections import uvicorn_options

        self.bind()
        assert self._socket is not None
        install_token_redaction()
        config = uvicorn.Config(
            create_app(self.settings),
            log_config=None,  # the agent's process owns logging
            log_level=self._server_log_level,
            lifespan="on",
            proxy_headers=False,
            ws_max_size=1024 * 1024,
            timeout_graceful_shutdown=int(SHUTDOWN_SECONDS),
            ssl_certfile=str(self.tls.cert_file) if self.tls is not None else None,
            ssl_keyfile=str(self.tls.key_file) if self.tls is not None else None,
            **uvicorn_options(self.settings),  # the hub's header timeout and connection cap
        )
        self._server = _Server(config)
        self._task = asyncio.create_task(
            self._server.serve(sockets=[self._socket]), name="lineup-direct-server"
        )
        return self._task

    async def wait_serving(self) -> None:
        """Return once people can connect; raise if the server stopped before that."""
        assert self._server is not None and self._task is not None
        ready = asyncio.ensure_future(self._server.ready.wait())
        try:
            await asyncio.wait({ready, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if not self._server.ready.is_set():
            problem = self._task.exception() if not self._task.cancelled() else None
            raise DirectServerFailed(str(problem or "the embedded hub stopped while starting"))

    async def stop(self) -> None:
        """Shut the server down (people's sockets are closed) and delete the data (unless it
        is kept)."""
        try:
            if self._server is not None and self._task is not None:
                self._server.should_exit = True
                try:
                    async with asyncio.timeout(SHUTDOWN_SECONDS + 5):
                        await asyncio.gather(self._task, return_exceptions=True)
                except TimeoutError:
                    self._task.cancel()
                    await asyncio.gather(self._task, return_exceptions=True)
        finally:
            if self._socket is not None:
                self._socket.close()
                self._socket = None
            if not self.keep:
                shutil.rmtree(self.directory, ignore_errors=True)


class _Server(uvicorn.Server):
    """uvicorn without its signal handling (the agent's process owns its signals) and with
    an event for "accepting connections"."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        except SystemExit:  # uvicorn exits the process when the lifespan fails
            raise DirectServerFailed(
                "the embedded hub failed to start (see the log above)"
            ) from None
        if self.started:
            self.ready.set()


# --- keeping the token out of logs ----------------------------------------------------------

_TOKEN_IN_TEXT = re.compile(r"(token=)[^&\s\"'#]+", re.IGNORECASE)


class RedactTokens(logging.Filter):
    """Rewrites ``token=…`` in a record (e.g. ``GET /?token=…`` in an access log line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        if "token=" in message.lower():
            record.msg = _TOKEN_IN_TEXT.sub(r"\1[redacted]", message)
            record.args = ()
        return True


def install_token_redaction() -> None:
    """Put :class:`RedactTokens` on the server's loggers (once)."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactTokens) for f in logger.filters):
            logger.addFilter(RedactTokens())
