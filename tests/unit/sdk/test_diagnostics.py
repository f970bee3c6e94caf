"""The agent's diagnostic lines: redacted before they are kept, sent after each connection,
bounded, each agent its own, without changing what the program's own logging shows."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given

from lineup.protocol.agent_logs import MAX_LINE_BYTES, AgentLogs
from lineup.protocol.codec import decode_frame, encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import ErrorCode
from lineup.protocol.events import Sender
from lineup.protocol.redaction import REDACTED, Redactor
from lineup.sdk import Agent, AgentConfig, TaskContext
from lineup.sdk._diagnostics import DiagnosticLog, line_from_record
from tests.support.secret_lines import secrets_and_places

from .fakehub import CREDENTIAL, FakeHub
from .helpers import running

MakeAgent = Callable[..., Agent]


def _record(
    message: str, *args: Any, level: int = logging.WARNING, **extra: Any
) -> logging.LogRecord:
    record = logging.LogRecord("lineup.sdk", level, __file__, 1, message, args or None, None)
    record.__dict__.update(extra)
    return record


def _sent_lines(hub: FakeHub) -> list[dict[str, Any]]:
    return [line for batch in hub.log_batches for line in batch.payload["lines"]]


@given(secrets_and_places())
def test_no_secret_reaches_the_frame_the_sdk_sends(
    case: tuple[list[str], Redactor, str, dict[str, Any]],
) -> None:
    secrets, redactor, message, fields = case
    record = _record("%s", message, payload=fields, other={"deep": [fields]})
    line = line_from_record(record, redactor)
    envelope = Envelope(
        id="evt_1",
        type="agent.logs",
        occurred_at=datetime.now(UTC),
        workspace_id="ws_1",
        payload=AgentLogs(lines=[line]).wire(),
    )
    sent = encode(envelope)
    for secret in secrets:
        assert secret not in sent
        assert json.dumps(secret)[1:-1] not in sent
    decoded = decode_frame(sent, Sender.AGENT)  # and the hub takes it as it is
    assert not hasattr(decoded, "error"), decoded


def test_a_line_too_large_is_cut_to_fit_and_odd_values_become_text() -> None:
    redactor = Redactor()
    line = line_from_record(
        _record("é" * 5000, blob="x" * 10_000, when=datetime(2026, 1, 1), nul="a\x00b"),
        redactor,
    )
    assert line.size() <= MAX_LINE_BYTES
    assert line.fields == {"truncated": "the fields were too large to send"}
    small = line_from_record(
        _record("ok", when=datetime(2026, 1, 1), nul="a\x00b", n=float("nan")), redactor
    )
    assert small.fields == {
        "when": "datetime.datetime(2026, 1, 1, 0, 0)",
        "nul": "a\ufffdb",
        "n": "nan",
    }


def test_the_ring_keeps_the_newest_lines_when_the_hub_is_away() -> None:
    ring = DiagnosticLog(Redactor(), capacity=5)
    for n in range(12):
        ring.capture(_record(f"attempt {n}"))
    assert [line.message for line in ring.batch()] == [f"attempt {n}" for n in range(7, 12)]
    ring.sent(ring.batch()[:2])
    assert [line.message for line in ring.batch()] == ["attempt 9", "attempt 10", "attempt 11"]


async def test_failed_attempts_reach_the_hub_once_connected_without_the_credential(
    hub: FakeHub, make_agent: MakeAgent
) -> None:
    hub.fail_connects = 2
    agent = make_agent(diagnostics_interval=0.01, sensitive_fields=("api_key",))

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        logging.getLogger("lineup.sdk").warning(
            "model call failed for %s", CREDENTIAL, extra={"api_key": "sk-123456789", "try": 1}
        )
        return "done"

    async with running(agent):
        await hub.wait_for(lambda: any("connected to" in x["message"] for x in _sent_lines(hub)))
        task_id = hub.assign_task()
        await hub.wait_for(
            lambda: any(x["message"].startswith("model call") for x in _sent_lines(hub))
        )
    lines = _sent_lines(hub)
    failures = [x for x in lines if x["message"].startswith("cannot reach the hub")]
    assert len(failures) == 2 and all(x["level"] == "warning" for x in failures)
    messages = [x["message"] for x in lines]
    assert messages.index(failures[-1]["message"]) < next(
        i for i, m in enumerate(messages) if "connected to" in m
    )
    assert any("LineUp SDK" in m for m in messages)
    model = next(x for x in lines if x["message"].startswith("model call"))
    assert model["message"] == f"model call failed for {REDACTED}"
    assert model["fields"] == {"api_key": REDACTED, "try": 1}
    sent = "".join(hub_frame for hub_frame in map(encode, hub.log_batches))
    assert CREDENTIAL not in sent and "sk-123456789" not in sent
    assert hub.final_status(task_id) == "succeeded"
    assert not hub.effects_of("agent.logs"), "diagnostic lines are never events"


async def test_each_agent_of_a_process_sends_only_its_own_lines(
    make_agent: MakeAgent, config: AgentConfig, tmp_path: Path
) -> None:
    first_hub, second_hub = FakeHub(), FakeHub()
    first = make_agent(transport=first_hub, diagnostics_interval=0.01, diagnostic_loggers=("mine",))
    second = Agent(
        replace(config, agent_id="agent_second"),
        state_dir=tmp_path / "second",
        transport=second_hub,
        heartbeat_interval=3600.0,
        diagnostics_interval=0.01,
    )

    @first.task
    async def handle(ctx: TaskContext) -> str:
        logging.getLogger("mine").warning("only the first agent's")
        return "done"

    async with running(first), running(second):
        await second_hub.wait_for(lambda: _sent_lines(second_hub))
        first_hub.assign_task()
        await first_hub.wait_for(lambda: any(x["logger"] == "mine" for x in _sent_lines(first_hub)))
    assert not any(x["logger"] == "mine" for x in _sent_lines(second_hub))
    started = [x["message"] for x in _sent_lines(first_hub) if "starting" in x["message"]]
    assert started and all("agent_second" not in m for m in started)
    started = [x["message"] for x in _sent_lines(second_hub) if "starting" in x["message"]]
    assert started and all(m.startswith("agent agent_second starting") for m in started)


async def test_the_programs_own_handlers_see_what_they_saw_before(
    hub: FakeHub, make_agent: MakeAgent
) -> None:
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    root = logging.getLogger()
    handler = Keep()
    root.addHandler(handler)
    sdk = logging.getLogger("lineup.sdk")
    level = sdk.level
    try:
        agent = make_agent(diagnostics_interval=0.01)
        async with running(agent):
            await hub.wait_for(lambda: any("connected" in x["message"] for x in _sent_lines(hub)))
        assert sdk.level == level, "the level is put back"
    finally:
        root.removeHandler(handler)
    shown = [r for r in seen if r.name == "lineup.sdk"]
    assert all(r.levelno >= root.getEffectiveLevel() for r in shown)
    assert not [r for r in shown if r.levelno < logging.WARNING]


async def test_a_refused_batch_is_dropped_not_resent_and_the_agent_carries_on(
    hub: FakeHub, make_agent: MakeAgent
) -> None:
    hub.refuse["agent.logs"] = [ErrorCode.INVALID_ARGUMENT]
    agent = make_agent(diagnostics_interval=0.01)

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        logging.getLogger("lineup.sdk").warning("after the refusal")
        return "done"

    async with running(agent):
        await hub.wait_for(lambda: hub.refuse["agent.logs"] == [])
        task_id = hub.assign_task()
        await hub.wait_for(
            lambda: any(x["message"] == "after the refusal" for x in _sent_lines(hub))
        )
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")
    assert not any("connected to" in x["message"] for x in _sent_lines(hub)), "not resent"


async def test_without_an_interval_nothing_is_kept_or_sent(
    hub: FakeHub, make_agent: MakeAgent
) -> None:
    agent = make_agent(diagnostics_interval=None)
    async with running(agent):
        await hub.wait_for(lambda: hub.hellos)
        await agent.drain()
    assert hub.log_batches == []
