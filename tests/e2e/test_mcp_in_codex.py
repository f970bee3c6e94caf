"""A real MCP host: the Codex CLI, with `lineup mcp` as its MCP server and a scripted model
that calls `ask_approval`, gets the person's answer — given through the hub's API — back as
the tool's output. Offline: the scripted model is the only provider, plugins, apps, analytics,
feedback and update checks are off, and (under strace, when it can trace) every connection
Codex and its MCP server open goes to loopback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.mcp_host import pair_mcp_server
from tests.e2e.processes import LINEUP, ROOT, HubProcess
from tests.support.people import Person
from tests.support.responses_model import ScriptedModel
from tests.support.waiting import until

pytestmark = pytest.mark.slow

CODEX = ROOT / "tests" / "mcp-conformance" / "node_modules" / ".bin" / "codex"


@pytest.fixture
def database_url() -> None:
    return None


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    scripted = ScriptedModel(
        namespace="mcp__lineup",
        tool="ask_approval",
        arguments={"title": "Delete the stale branch?", "risk": "low"},
    ).start()
    yield scripted
    scripted.stop()


def codex_home(directory: Path, model: ScriptedModel, server_env: dict[str, str]) -> Path:
    directory.mkdir(parents=True)
    env_table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in server_env.items())
    (directory / "config.toml").write_text(
        f"""
model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "{model.base_url}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[agents]
enabled = false

[features]
plugins = false
apps = false
remote_plugin = false
goals = false
tool_suggest = false
shell_snapshot = false
image_generation = false
# otherwise MCP tools are held back behind a tool search the scripted model does not use
tool_search_always_defer_mcp_tools = false

[mcp_servers.lineup]
command = {json.dumps(LINEUP)}
args = ["mcp", "--credentials", {json.dumps(server_env["LINEUP_MCP_CREDENTIALS"])}]
env = {{ {env_table} }}
startup_timeout_sec = 30
tool_timeout_sec = 120
"""
    )
    return directory


def traceable() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-o", os.devnull, "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(
    not CODEX.exists(), reason="the Codex CLI is not installed: run `make mcp-hosts`"
)
def test_codex_asks_for_approval_through_lineup_and_gets_the_persons_answer(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person], model: ScriptedModel
) -> None:
    ana = sign_up()
    paired = pair_mcp_server(hub.url, ana, tmp_path / "mcp", name="Codex")
    server_env = {
        "LINEUP_AGENT_HOME": str(paired.home),
        "LINEUP_MCP_CREDENTIALS": str(paired.credentials),
    }
    if os.environ.get("PYTHONPATH"):
        server_env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    home = codex_home(tmp_path / "codex", model, server_env)
    work = tmp_path / "work"
    work.mkdir()
    trace = tmp_path / "connect.trace"
    # an untrusted project starts no MCP server: trust the work directory for this run
    command = [
        str(CODEX),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--trust",
        "Delete the stale branch.",
    ]
    if traceable():
        command = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace), *command]
    log = (tmp_path / "codex.jsonl").open("wb")
    codex = subprocess.Popen(
        command,
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "CODEX_HOME": str(home), "HOME": str(tmp_path)},
    )
    try:

        def card() -> dict[str, object] | None:
            assert codex.poll() is None, (tmp_path / "codex.jsonl").read_text()[-3000:]
            cards = ana.read("/interactions?status=requested")["interactions"]
            return next(iter(cards), None)

        asked = until(card, "Codex's approval card in LineUp", timeout=90)
        assert asked["request"]["title"] == "Delete the stale branch?"  # type: ignore[index]
        assert asked["agentId"] == paired.agent_id
        ana.send(
            f"/interactions/{asked['id']}/respond",
            {"response": {"optionId": "approve", "text": "Yes, it is merged"}},
        )
        assert codex.wait(timeout=90) == 0, (tmp_path / "codex.jsonl").read_text()[-3000:]
    finally:
        (tmp_path / "model-requests.json").write_text(json.dumps(model.requests, indent=1))
        if codex.poll() is None:
            codex.kill()
            codex.wait()
        log.close()

    assert model.offered[0] == [model.namespace]  # Codex named the server's tools so
    outputs = model.tool_outputs()
    assert outputs, "Codex never sent the model the tool's output"
    assert '"approved": true' in outputs[-1] or '"approved":true' in outputs[-1], outputs[-1]
    assert "Yes, it is merged" in outputs[-1]
    said = (tmp_path / "codex.jsonl").read_text()
    assert "Done. Tool said:" in said

    if trace.exists():  # strace could trace: every connect(), Codex's and its children's
        addresses = re.findall(
            r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', trace.read_text()
        )
        remote = {a or b for a, b in addresses} - {"127.0.0.1", "::1"}
        assert not remote, f"connections beyond loopback: {sorted(remote)}"
