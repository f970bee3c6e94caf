from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lineup.sdk import Agent, AgentConfig, Backoff

from .fakehub import AGENT, CREDENTIAL, WORKSPACE, FakeHub


@pytest.fixture
def hub() -> FakeHub:
    return FakeHub()


@pytest.fixture
def config() -> AgentConfig:
    return AgentConfig(
        hub_url="http://hub.test",
        websocket_url="ws://hub.test/ws/agent",
        agent_id=AGENT,
        workspace_id=WORKSPACE,
        credential=CREDENTIAL,
    )


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def make_agent(hub: FakeHub, config: AgentConfig, state_dir: Path) -> Callable[..., Agent]:
    """A new Agent on the fake hub, sharing one state_dir (so a second one is a restart)."""

    def make(**overrides: Any) -> Agent:
        options: dict[str, Any] = {
            "state_dir": state_dir,
            "transport": hub,
            "heartbeat_interval": 3600.0,
            "backoff": Backoff(initial=0.001, maximum=0.005),
            "answer_timeout": 5.0,
        }
        options.update(overrides)
        return Agent(config, **options)

    return make
