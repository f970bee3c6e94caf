"""An agent waiting for its person's confirmation, and its settings (seed 001 §6, §7.1)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from lineup.sdk import Agent
from tests.support.waiting import until_async

from .fakehub import FakeHub
from .helpers import running

MakeAgent = Callable[..., Agent]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "model": {
            "type": "string",
            "title": "Model",
            "enum": ["small", "large"],
            "default": "small",
        },
        "retries": {"type": "integer", "minimum": 0, "maximum": 5, "default": 2},
        "dryRun": {"type": "boolean", "title": "Dry run"},
    },
}


async def test_an_unconfirmed_agent_says_it_waits_and_keeps_running_until_confirmed(
    hub: FakeHub, make_agent: MakeAgent, caplog: pytest.LogCaptureFixture
):
    hub.awaiting_confirmation = True
    agent = make_agent()
    with caplog.at_level(logging.INFO, logger="lineup.sdk"):
        async with running(agent):
            await until_async(lambda: agent.connected, "the welcome")
            assert agent.awaiting_confirmation
            assert "waiting for a person to confirm" in caplog.text
            hub.emit("agent.confirmed", {"agentId": hub.agent_id, "name": "Builder"})
            await until_async(lambda: not agent.awaiting_confirmation, "the confirmation")
            assert agent.connected
    assert "confirmed this agent as 'Builder'" in caplog.text


async def test_the_hello_declares_the_settings_schema_and_defaults_hold_until_the_hub_says(
    hub: FakeHub, make_agent: MakeAgent
):
    agent = make_agent(settings_schema=SCHEMA)
    assert agent.settings == {"model": "small", "retries": 2}
    async with running(agent):
        await hub.wait_for(lambda: hub.hellos)
    assert hub.hellos[0]["settingsSchema"] == SCHEMA


async def test_settings_come_with_the_welcome_and_live_and_the_hook_hears_each_change(
    hub: FakeHub, make_agent: MakeAgent
):
    hub.settings = {"model": "large", "retries": 2}
    agent = make_agent(settings_schema=SCHEMA)
    heard: list[dict[str, Any]] = []
    awaited: list[dict[str, Any]] = []

    @agent.on_settings_change
    def on_settings(values: dict[str, Any]) -> None:
        heard.append(values)

    @agent.on_settings_change
    async def on_settings_async(values: dict[str, Any]) -> None:
        awaited.append(values)

    async with running(agent):
        await until_async(lambda: agent.settings["model"] == "large", "the welcome's settings")
        hub.emit(
            "agent.settings", {"agentId": hub.agent_id, "values": {"model": "small", "retries": 5}}
        )
        await until_async(lambda: agent.settings["retries"] == 5, "the new settings")
        await until_async(lambda: len(awaited) == 2, "the async hook")
    assert heard == [{"model": "large", "retries": 2}, {"model": "small", "retries": 5}]
    assert awaited == heard


def test_a_settings_schema_outside_the_subset_is_refused_at_once(make_agent: MakeAgent):
    with pytest.raises(ValueError, match="pattern"):
        make_agent(
            settings_schema={
                "type": "object",
                "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}},
            }
        )
