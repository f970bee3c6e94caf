"""Every route and dependency of the HTTP API is a coroutine. FastAPI runs a plain ``def`` in
its thread pool: a hop to a thread and back, which under an agent's flood cost a person's
request milliseconds each (docs/benchmarks.md) for functions that do no blocking work."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from lineup.hub.app import create_app
from lineup.hub.config import Settings


def _calls(dependant: Dependant) -> Iterator[Any]:
    if dependant.call is not None:
        yield dependant.call
    for sub in dependant.dependencies:
        yield from _calls(sub)


def _api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Routes, through included routers and mounts alike."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(getattr(route, "original_router", route), "routes", None)
        if inner is not None and inner is not routes:
            yield from _api_routes(list(inner))


def test_no_route_or_dependency_runs_in_the_thread_pool() -> None:
    app = create_app(Settings(database_url="sqlite://"))
    routes = list(_api_routes(list(app.routes)))
    assert len(routes) > 50
    sync = {
        f"{route.path}: {getattr(call, '__qualname__', call)}"
        for route in routes
        for call in _calls(route.dependant)
        if not (inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call))
    }
    assert not sync, sorted(sync)
