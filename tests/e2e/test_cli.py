"""The `lineup` command: help, version, headless account set-up."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx

from tests.e2e.processes import LINEUP, HubProcess


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINEUP, *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )


def test_help_lists_the_commands():
    result = _run("--help")
    assert result.returncode == 0
    for command in ("serve", "version", "user", "demo-agent", "agent", "mcp", "schemas"):
        assert command in result.stdout


def test_version_names_the_protocol():
    result = _run("version")
    assert result.returncode == 0 and "LAP/0.1" in result.stdout


def test_user_create_sets_up_an_account_that_can_sign_in(tmp_path: Path):
    env = {**os.environ, "LINEUP_HOME": str(tmp_path), "LINEUP_PASSWORD": "a long password"}
    env.pop("LINEUP_DATABASE_URL", None)
    created = _run(
        "user",
        "create",
        "--email",
        "ops@example.test",
        "--name",
        "Ops",
        "--workspace",
        "Ops",
        env=env,
    )
    assert created.returncode == 0, created.stderr
    again = _run("user", "create", "--email", "ops@example.test", env=env)
    assert again.returncode == 1 and "already exists" in again.stderr
    hub = HubProcess(tmp_path, None).start()
    try:
        response = httpx.post(
            f"{hub.url}/api/auth/signin",
            json={"email": "ops@example.test", "password": "a long password"},
        )
        assert response.status_code == 200
        assert response.json()["workspaces"][0]["name"] == "Ops"
    finally:
        hub.stop()
