"""/openapi.json is enough to write a client from: real response bodies and real errors."""

from __future__ import annotations

from typing import Any

import pytest

from lineup.hub import create_app
from tests.integration.hub.conftest import fast_settings

WRITES = {"post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("openapi")
    app = create_app(fast_settings(f"sqlite:///{home / 'hub.db'}", home))
    return app.openapi()


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def test_the_document_never_advertises_a_validation_error_the_hub_does_not_send(document):
    for method, path, operation in _operations(document):
        assert "422" not in operation["responses"], (method, path)
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_every_successful_response_names_its_schema(document):
    for method, path, operation in _operations(document):
        success = [s for s in operation["responses"] if s.startswith("2")]
        assert len(success) == 1, (method, path)
        if success[0] == "204":
            continue
        content = operation["responses"][success[0]]["content"]
        if "application/json" not in content:
            assert content, (method, path)  # a file or a stream names its media type
            continue
        schema = content["application/json"]["schema"]
        assert schema.get("$ref", "").startswith("#/components/schemas/"), (method, path)


def test_errors_are_listed_with_the_error_envelope(document):
    for method, path, operation in _operations(document):
        responses = operation["responses"]
        has_input = bool(operation.get("parameters")) or "requestBody" in operation
        if has_input:
            assert "400" in responses, (method, path)
        if "requestBody" in operation:
            assert "413" in responses, (method, path)
        if "{workspace_id}" in path:
            assert "401" in responses, (method, path)
        if method in WRITES and path.startswith("/api/workspaces/"):
            assert "403" in responses, (method, path)  # the CSRF header
        for status, response in responses.items():
            if status.startswith(("4", "5")):
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path)


def test_routes_that_need_a_session_say_so_and_list_its_errors(document):
    schemes = document["components"]["securitySchemes"]
    assert schemes["session"] == {
        "type": "apiKey",
        "in": "cookie",
        "name": "lineup_session",
        "description": schemes["session"]["description"],
    }
    assert schemes["csrf"]["in"] == "header" and schemes["csrf"]["name"] == "X-CSRF-Token"
    for method, path, operation in _operations(document):
        needs = {name for option in operation.get("security", []) for name in option}
        if path.startswith("/api/workspaces/") or path.startswith("/api/notifications"):
            assert "session" in needs, (method, path)
        if "session" in needs:
            assert "401" in operation["responses"], (method, path)
        if method in WRITES and "session" in needs:
            assert "csrf" in needs and "403" in operation["responses"], (method, path)
    assert "security" not in document["paths"]["/api/auth/signin"]["post"]


def test_rate_limited_routes_say_so(document):
    for path in ("/api/auth/signup", "/api/auth/signin", "/api/pairing/redeem"):
        assert "429" in document["paths"][path]["post"]["responses"]


def test_a_response_keeps_the_keys_its_view_leaves_out(hub):
    ana = hub.sign_up()
    events = ana.ok(ana.get("/events"))["events"]
    created = next(e for e in events if e["type"] == "workspace.created")
    assert "conversationId" not in created and "taskId" not in created
    assert "actor" in created
