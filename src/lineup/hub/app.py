"""The hub's ASGI application: HTTP API, the two WebSockets, health, and the web app."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query, WebSocket
from starlette.routing import WebSocketRoute
from starlette.types import Receive, Scope, Send

from lineup import __version__
from lineup.hub import health
from lineup.hub.agent_gateway import serve_agent
from lineup.hub.api import agents as agents_api
from lineup.hub.api import app_tools as tools_api
from lineup.hub.api import auth as auth_api
from lineup.hub.api import bindings as bindings_api
from lineup.hub.api import direct as direct_api
from lineup.hub.api import files as files_api
from lineup.hub.api import governance as governance_api
from lineup.hub.api import hosted as hosted_api
from lineup.hub.api import invitations as invitations_api
from lineup.hub.api import notifications as notifications_api
from lineup.hub.api import openapi
from lineup.hub.api import providers as providers_api
from lineup.hub.api import raw_events as raw_events_api
from lineup.hub.api import session_files as session_files_api
from lineup.hub.api import settings as settings_api
from lineup.hub.api import tokens as tokens_api
from lineup.hub.api import work as work_api
from lineup.hub.api.deps import session_cookie
from lineup.hub.client_gateway import serve_client
from lineup.hub.config import Settings
from lineup.hub.errors import install_error_handlers
from lineup.hub.hosted import EngineHost
from lineup.hub.lifespan import hub_lifespan
from lineup.hub.logs import RequestContext, request_id, request_id_of
from lineup.hub.recorder import Clock
from lineup.hub.request_guard import RequestGuard, nul_in_address
from lineup.hub.security_headers import SecurityHeaders
from lineup.hub.web_app import STATIC_DIR, mount_web_app
from lineup.protocol.times import now_ms

AGENT_SOCKET_PATH = "/ws/agent"


def create_app(
    settings: Settings, *, clock: Clock = now_ms, engine_host: EngineHost | None = None
) -> FastAPI:
    """The hub's application; ``engine_host`` runs the agents it hosts (``lineup serve``
    passes one: see :mod:`lineup.hub.hosted`)."""
    app = FastAPI(
        title="LineUp hub",
        version=__version__,
        description="See and steer the AI agents you already run.",
        lifespan=hub_lifespan(settings, clock, engine_host),
    )
    install_error_handlers(app)
    openapi.install(app, session_cookie=session_cookie(settings))
    app.add_middleware(RequestGuard, settings=settings)
    # request ids in the logs, errors by code in the metrics
    app.add_middleware(RequestContext, on_status=_count_status)
    app.include_router(health.router)
    app.include_router(auth_api.router)
    app.include_router(invitations_api.router)
    app.include_router(agents_api.router)
    app.include_router(session_files_api.router)
    app.include_router(work_api.router)
    app.include_router(raw_events_api.router)
    app.include_router(files_api.router)
    app.include_router(notifications_api.router)
    app.include_router(tools_api.router)
    app.include_router(governance_api.router)
    app.include_router(providers_api.router)
    app.include_router(settings_api.router)
    app.include_router(bindings_api.router)
    app.include_router(tokens_api.router)
    app.include_router(hosted_api.router)
    # GET /api/direct for every hub; the rest only in direct mode
    app.include_router(direct_api.router)
    if settings.direct is not None:
        app.add_middleware(direct_api.RefuseInDirectMode)
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, errors included

    async def agent_socket(socket: WebSocket) -> None:
        await serve_agent(app.state.hub, socket)

    # A plain Starlette route, not FastAPI's: it needs no dependency injection, and FastAPI's
    # per-connection wrappers (exit stacks, a copy of the scope) cost some 8 KiB for each
    # of up to 10,000 idle agents a node holds.
    app.router.routes.append(WebSocketRoute(AGENT_SOCKET_PATH, agent_socket))

    @app.websocket("/ws/client")
    async def client_socket(
        socket: WebSocket, workspace_id: str = Query(alias="workspaceId", max_length=128)
    ) -> None:
        with app.state.hub.metrics.person_socket():
            await serve_client(app.state.hub, socket, workspace_id)

    mount_web_app(app, settings.static_dir or STATIC_DIR)
    return app


class AgentSocketFirst:
    """The hub's ASGI app, with the agents' socket served beneath its middleware stack.

    An idle agent's connection lives for hours, and each layer of the stack it passed through
    stays suspended for all of it: a coroutine frame and the send wrapper it closed over, per
    layer — some 7 KiB a socket in all (tracemalloc), for up to 10,000 agents a node. None of
    those layers does anything for this socket past its first step, so this applies those
    steps here (the request guard's refusal of a NUL in the address, the request id for the
    logs) and hands the socket to ``serve_agent``. uvicorn's proxy-header middleware stays
    outside it. Everything else, and the agents' socket in direct mode, goes through ``app``.
    """

    __slots__ = ("app",)

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "websocket"
            or scope["path"] != AGENT_SOCKET_PATH
            or scope.get("root_path")
            or self.app.state.hub.settings.direct is not None
        ):
            await self.app(scope, receive, send)
            return
        if nul_in_address(scope) is not None:  # refused before the handshake: HTTP 403
            await send({"type": "websocket.close", "code": 1008})
            return
        token = request_id.set(request_id_of(scope))
        try:
            await serve_agent(self.app.state.hub, WebSocket(scope, receive, send))
        finally:
            request_id.reset(token)


def openapi_document() -> dict[str, Any]:
    """The HTTP API's OpenAPI document as a hub with default settings serves it at
    ``/openapi.json``; ``lineup schemas`` writes it to ``docs/spec/openapi.json`` for the web
    app's generated API types."""
    document: dict[str, Any] = create_app(Settings(database_url="sqlite://")).openapi()
    return document


def _count_status(scope: Any, status: int) -> None:
    if status >= 400:
        app = scope.get("app")
        hub = getattr(getattr(app, "state", None), "hub", None)
        if hub is not None:
            hub.metrics.http_status(status)
