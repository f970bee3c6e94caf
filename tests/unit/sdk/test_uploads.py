"""Uploading files to the hub: the upload is retried over HTTP with one idempotency key, the
artifact then goes through the outbox, and a resumed handler uploads nothing twice."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from lineup.protocol.errors import InvalidArgument
from lineup.sdk import Agent, AgentConfig, Backoff, TaskContext, UploadedFile

from .fakehub import FakeHub
from .helpers import crash, running

MakeAgent = Callable[..., Agent]
REPORT = b"# Report\n\nAll done.\n"


@pytest.fixture
def make_uploading_agent(make_agent: MakeAgent, hub: FakeHub) -> MakeAgent:
    return lambda **options: make_agent(http_transport=hub.http, **options)


async def test_upload_artifact_stores_the_file_then_reports_it_with_its_hub_address(
    hub: FakeHub, make_uploading_agent: MakeAgent, tmp_path: Path
):
    report = tmp_path / "report.md"
    report.write_bytes(REPORT)
    agent = make_uploading_agent()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.upload_artifact("Report", report, summary="What I did")
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Write it up")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    [stored] = hub.files.values()
    assert stored["content"] == REPORT
    assert stored["name"] == "report.md"
    assert stored["mimeType"] == "text/markdown"
    sent = hub.upload_attempts[0]
    assert sent.headers["x-content-sha256"] == hashlib.sha256(REPORT).hexdigest()
    artifact = hub.effects_of("artifact.created", task_id)[0].payload
    assert artifact == {
        "name": "Report",
        "url": stored["url"],
        "mimeType": "text/markdown",
        "summary": "What I did",
        "artifactId": artifact["artifactId"],
    }


async def test_an_upload_is_retried_while_the_hub_is_unreachable_busy_or_unavailable(
    hub: FakeHub, make_uploading_agent: MakeAgent
):
    hub.fail_uploads = [0, 503, 429, 0]
    agent = make_uploading_agent()
    uploaded: list[UploadedFile] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        uploaded.append(await ctx.upload("log.txt", b"line 1\n"))
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Log")
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert len(hub.upload_attempts) == 5
    keys = {r.headers["idempotency-key"] for r in hub.upload_attempts}
    assert len(keys) == 1  # every retry is the same upload to the hub
    assert len(hub.files) == 1
    assert uploaded[0].url == next(iter(hub.files.values()))["url"]
    assert uploaded[0].mime_type == "text/plain"


async def test_a_refused_upload_fails_the_step_with_the_hubs_error(
    hub: FakeHub, make_uploading_agent: MakeAgent
):
    hub.fail_uploads = [413]
    agent = make_uploading_agent()
    errors: list[BaseException] = []

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        try:
            await ctx.upload_artifact("Huge", b"x" * 10)
        except InvalidArgument as exc:
            errors.append(exc)
            raise
        return "done"

    async with running(agent):
        task_id = hub.assign_task("Too big")
        await hub.wait_for(lambda: hub.final_status(task_id) == "failed")

    assert len(errors) == 1
    assert len(hub.upload_attempts) == 1  # invalid_argument is not retried
    assert hub.effects_of("artifact.created") == []


async def test_a_resumed_handler_does_not_upload_again(
    hub: FakeHub, make_uploading_agent: MakeAgent, tmp_path: Path
):
    async def handle(ctx: TaskContext) -> str:
        await ctx.upload_artifact("Report", REPORT, file_name="report.md")
        approval = await ctx.ask_approval("Publish?")
        return f"approved={approval.approved}"

    first = make_uploading_agent()
    first.task(handle)
    first_run = asyncio.create_task(first.run())
    task_id = hub.assign_task("Report")
    await hub.wait_for(lambda: hub.interactions())
    await first.drain()
    await crash(first_run)
    hub.resolve(hub.interactions()[0]["id"], option_id="approve")

    second = make_uploading_agent()
    second.task(handle)
    async with running(second):
        await hub.wait_for(lambda: hub.final_status(task_id) == "succeeded")

    assert len(hub.upload_attempts) == 1
    assert len(hub.effects_of("artifact.created")) == 1
    assert hub.duplicates == []


async def test_an_agent_uploads_outside_a_task_and_a_repeat_with_its_key_is_one_file(
    hub: FakeHub, config: AgentConfig, tmp_path: Path
):
    agent = Agent(config, state_dir=tmp_path, http_transport=hub.http, backoff=Backoff(0.001))
    first = await agent.upload("notes.txt", b"hello", idempotency_key="notes-1")
    again = await agent.upload("notes.txt", b"hello", idempotency_key="notes-1")
    assert first == again
    assert first.url.endswith(f"/files/{first.file_id}")
    assert len(hub.files) == 1


async def test_text_must_be_given_as_bytes_or_a_path(hub: FakeHub, config: AgentConfig):
    agent = Agent(config, http_transport=hub.http)
    with pytest.raises(TypeError, match="bytes"):
        await agent.upload("a.txt", "is this a path or the content?")  # type: ignore[arg-type]
    assert hub.upload_attempts == []
