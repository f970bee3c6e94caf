"""The LineUp MVP demo loop (seed 001 §15) as an agent you can run: ``lineup demo-agent``.

For each task it: reports progress twice, shows a child task, asks a person to approve a
high-risk step, writes a report once (even if the agent is restarted), uploads it to the hub
as an artifact people can open, posts a result message and ends ``succeeded``. If the person
rejects, it says so and stops the task cleanly (``cancelled``, nothing changed). It replies to
follow-up messages too.

A task or message about scheduling (it mentions "schedule" or 排产) runs the scheduling
scenario instead, through the hub's governed capabilities: it lists what it may use there,
reads the open orders and the machines' load, makes a trial schedule, reports the late
orders and the busiest machines, then asks to publish the trial — which waits for a person
to approve it on the confirm card — and says how that ended (published, rejected, or stale
because the schedule changed meanwhile). Where no scheduling capability is granted it says so.

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
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lineup.sdk import (
    Agent,
    AgentConfig,
    CapabilitySpec,
    ConnectionRefusedByHub,
    DirectModeError,
    InsecureConnection,
    InvocationOutcome,
    MessageContext,
    PairingFailed,
    TaskContext,
    TaskStopped,
    TlsOptions,
    agent_home,
    pair,
)

logger = logging.getLogger("demo_agent")

ORDERS_QUERY = "scheduling.orders.query"
RESOURCES_LOAD = "scheduling.resources.load"
SCHEDULE_PREVIEW = "scheduling.schedule.preview"
SCHEDULE_PUBLISH = "scheduling.schedule.publish"
SCHEDULING_READS = (ORDERS_QUERY, RESOURCES_LOAD, SCHEDULE_PREVIEW)

_ABOUT_SCHEDULING = re.compile(r"schedul|排产|排程", re.IGNORECASE)

HORIZON_DAYS = 14


def about_scheduling(*texts: str | None) -> bool:
    """Whether a task or message asks about production scheduling."""
    return any(text and _ABOUT_SCHEDULING.search(text) for text in texts)


class ScenarioEnded(Exception):
    """The scheduling scenario stopped early; ``summary`` says why (already told)."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


async def run_scheduling(ctx: TaskContext | MessageContext) -> str:
    """The scheduling scenario in a task or a message's conversation; returns a summary.

    Raises :class:`ScenarioEnded` when it stopped without publishing (a read that failed, a
    rejection, a stale trial, an unknown result), after saying why in the conversation.
    """
    specs = {spec.id: spec for spec in await ctx.capabilities.list()}
    missing = [name for name in SCHEDULING_READS if name not in specs]
    if missing:
        known = any(name.startswith("scheduling.") for name in specs)
        if known:
            text = (
                "I can see part of the scheduling system here, but not "
                + ", ".join(missing)
                + ", so I cannot make a trial schedule. An admin can grant it in the "
                "project's policy."
            )
        else:
            text = (
                "Sorry — I have no access to a scheduling system in this conversation. "
                "Ask me in a project whose policy grants the scheduling capabilities."
            )
        await ctx.say(text, chunk=0)
        return "No scheduling capabilities here"

    async def read(name: str, params: dict[str, Any]) -> dict[str, Any]:
        outcome = await ctx.invoke(name, params, instance=_instance(specs[name]))
        if not outcome.succeeded or outcome.output is None:
            await ctx.say(f"I could not read {name}: {_problem(outcome)}", chunk=0)
            raise ScenarioEnded(f"{name} {outcome.status.value}")
        return outcome.output

    orders = (await read(ORDERS_QUERY, {"status": "open"})).get("orders", [])
    load = await read(RESOURCES_LOAD, {})
    trial = await read(SCHEDULE_PREVIEW, {"horizonDays": HORIZON_DAYS})
    draft_id, based_on = trial["draftId"], trial["basedOnVersion"]
    await ctx.say(_report(orders, load, trial), chunk=0)

    publish = specs.get(SCHEDULE_PUBLISH)
    if publish is None:
        await ctx.say(
            f"I may not publish schedules here, so trial {draft_id} stays a draft. In a "
            "project conversation that allows publishing I can ask for approval.",
            chunk=0,
        )
        return f"Trial {draft_id} ready; not published"

    def heard(outcome: InvocationOutcome) -> None:
        logger.info("publishing %s: %s", draft_id, outcome.status.value)

    outcome = await ctx.invoke(
        SCHEDULE_PUBLISH,
        {"draftId": draft_id, "basedOnVersion": based_on},
        instance=_instance(publish),
        on_status=heard,
    )
    if outcome.succeeded:
        version = (outcome.output or {}).get("publishedVersion")
        await ctx.say(f"Published: trial {draft_id} is now schedule version {version}.", chunk=0)
        return f"Published schedule version {version}"
    code = outcome.error.code if outcome.error is not None else None
    if outcome.status.value == "unknown_result":
        await ctx.say(
            f"I cannot tell whether trial {draft_id} was published: the scheduling system "
            "did not answer in time. Please check its current version before trying again.",
            chunk=0,
        )
        raise ScenarioEnded("Publishing: unknown result")
    if code == "conflict":
        text = (
            f"Not published: the schedule changed after trial {draft_id} was made (it was "
            f"based on version {based_on}). Ask me again for a fresh trial."
        )
    elif outcome.status.value == "rejected" and code == "unavailable":
        text = f"Not published: nobody approved trial {draft_id} in time."
    elif outcome.status.value == "rejected":
        text = f"Not published: {_problem(outcome)}"
    else:
        text = f"Publishing trial {draft_id} failed: {_problem(outcome)}"
    await ctx.say(text, chunk=0)
    raise ScenarioEnded(f"Not published ({outcome.status.value})")


def _instance(spec: CapabilitySpec) -> str | None:
    """The provider's instance: left to the hub when there is one, else the first."""
    return spec.instances[0] if len(spec.instances) > 1 else None


def _problem(outcome: InvocationOutcome) -> str:
    if outcome.error is not None:
        return outcome.error.message
    return f"it ended {outcome.status.value}."


def _report(orders: list[dict[str, Any]], load: dict[str, Any], trial: dict[str, Any]) -> str:
    names = {r.get("id"): r.get("name") or r.get("id") for r in load.get("resources", [])}
    late = trial.get("lateOrders", [])
    lines = [
        f"{len(orders)} open order(s). Trial schedule {trial['draftId']} over {HORIZON_DAYS} "
        f"days, based on version {trial['basedOnVersion']}:"
    ]
    if late:
        lines.append(f"{len(late)} order(s) would be late:")
        for order in late[:10]:
            finish = order.get("finishDate") or "not within the horizon"
            days = order.get("daysLate")
            behind = f", {days} day(s) late" if days is not None else ""
            lines.append(f"- {order['orderId']}: due {order['dueDate']}, done {finish}{behind}")
    else:
        lines.append("no order would be late.")
    busiest = sorted(trial.get("load", []), key=lambda d: d.get("loadPercent", 0), reverse=True)
    if busiest:
        peaks = ", ".join(
            f"{names.get(d['resourceId'], d['resourceId'])} {d['loadPercent']:.0f}% on {d['date']}"
            for d in busiest[:3]
        )
        lines.append(f"Busiest under the trial: {peaks}.")
    now = sorted(load.get("load", []), key=lambda d: d.get("loadPercent", 0), reverse=True)
    if now:
        top = now[0]
        name = names.get(top["resourceId"], top["resourceId"])
        lines.append(
            f"Under the published schedule (version {load.get('scheduleVersion')}) the "
            f"busiest is {name} at {top['loadPercent']:.0f}% on {top['date']}."
        )
    return "\n".join(lines)


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
        if about_scheduling(ctx.title, ctx.description):
            await ctx.progress(10, "Looking at the schedule")
            try:
                return await run_scheduling(ctx)
            except ScenarioEnded as ended:
                raise TaskStopped(ended.summary) from None

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
        if about_scheduling(message.content):
            with contextlib.suppress(ScenarioEnded):  # it said why
                await run_scheduling(message)
            return
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
    add_tls_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.state_dir is not None and args.credentials is None:
        args.credentials = args.state_dir / "credentials.json"

    try:
        if args.code:
            config = await pair(
                args.hub,
                args.code,
                name=args.name,
                credentials_path=args.credentials,
                tls_fingerprint=args.tls_fingerprint,
                ca_file=args.tls_ca_file,
                allow_insecure=args.allow_insecure or None,
            )
        else:
            config = AgentConfig.load(args.credentials)
            given = TlsOptions(args.tls_fingerprint, args.tls_ca_file, args.allow_insecure)
            config = replace(config, tls=given.over(config.tls))
    except (PairingFailed, InsecureConnection, FileNotFoundError, ValueError) as problem:
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
    except (ConnectionRefusedByHub, InsecureConnection) as refusal:
        logger.error("%s", refusal)
        return 3
    except DirectModeError as problem:  # `lineup direct` serves the demo agent that way
        logger.error("%s", problem)
        return 2
    return 0


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """How an agent's command trusts its hub: ``--tls-fingerprint``, ``--tls-ca-file``,
    ``--allow-insecure`` (else ``LINEUP_TLS_FINGERPRINT``, ``LINEUP_TLS_CA_FILE``,
    ``LINEUP_ALLOW_INSECURE``; saved with the credentials at pairing)."""
    parser.add_argument(
        "--tls-fingerprint",
        default=None,
        metavar="AB:CD:…",
        help="pin the hub's certificate by its SHA-256 fingerprint (a self-signed hub)",
    )
    parser.add_argument(
        "--tls-ca-file", default=None, metavar="PATH", help="trust the authorities in this PEM"
    )
    parser.add_argument(
        "--allow-insecure",
        action="store_true",
        help="allow plain http:// and ws:// to another machine (a network you trust)",
    )


def run(
    argv: list[str] | None = None, *, run_agent: Callable[[Agent], Awaitable[None]] | None = None
) -> int:
    """Entry point of ``lineup demo-agent``. ``run_agent`` runs the built agent (``Agent.run``
    unless given: ``lineup`` passes ``lineup.direct.run``, so a direct-mode configuration
    serves LineUp itself; the SDK cannot start the embedded hub on its own)."""
    return asyncio.run(main(argv, run_agent=run_agent))


if __name__ == "__main__":
    sys.exit(run())
