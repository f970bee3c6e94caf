"""The agent the relay tests run — in their process or under ``lineup relay --module
tests.support.relay_agent:build_agent`` — written once for every mode: nothing here knows
about relays.

A task reports progress, asks where to deploy with the app's ``choice`` tool, asks for an
approval, and succeeds with a summary naming both answers. A message is answered with
``Noted: …`` (naming its attachments: ``Noted: … [name (type)]``); one that asks for ``the
report`` gets :data:`REPORT` back as an artifact of the conversation, and one that asks for
``the chart`` gets :data:`CHART` (a PNG). ``RELAY_AGENT_LOG``, when set, gets one line per
handler step, so a test can tell a step done once from one done twice.
"""

from __future__ import annotations

import os
from pathlib import Path

from lineup.sdk import Agent, AgentConfig, Backoff, MessageContext, TaskContext

REPORT = ("# Weekly report\n\nAll builds green; the deploy went out on time. " * 400).encode()
"""The report the agent uploads (some 20 KB of Markdown)."""

CHART = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000030000000208020000001216f14d0000001049444154789c63"
    "f8cfc0c000c17016003bd805fbde1037650000000049454e44ae426082"
)
"""A 3 × 2 PNG the agent uploads as its chart."""


def _note(line: str) -> None:
    path = os.environ.get("RELAY_AGENT_LOG")
    if path:
        with Path(path).open("a", encoding="utf-8") as log:
            log.write(line + "\n")


def build_agent(config: AgentConfig, **options: object) -> Agent:
    agent = Agent(
        config,
        name="relay-builder",
        heartbeat_interval=3600.0,
        backoff=Backoff(initial=0.05, maximum=0.5),
    )

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        _note(f"start {ctx.task_id}")
        await ctx.progress(40, "Planning the deploy")
        where = await ctx.tools.choice("Deploy where?", ["test", "staging"])
        _note(f"chose {where}")
        approval = await ctx.ask_approval(f"Deploy to {where}?", risk="high")
        _note(f"approved {approval.approved}")
        return f"Deployed to {where}" if approval.approved else "Not deployed"

    @agent.on_message
    async def on_message(message: MessageContext) -> None:
        files = "".join(f" [{a.name} ({a.mime_type})]" for a in message.attachments)
        _note(f"message {message.content}{files}")
        if "the report" in message.content:
            await message.upload_artifact("Weekly report", REPORT, file_name="report.md",
                                          mime_type="text/markdown")  # fmt: skip
        if "the chart" in message.content:
            await message.upload_artifact("Build chart", CHART, file_name="chart.png",
                                          mime_type="image/png")  # fmt: skip
        await message.say(f"Noted: {message.content}{files}")

    return agent
