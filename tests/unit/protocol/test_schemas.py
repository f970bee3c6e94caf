"""The exported JSON Schemas under docs/spec/schemas match the code; regenerate with
``make schemas`` when a protocol model changes."""

import json
from pathlib import Path

import jsonschema
import pytest

from lineup.protocol.events import Sender
from lineup.protocol.schemas import all_schemas, render

from .samples import SAMPLES, envelope

SCHEMA_DIR = Path(__file__).resolve().parents[3] / "docs" / "spec" / "schemas"


def test_exported_schemas_match_the_code():
    expected = all_schemas()
    on_disk = {
        str(path.relative_to(SCHEMA_DIR)): path.read_text(encoding="utf-8")
        for path in SCHEMA_DIR.rglob("*.json")
    }
    assert sorted(on_disk) == sorted(expected), "run `make schemas`"
    for relative, schema in expected.items():
        assert on_disk[relative] == render(schema), f"{relative} drifted: run `make schemas`"


@pytest.mark.parametrize("relative", sorted(all_schemas()))
def test_every_exported_schema_is_valid_json_schema(relative):
    jsonschema.Draft202012Validator.check_schema(all_schemas()[relative])


@pytest.mark.parametrize(("event_type", "sender"), list(SAMPLES), ids=lambda v: str(v))
def test_the_samples_validate_against_the_exported_schemas(event_type, sender):
    schemas = all_schemas()
    jsonschema.validate(envelope(event_type, {}), schemas["envelope.json"])
    if event_type.startswith("tool."):
        name = f"tools/{event_type}.json"
    elif sender is Sender.AGENT and f"payloads/{event_type}.agent.json" in schemas:
        name = f"payloads/{event_type}.agent.json"
    else:
        name = f"payloads/{event_type}.json"
    jsonschema.validate(json.loads(json.dumps(SAMPLES[(event_type, sender)])), schemas[name])
