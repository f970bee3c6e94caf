"""The MCP server offers LineUp's questions and app tools as ``lineup.protocol.question_tools``
defines them: the same arguments (plus its own ``task_id`` and ``wait_seconds``), the same
descriptions — so an MCP host and a hosted engine see one tool surface."""

from __future__ import annotations

from pathlib import Path

from lineup.mcp import PersonLink, build_server
from lineup.protocol import question_tools as q
from lineup.sdk import Agent, AgentConfig

MCP_ONLY = {"task_id", "wait_seconds"}


async def test_the_mcp_tools_take_the_shared_arguments_and_descriptions(tmp_path: Path) -> None:
    config = AgentConfig(
        hub_url="http://127.0.0.1:9",
        websocket_url="ws://127.0.0.1:9/ws/agent",
        agent_id="agent_1",
        workspace_id="ws_1",
        credential="lna_test",
    )
    server = build_server(PersonLink(Agent(config, state_dir=tmp_path)))
    offered = {tool.name: tool for tool in await server.list_tools()}
    for shared in (*q.QUESTIONS, *q.APP_TOOLS):
        tool = offered[shared.name]
        assert tool.description == shared.description, shared.name
        assert tool.title == shared.title, shared.name
        expected = shared.input_schema()["properties"]
        properties = tool.input_schema["properties"]
        assert set(properties) - MCP_ONLY == set(expected), shared.name
        for name, schema in expected.items():
            assert properties[name] == schema, (shared.name, name)
