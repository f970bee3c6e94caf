"""The hub's ASGI application: HTTP API, the two WebSockets, health, and the web app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

from lineup import __version__
from lineup.hub.agent_gateway import serve_agent
from lineup.hub.api import agents as agents_api
from lineup.hub.api import auth as auth_api
from lineup.hub.api import work as work_api
from lineup.hub.client_gateway import serve_client
from lineup.hub.config import Settings
from lineup.hub.errors import error_response, install_error_handlers
from lineup.hub.monitor import Monitor
from lineup.hub.recorder import Clock, system_clock
from lineup.hub.state import HubState
from lineup.protocol.errors import Unavailable
from lineup.store import Store

log = logging.getLogger("lineup.hub")

STATIC_DIR = Path(__file__).parent / "static"

_PLACEHOLDER = """<!doctype html><html lang="en"><meta charset="utf-8">
<title>LineUp</title><body style="font-family:system-ui;margin:3rem">
<h1>LineUp hub is running</h1>
<p>The web app is not built into this installation. The HTTP API is at
<a href="/docs">/docs</a>.</p></body></html>"""


def create_app(settings: Settings, *, clock: Clock = system_clock) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await Store.open(settings.database_url)
        await store.migrate()
        hub = HubState.create(settings, store, clock)
        app.state.hub = hub
        monitor = asyncio.create_task(Monitor(hub).run(), name="lineup-monitor")
        log.info("LineUp hub %s ready (%s)", __version__, store.dialect)
        try:
            yield
        finally:
            monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await monitor
            for link in hub.presence.links():
                with contextlib.suppress(Exception):
                    await link.close(1012, "hub restarting")
            await store.close()

    app = FastAPI(
        title="LineUp hub",
        version=__version__,
        description="See and steer the AI agents you already run.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.include_router(auth_api.router)
    app.include_router(agents_api.router)
    app.include_router(work_api.router)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok", "version": __version__}

    @app.get("/readyz", tags=["health"], response_model=None)
    async def readyz() -> dict[str, Any] | JSONResponse:
        """The database (and Redis, when configured) answers."""
        hub: HubState = app.state.hub
        checks: dict[str, str] = {}
        try:
            await hub.store.last_sequence("readyz")
            checks["database"] = "ok"
        except Exception as exc:
            checks["database"] = f"unavailable: {type(exc).__name__}"
        if settings.redis_url:
            checks["redis"] = await _redis_ok(settings.redis_url)
        if all(v == "ok" for v in checks.values()):
            return {"status": "ok", "checks": checks}
        error = Unavailable("The hub is not ready.", details={"checks": checks})
        return error_response(error)

    @app.websocket("/ws/agent")
    async def agent_socket(socket: WebSocket) -> None:
        await serve_agent(app.state.hub, socket)

    @app.websocket("/ws/client")
    async def client_socket(
        socket: WebSocket, workspace_id: str = Query(alias="workspaceId", max_length=128)
    ) -> None:
        await serve_client(app.state.hub, socket, workspace_id)

    _mount_web_app(app, settings.static_dir or STATIC_DIR)
    return app


async def _redis_ok(url: str) -> str:
    from redis.asyncio import Redis

    client = Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
    try:
        await client.ping()
        return "ok"
    except Exception as exc:
        return f"unavailable: {type(exc).__name__}"
    finally:
        await client.aclose()


def _mount_web_app(app: FastAPI, static_dir: Path) -> None:
    """Serve the built web app; any unknown path gets index.html (client-side routes).

    The files are listed once at start (so no request can reach outside the folder) and again
    when a request misses a file-like path, which picks up a rebuild without a restart.
    """
    root = static_dir.resolve()
    index = root / "index.html"

    def scan() -> set[str]:
        if not root.is_dir():
            return set()
        return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}

    files = scan()

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def web_app(path: str) -> FileResponse | HTMLResponse:
        nonlocal files
        if path.startswith(("api/", "ws/")):
            from lineup.protocol.errors import NotFound

            raise NotFound("There is nothing at this address.")
        if path not in files and ("." in path.rsplit("/", 1)[-1] or "index.html" not in files):
            files = await asyncio.to_thread(scan)
        if "index.html" not in files:
            return HTMLResponse(_PLACEHOLDER)
        if path in files:
            return FileResponse(root / path)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
