"""The MCP conformance suite (npm `@modelcontextprotocol/conformance`, installed in
tests/mcp-conformance by `make mcp-hosts`, which `make pytest` runs) against
`lineup mcp --transport http`: every scenario passes, or fails as docs/compliance.md records
it with its reason (those that need the suite's own fixture tools, prompts and resources)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.mcp_host import http_server, pair_mcp_server
from tests.e2e.processes import ROOT, HubProcess
from tests.support.people import Person

pytestmark = pytest.mark.slow

SUITE = ROOT / "tests" / "mcp-conformance"
BINARY = SUITE / "node_modules" / ".bin" / "conformance"

COMPLIANCE = ROOT / "docs" / "compliance.md"


def recorded() -> dict[str, str]:
    """Scenario → "pass" or "fail", as docs/compliance.md records them."""
    rows: dict[str, str] = {}
    for line in COMPLIANCE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[1].startswith(("pass", "fail")):
            continue
        for name in (n.strip() for n in cells[0].split(",")):
            rows[name] = cells[1].split(",")[0]
    return rows


@pytest.fixture
def database_url() -> None:
    return None


@pytest.mark.skipif(
    not BINARY.exists(), reason="run `make mcp-hosts` (npm ci in tests/mcp-conformance)"
)
def test_every_conformance_scenario_passes_or_its_failure_is_recorded(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    paired = pair_mcp_server(hub.url, sign_up(), tmp_path / "mcp")
    with http_server(paired) as url:
        run = subprocess.run(
            [str(BINARY), "server", "--url", url, "--suite", "all"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ},
        )
    found = {
        name: "pass" if mark == "✓" else "fail"
        for mark, name in re.findall(r"^([✓✗]) ([\w-]+): \d+ passed, \d+ failed", run.stdout, re.M)
    }
    assert found, run.stdout[-2000:] + run.stderr[-2000:]
    assert found == recorded(), "docs/compliance.md no longer says what the suite finds"
