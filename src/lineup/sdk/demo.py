"""The LineUp MVP demo loop (seed 001 §15) as an agent you can run: ``lineup demo-agent``.

For each task it: reports progress twice, shows a child task, asks a person to approve a
high-risk step, writes a report once (even if the agent is restarted), uploads it to the hub
as an artifact people can open, posts a result message and ends ``succeeded``. If the person
rejects, it says so and stops the task cleanly (``cancelled``, nothing changed). It replies to
follow-up messages too.

First run — pair with a code from LineUp (Agents → Connect my agent)::

    lineup demo-agent --hub http://127.0.0.1:8000 --code ABCD-EFGH

Later runs use the saved credentials (``~/.lineup-agent/credentials.json``)::

    lineup demo-agent

Stop it with Ctrl-C at any point, even while it waits for an approval: started again, it
carries on where it was, without repeating a step, and picks up an answer given meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lineup.sdk import (
    Agent,
    AgentConfig,
    ConnectionRefusedByHub,
    DirectModeError,
    MessageContext,
    PairingFailed,
    TaskContext,
    TaskStopped,
    agent_home,
    pair,
)

logger = logging.getLogger("demo_agent")


def build_agent(
    config: AgentConfig,
    *,
    work_seconds: float = 1.0,
    reports_dir: Path | None = None,
    **options: Any,
) -> Agent:
    """The demo agent; ``work_seconds`` is how long each pretend piece of work takes."""
    options.setdefault("name", "demo-agent")  # `lineup direct --name` renames it
    agent = Agent(config, **options)
    reports = reports_dir or agent_home() / "reports"

    def write_report(ctx: TaskContext, approver: str) -> str:
        reports.mkdir(parents=True, exist_ok=True)
        path = reports / f"{ctx.task_id}.md"
        path.write_text(
            f"# {ctx.title}\n\n{ctx.description or ''}\n\nApproved by {approver}; done.\n",
            encoding="utf-8",
        )
        return str(path.resolve())

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(10, "Reading the request")
        await asyncio.sleep(work_seconds)

        checks = await ctx.child("Pre-flight checks")
        await asyncio.sleep(work_seconds)
        await ctx.child_status(checks, "succeeded", summary="All checks passed")
        await ctx.progress(40, "Pre-flight checks passed")

        approval = await ctx.ask_approval(
            f"Go ahead with “{ctx.title}”?",
            why="This step changes things outside the agent's machine.",
            impact="It cannot be undone automatically; the report will say what changed.",
            risk="high",
            details={"task": ctx.title},
        )
        approver = approval.by_name or approval.by
        if not approval.approved:
            note = f" ({approval.note})" if approval.note else ""
            await ctx.say(f"Stopped: {approver} declined{note}. Nothing was changed.")
            raise TaskStopped("Declined; nothing was changed")

        await ctx.progress(70, "Working")
        await asyncio.sleep(work_seconds)
        report = await ctx.step("write report", lambda: write_report(ctx, approver))
        # uploaded to the hub: a path on this machine is no use to the person reading it
        await ctx.upload_artifact(
            "Report", Path(report), mime_type="text/markdown", summary="What I did"
        )
        await ctx.say(f"Done: {approver} approved, the report is attached.")
        return "Done"

    @agent.on_message
    async def on_message(message: MessageContext) -> None:
        await message.say(f"Noted: “{message.content}”.", chunk=0)

    return agent


async def main(
    argv: list[str] | None = None, *, run_agent: Callable[[Agent], Awaitable[None]] | None = None
) -> int:
    parser = argparse.ArgumentParser(
        prog="lineup demo-agent", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--hub", default="http://127.0.0.1:8000", help="the hub's address")
    parser.add_argument("--code", help="a pairing code, to pair this agent (first run)")
    parser.add_argument("--name", default="demo-agent", help="the agent's name when pairing")
    parser.add_argument("--credentials", type=Path, help="credentials file to use")
    parser.add_argument(
        "--state-dir",
        type=Path,
        help="where the agent keeps its credentials (unless --credentials), state and reports",
    )
    parser.add_argument(
        "--work-seconds", type=float, default=1.0, help="how long each pretend step takes"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.state_dir is not None and args.credentials is None:
        args.credentials = args.state_dir / "credentials.json"

    try:
        if args.code:
            config = await pair(
                args.hub, args.code, name=args.name, credentials_path=args.credentials
            )
        else:
            config = AgentConfig.load(args.credentials)
    except (PairingFailed, FileNotFoundError, ValueError) as problem:
        logger.error("%s", problem)
        return 2

    agent = build_agent(
        config,
        work_seconds=args.work_seconds,
        state_dir=args.state_dir,
        reports_dir=args.state_dir / "reports" if args.state_dir else None,
    )
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not on Windows
            loop.add_signal_handler(signum, agent.stop)
    try:
        await (agent.run() if run_agent is None else run_agent(agent))
    except ConnectionRefusedByHub as refusal:
        logger.error("%s", refusal)
        return 3
    except DirectModeError as problem:  # `lineup direct` serves the demo agent that way
        logger.error("%s", problem)
        return 2
    return 0


def run(
    argv: list[str] | None = None, *, run_agent: Callable[[Agent], Awaitable[None]] | None = None
) -> int:
    """Entry point of ``lineup demo-agent``. ``run_agent`` runs the built agent (``Agent.run``
    unless given: ``lineup`` passes ``lineup.direct.run``, so a direct-mode configuration
    serves LineUp itself; the SDK cannot start the embedded hub on its own)."""
    return asyncio.run(main(argv, run_agent=run_agent))


if __name__ == "__main__":
    sys.exit(run())
