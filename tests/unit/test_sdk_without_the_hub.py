"""An agent's machine installs ``lineup`` without the hub's dependencies (``lineup[hub]``):
the SDK, the demo agent and the command line's agent side work there, and the hub's commands
say what to install instead of failing with a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

HUB_ONLY = (
    "fastapi starlette uvicorn sqlalchemy alembic asyncpg aiosqlite redis pywebpush "
    "aiosmtplib prometheus_client argon2 zxcvbn"
)

SCRIPT = textwrap.dedent(
    """
    import importlib.abc
    import sys

    HUB_ONLY = set(sys.argv[1].split())
    assert not HUB_ONLY & {name.split(".")[0] for name in sys.modules}


    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HUB_ONLY:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    sys.meta_path.insert(0, NotInstalled())

    from lineup.cli import main
    from lineup.sdk import Agent, AgentConfig, TaskContext
    from lineup.sdk.demo import build_agent

    config = AgentConfig(
        hub_url="http://127.0.0.1:9",
        websocket_url="ws://127.0.0.1:9/agent",
        agent_id="agent_1",
        workspace_id="ws_1",
        credential="secret",
    )
    demo = build_agent(config, state_dir=sys.argv[2] + "/demo")
    agent = Agent(config, state_dir=sys.argv[2] + "/own", name="mine")


    @agent.task
    async def handle(ctx: TaskContext) -> str:
        return "done"


    print(repr(demo), repr(agent))
    assert main(["version"]) == 0
    try:
        main(["demo-agent", "--help"])
    except SystemExit as done:
        assert done.code == 0
    else:
        raise AssertionError("demo-agent --help prints its help and exits")
    assert main(["serve"]) == 2
    assert main(["direct", "--token", "long-enough-token"]) == 2
    loaded = {name.split(".")[0] for name in sys.modules}
    assert not HUB_ONLY & loaded, HUB_ONLY & loaded
    assert not {"lineup.hub", "lineup.store", "lineup.direct"} & set(sys.modules)
    print("ok")
    """
)


def test_the_sdk_and_the_demo_agent_work_without_the_hubs_dependencies(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    env["LINEUP_AGENT_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, HUB_ONLY, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "ok" in done.stdout
    assert "lineup[hub]" in done.stderr  # what `lineup serve` and `lineup direct` said
    assert "Traceback" not in done.stderr
