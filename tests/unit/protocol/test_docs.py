"""docs/protocol.md describes every type the code knows (docs as tests)."""

import re
from pathlib import Path

import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute
from starlette.routing import WebSocketRoute

from lineup.hub import Settings, create_app
from lineup.hub.api.openapi import all_routes
from lineup.protocol import CATALOG, RECORDED_TYPES
from lineup.protocol.codec import MAX_DEPTH
from lineup.protocol.errors import ErrorCode

DOC = (Path(__file__).resolve().parents[3] / "docs" / "protocol.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("event_type", sorted(set(CATALOG) | RECORDED_TYPES))
def test_every_event_type_is_documented(event_type):
    assert f"`{event_type}`" in DOC


@pytest.mark.parametrize("code", [c.value for c in ErrorCode])
def test_every_error_code_is_documented(code):
    assert f"`{code}`" in DOC


def test_the_limits_are_documented():
    assert "256 KiB" in DOC and f"**{MAX_DEPTH}**" in DOC


def _documented_routes() -> set[tuple[str, str]]:
    """``METHOD /path`` pairs the page names, with path parameters written any way (``{ws}``)."""
    found = re.findall(r"\b(GET|POST|PUT|PATCH|DELETE) (/[A-Za-z0-9_/{}.\-]*)", DOC)
    return {(method, re.sub(r"\{[^}]*\}", "{}", path).rstrip("/")) for method, path in found}


def _app_routes() -> list[tuple[str, str]]:
    app = create_app(Settings(database_url="sqlite://"))
    routes: list[tuple[str, str]] = []
    for route, path in all_routes(app):
        if isinstance(route, APIRoute) and route.include_in_schema:
            routes.extend((method, path) for method in sorted(route.methods))
        elif isinstance(route, WebSocketRoute | APIWebSocketRoute):
            routes.append(("GET", path))
    return routes


def test_the_route_list_reaches_into_the_routers():
    assert ("POST", "/api/workspaces/{workspace_id}/tasks") in _app_routes()


@pytest.mark.parametrize(("method", "path"), _app_routes())
def test_every_route_of_the_hub_is_documented(method, path):
    assert (method, re.sub(r"\{[^}]*\}", "{}", path)) in _documented_routes()


def test_the_page_leans_on_nothing_its_reader_does_not_have():
    assert not re.search(r"\bseeds?\b|\bissue \d", DOC, re.IGNORECASE)
