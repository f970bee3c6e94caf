"""docs/protocol.md describes every type the code knows (docs as tests)."""

from pathlib import Path

import pytest

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
