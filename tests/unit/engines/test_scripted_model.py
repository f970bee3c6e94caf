"""The scripted model server the engine tests stand on: each dialect streams what its
clients parse, steps are taken in order, and every request is kept."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.scripted_model import ScriptedModel, Step


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as scripted:
        yield scripted


def events(response: httpx.Response) -> list[tuple[str | None, Any]]:
    found: list[tuple[str | None, Any]] = []
    name: str | None = None
    for line in response.text.splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
            found.append((name, data if data == "[DONE]" else json.loads(data)))
            name = None
    return found


def test_responses_stream_text_then_a_namespaced_call_and_log_the_tool_output(
    model: ScriptedModel,
) -> None:
    model.then(Step.text("Hel", "lo", reasoning="hm"), Step.call("ask", namespace="mcp__h", q=1))
    first = httpx.post(f"{model.base_url}/responses", json={"stream": True, "input": []})
    kinds = [name for name, _ in events(first)]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    deltas = [d["delta"] for n, d in events(first) if n == "response.output_text.delta"]
    assert deltas == ["Hel", "lo"]
    assert "response.reasoning_summary_text.delta" in kinds
    second = httpx.post(
        f"{model.base_url}/responses",
        json={"stream": True, "input": [{"type": "function_call_output", "output": "seen"}]},
    )
    done = next(d for n, d in events(second) if n == "response.output_item.done")["item"]
    assert (done["type"], done["namespace"], done["name"]) == ("function_call", "mcp__h", "ask")
    assert json.loads(done["arguments"]) == {"q": 1}
    assert model.tool_outputs() == ["seen"]


def test_chat_completions_stream_a_tool_call_in_chunks_and_end_with_done(
    model: ScriptedModel,
) -> None:
    model.then(Step.shell("ls"))
    response = httpx.post(f"{model.base_url}/chat/completions", json={"stream": True})
    chunks = [data for _, data in events(response)]
    assert chunks[-1] == "[DONE]"
    calls = [c["choices"][0]["delta"].get("tool_calls") for c in chunks[:-1] if c["choices"]]
    named = [c[0]["function"] for c in calls if c]
    assert named[0]["name"] == "bash"
    assert json.loads("".join(f["arguments"] for f in named)) == {"command": "ls"}
    finishes = [c["choices"][0]["finish_reason"] for c in chunks[:-1] if c["choices"]]
    assert finishes[-1] == "tool_calls"


def test_anthropic_messages_accept_the_beta_query_and_stream_a_tool_use(
    model: ScriptedModel,
) -> None:
    model.then(Step.shell("pwd"), Step.text("fine"))
    response = httpx.post(
        f"{model.root_url}/v1/messages?beta=true", json={"stream": True, "messages": []}
    )
    kinds = [name for name, _ in events(response)]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    start = next(d for n, d in events(response) if n == "content_block_start")
    assert start["content_block"]["type"] == "tool_use"
    assert start["content_block"]["name"] == "Bash"
    delta = next(d for n, d in events(response) if n == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"
    tool_result = {"type": "tool_result", "tool_use_id": "toolu_0", "content": "/home"}
    httpx.post(
        f"{model.root_url}/v1/messages?beta=true",
        json={"stream": True, "messages": [{"role": "user", "content": [tool_result]}]},
    )
    assert model.tool_outputs() == ["/home"]
    assert model.requests[0].path == "/v1/messages?beta=true"


def test_a_request_past_the_end_of_the_script_says_so(model: ScriptedModel) -> None:
    response = httpx.post(f"{model.base_url}/chat/completions", json={"stream": False})
    assert response.json()["choices"][0]["message"]["content"] == "(script exhausted)"


def test_an_error_step_answers_with_its_status_and_the_dialects_error_body(
    model: ScriptedModel,
) -> None:
    model.then(Step.error(429, "slow down"), Step.error(500, "broken"))
    anthropic = httpx.post(f"{model.root_url}/v1/messages", json={"stream": True})
    assert anthropic.status_code == 429
    assert anthropic.json() == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
    }
    openai = httpx.post(f"{model.base_url}/responses", json={"stream": True})
    assert openai.status_code == 500
    assert openai.json()["error"]["message"] == "broken"
