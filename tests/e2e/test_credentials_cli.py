"""``lineup credentials``: an operator hands the hub what a provider needs to reach its system;
the value goes in on standard input, is sealed in the database, and is never printed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from tests.e2e.processes import LINEUP

SECRET = "pk_live_not-for-anyone-to-see"


def _run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LINEUP_HOME": str(home)}
    env.pop("LINEUP_DATABASE_URL", None)
    return subprocess.run(
        [LINEUP, "credentials", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_credential_is_sealed_at_rest_and_never_shown(tmp_path: Path) -> None:
    held = _run(tmp_path, "set", "erp", "acme", "apiKey", stdin=SECRET + "\n")
    assert held.returncode == 0, held.stderr
    assert SECRET not in held.stdout + held.stderr
    listed = _run(tmp_path, "list")
    assert listed.stdout.strip() == "erp/acme: apiKey"
    with sqlite3.connect(tmp_path / "lineup.db") as db:
        (sealed,) = db.execute("SELECT sealed FROM provider_credentials").fetchone()
    assert SECRET not in sealed and sealed.startswith("lus1.")


def test_a_credential_is_never_taken_from_the_command_line(tmp_path: Path) -> None:
    refused = _run(tmp_path, "set", "erp", "acme", "apiKey")
    assert refused.returncode == 2
    assert "standard input" in refused.stderr
