"""``/openapi.json`` describes what every route answers, and docs/spec/openapi.json (from which
the web app's API types are generated) is that document; regenerate with ``make schemas``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineup.hub.app import openapi_document
from lineup.protocol.schemas import render

SPEC = Path(__file__).resolve().parents[3] / "docs" / "spec" / "openapi.json"
DOCUMENT = openapi_document()
OPERATIONS = [
    (method.upper(), path, operation)
    for path, item in sorted(DOCUMENT["paths"].items())
    for method, operation in item.items()
]


def test_the_exported_openapi_document_matches_the_app() -> None:
    assert SPEC.read_text(encoding="utf-8") == render(DOCUMENT), "run `make schemas`"


def _described(schema: dict[str, Any]) -> bool:
    """A schema that says what the body holds: an object with properties, a list of such, a
    union of them, or a file's bytes. A bare ``{}`` or ``{"type": "object"}`` does not."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _described(DOCUMENT["components"]["schemas"][name])
    if schema.get("type") == "array":
        return _described(schema.get("items", {}))
    if "anyOf" in schema or "oneOf" in schema:
        return all(_described(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
    if schema.get("type") == "string" and schema.get("format") == "binary":
        return True
    return bool(schema.get("properties"))


@pytest.mark.parametrize(
    ("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS]
)
def test_every_success_answer_has_a_described_body(
    method: str, path: str, operation: dict[str, Any]
) -> None:
    successes = {s: r for s, r in operation["responses"].items() if s.startswith("2")}
    assert successes, f"{method} {path} declares no success answer"
    for status, response in successes.items():
        content = response.get("content")
        if status == "204":
            assert not content, f"{method} {path}: a 204 has no body"
            continue
        assert content, f"{method} {path} {status} has no response model"
        for media_type, body in content.items():
            schema = body.get("schema") or {}
            assert _described(schema), f"{method} {path} {status} {media_type}: {schema}"
