"""One `lineup mcp` per agent identity: a second server for the same state is refused with
what to do instead, and the identity is free again once the first one stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineup.mcp import AlreadyServing
from lineup.mcp._run import holding


def test_a_second_server_for_the_same_identity_is_refused_until_the_first_stops(
    tmp_path: Path,
) -> None:
    with (
        holding(tmp_path / "state"),
        pytest.raises(AlreadyServing, match="one server per agent identity"),
        holding(tmp_path / "state"),
    ):
        pass
    with holding(tmp_path / "state"):
        pass
