"""The hub's ASGI application: HTTP API, the two WebSockets, health, and the web app."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Query, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import WebSocketRoute

from lineup import __version__
from lineup.hub.agent_gateway import serve_agent
from lineup.hub.api import agents as agents_api
from lineup.hub.api import auth as auth_api
from lineup.hub.api import direct as direct_api  # direct mode (issue 5)
from lineup.hub.api import files as files_api
from lineup.hub.api import invitations as invitations_api
from lineup.hub.api import notifications as notifications_api  # notifications (issue 6)
from lineup.hub.api import openapi, responses
from lineup.hub.api import tools as tools_api  # tools (issue 5)
from lineup.hub.api import work as work_api
from lineup.hub.api.deps import operator_only, session_cookie
from lineup.hub.api.openapi import answers, errors
from lineup.hub.client_gateway import serve_client
from lineup.hub.config import Settings
from lineup.hub.errors import error_response, install_error_handlers
from lineup.hub.logs import RequestContext  # cluster (issue 7)
from lineup.hub.monitor import Monitor
from lineup.hub.recorder import Clock, system_clock
from lineup.hub.request_guard import RequestGuard
from lineup.hub.secret_keys import key_file, reseal_stored
from lineup.hub.security_headers import SecurityHeaders
from lineup.hub.state import HubState
from lineup.protocol.errors import Unavailable
from lineup.store import Store
from lineup.store.sealed import Keyring

log = logging.getLogger("lineup.hub")

STATIC_DIR = Path(__file__).parent / "static"
AGENT_SOCKET_PATH = "/ws/agent"

_PLACEHOLDER = """<!doctype html><html lang="en"><meta charset="utf-8">
<title>LineUp</title><body style="font-family:system-ui;margin:3rem">
<h1>LineUp hub is running</h1>
<p>The web app is not built into this installation. The HTTP API is at
<a href="/docs">/docs</a>.</p></body></html>"""

_READY_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": responses.Ready, "description": "The database answers."},
    **errors(),
}


def create_app(settings: Settings, *, clock: Clock = system_clock) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await Store.open(settings.database_url)
        try:
            await store.migrate()
            keyring = await _open_secrets(settings, store)
        except BaseException:
            await store.close()
            raise
        hub = HubState.create(settings, store, clock, keyring)
        app.state.hub = hub
        if settings.direct is not None:  # direct mode (issue 5): its workspace, person, agent
            await direct_api.prepare(hub, settings.direct)
        clockwork = Monitor(hub)
        await hub.cluster.start()  # cluster (issue 7): leases, Redis Streams, hole checks
        monitor = asyncio.create_task(clockwork.run(), name="lineup-monitor")
        notifier = _start_notifications(hub)  # notifications (issue 6)
        log.info("LineUp hub %s ready (%s)", __version__, store.dialect)
        try:
            yield
        finally:
            monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await monitor
            if notifier is not None:  # notifications (issue 6)
                notifier.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await notifier
            for link in hub.presence.links():
                with contextlib.suppress(Exception):
                    await link.close(1012, "hub restarting")
            await hub.cluster.stop()  # cluster (issue 7)
            with contextlib.suppress(Exception):
                await store.flush()
            await hub.cluster.release()
            await store.close()

    app = FastAPI(
        title="LineUp hub",
        version=__version__,
        description="See and steer the AI agents you already run.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    openapi.install(app, session_cookie=session_cookie(settings))
    app.add_middleware(RequestGuard, settings=settings)
    # --- cluster (issue 7): request ids in the logs, errors by code in the metrics
    app.add_middleware(RequestContext, on_status=_count_status)
    app.include_router(auth_api.router)
    app.include_router(invitations_api.router)
    app.include_router(agents_api.router)
    app.include_router(work_api.router)
    app.include_router(files_api.router)
    app.include_router(notifications_api.router)  # notifications (issue 6)
    app.include_router(tools_api.router)  # tools (issue 5)
    # --- direct mode (issue 5): GET /api/direct for every hub; the rest only in direct mode
    app.include_router(direct_api.router)
    if settings.direct is not None:
        app.add_middleware(direct_api.RefuseInDirectMode)
    # --- end direct mode
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, errors included

    @app.get("/healthz", tags=["health"], **answers(responses.Health, database=False))
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok", "version": __version__}

    @app.get("/readyz", tags=["health"], response_model=None, responses=_READY_RESPONSES)
    async def readyz() -> dict[str, Any] | JSONResponse:
        """The database answers (and Redis, when configured: reported, not required)."""
        hub: HubState = app.state.hub
        checks: dict[str, str] = {}
        try:
            await hub.store.last_sequence("readyz")
            checks["database"] = "ok"
        except Exception as exc:
            checks["database"] = f"unavailable: {type(exc).__name__}"
        if settings.redis_url:
            checks["redis"] = await _redis_ok(settings.redis_url)
        if checks["database"] != "ok":
            error = Unavailable("The hub is not ready.", details={"checks": checks})
            return error_response(error)
        # cluster (issue 7): without Redis the nodes catch up from the database, so a node
        # stays ready (serving correctly, a little later) while Redis is down
        degraded = any(v != "ok" for v in checks.values())
        return {"status": "degraded" if degraded else "ok", "checks": checks}

    @app.get(
        "/readyz/cluster",
        tags=["health"],
        dependencies=[Depends(operator_only)],
        **answers(responses.ClusterNode, 401, 403),
    )
    async def readyz_cluster() -> dict[str, Any]:  # cluster (issue 7)
        """This node's part in the cluster: its name, the leases it holds, the stream."""
        hub: HubState = app.state.hub
        return hub.cluster.describe()

    @app.get(
        "/metrics", tags=["health"], include_in_schema=False, dependencies=[Depends(operator_only)]
    )
    async def metrics() -> Response:  # cluster (issue 7): Prometheus
        from lineup.hub.metrics import CONTENT_TYPE

        hub: HubState = app.state.hub
        return Response(hub.metrics.render(), media_type=CONTENT_TYPE)

    async def agent_socket(socket: WebSocket) -> None:
        await serve_agent(app.state.hub, socket)

    # A plain Starlette route, not FastAPI's: it needs no dependency injection, and FastAPI's
    # per-connection wrappers (exit stacks, a copy of the scope) cost some 8 KiB for each
    # of up to 10,000 idle agents a node holds (issue 7).
    app.router.routes.append(WebSocketRoute(AGENT_SOCKET_PATH, agent_socket))

    @app.websocket("/ws/client")
    async def client_socket(
        socket: WebSocket, workspace_id: str = Query(alias="workspaceId", max_length=128)
    ) -> None:
        with app.state.hub.metrics.person_socket():  # metrics (issue 7)
            await serve_client(app.state.hub, socket, workspace_id)

    _mount_web_app(app, settings.static_dir or STATIC_DIR)
    return app


# --- notifications (issue 6) ---------------------------------------------------------------
def _start_notifications(hub: HubState) -> asyncio.Task[None] | None:
    """The notification worker (``lineup.hub.notify``), unless turned off in the settings."""
    if not hub.settings.notify_enabled:
        return None
    from lineup.hub.notify import NotificationWorker

    worker = NotificationWorker(hub)
    hub.notifier = worker
    return asyncio.create_task(worker.run(), name="lineup-notifications")


# --- end notifications ---------------------------------------------------------------------


async def _open_secrets(settings: Settings, store: Store) -> Keyring:
    """The hub's keys, checked against every stored secret before anything uses one; what is
    plain text (an older hub's database) or sealed with an older key is sealed again now."""
    if settings.redis_url and not settings.secret_keys:
        log.warning(
            "LINEUP_REDIS_URL is set but LINEUP_SECRET_KEY is not: every node of a cluster "
            "needs the same LINEUP_SECRET_KEY (this node uses %s)",
            key_file(settings),
        )
    keyring, changed = await reseal_stored(settings, store)
    if changed:
        log.info("sealed %d stored secrets under key %s", changed, keyring.current_id)
    return keyring


# --- cluster (issue 7) ---------------------------------------------------------------------
def _count_status(scope: Any, status: int) -> None:
    if status >= 400:
        app = scope.get("app")
        hub = getattr(getattr(app, "state", None), "hub", None)
        if hub is not None:
            hub.metrics.http_status(status)


# --- end cluster ---------------------------------------------------------------------------


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
