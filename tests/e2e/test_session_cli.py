"""``lineup session export`` and ``lineup session import`` as an operator runs them, beside a
running hub on its database: the same bytes as the download, and an import the person then
downloads unchanged (docs/sessions.md)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.e2e.processes import LINEUP, HubProcess
from tests.support.people import Person

DATA = Path(__file__).resolve().parents[1] / "data" / "sessions"


def _run(hub: HubProcess, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "LINEUP_HOME": str(hub.home)}
    env.pop("LINEUP_DATABASE_URL", None)
    if hub.database_url is not None:
        env["LINEUP_DATABASE_URL"] = hub.database_url
    return subprocess.run(
        [LINEUP, "session", *args], capture_output=True, env=env, timeout=120, check=False
    )


def _download(person: Person, conversation_id: str) -> bytes:
    response = person.get(f"/conversations/{conversation_id}/session.jsonl")
    assert response.status_code == 200, response.text
    return response.content


def test_the_command_line_exports_and_imports_the_files_the_api_does(
    hub: HubProcess, sign_up: Callable[..., Person], tmp_path: Path
) -> None:
    ana = sign_up("ana@example.test")
    made = ana.send("/conversations", {"title": "Release notes"}, 201)["id"]
    ana.send(f"/conversations/{made}/messages", {"content": "Draft them, token=abc123"}, 201)

    exported = _run(hub, "export", "--conversation", made)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == _download(ana, made)
    assert b"abc123" not in exported.stdout
    out = tmp_path / "release.jsonl"
    written = _run(hub, "export", "--conversation", made, "--out", str(out))
    assert written.returncode == 0, written.stderr
    assert out.read_bytes() == exported.stdout

    imported = _run(hub, "import", str(out), "--user", "ana@example.test")
    assert imported.returncode == 0, imported.stderr
    found = re.search(rb"as conversation (conv_\S+?):", imported.stdout)
    assert found is not None, imported.stdout
    assert _download(ana, found.group(1).decode()) == exported.stdout

    pi = _run(hub, "import", str(DATA / "pi-0.73.1.jsonl"), "--user", "ana@example.test")
    assert pi.returncode == 0, pi.stderr
    assert b"2 branches (a pi file, version 3)" in pi.stdout

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(out.read_bytes() + b"{broken\n")
    refused = _run(hub, "import", str(bad), "--user", "ana@example.test")
    assert refused.returncode == 1
    assert refused.stderr.decode().startswith("error: Line 3: not JSON")

    missing = _run(hub, "export", "--conversation", "conv_nope")
    assert missing.returncode == 1 and b"No conversation" in missing.stderr
