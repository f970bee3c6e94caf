"""``lineup relay``: run an agent that serves LineUp through a WuKongIM server (relay mode).

::

    export LINEUP_RELAY_TOKEN=…          # the agent's IM token: in the environment, never argv
    lineup relay --server wss://im.example.org/ --api https://im.example.org/api \\
        --uid my-agent --people ana        # the demo agent, answering Ana
    lineup relay … --module my_pkg.bot:build_agent   # your own agent: build_agent(config)

Every option has its environment variable (``LINEUP_RELAY_SERVER``, ``_API``, ``_UID``,
``_PEOPLE``); the token is read from ``LINEUP_RELAY_TOKEN`` only, so it stays out of the
process list and shell history. It prints how a person connects. The agent's LineUp is kept
under ``$LINEUP_HOME/relay/<uid>/`` and is there again at the next start. Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lineup.direct.cli import add_agent_arguments, build_agent, configure_logging, serve

if TYPE_CHECKING:
    from lineup.sdk import RelayOptions

log = logging.getLogger("lineup.relay")


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    relay = commands.add_parser(
        "relay",
        help="serve one agent to people through a WuKongIM server (relay mode)",
        description="Run an agent that serves LineUp itself through a WuKongIM + "
        "TangSengDaoDao deployment: neither it nor the people need a public address. "
        "The agent's IM token is read from LINEUP_RELAY_TOKEN.",
    )
    env = os.environ
    relay.add_argument(
        "--server",
        default=env.get("LINEUP_RELAY_SERVER"),
        help="the WuKongIM address (wss://…, ws://… or tcp://…)",
    )
    relay.add_argument(
        "--api",
        default=env.get("LINEUP_RELAY_API"),
        help="the TangSengDaoDao HTTP API (for message sync)",
    )
    relay.add_argument("--uid", default=env.get("LINEUP_RELAY_UID"), help="the agent's IM user id")
    relay.add_argument(
        "--people",
        default=env.get("LINEUP_RELAY_PEOPLE"),
        help="comma-separated uids of the people it answers (nobody else)",
    )
    relay.add_argument("--person", default=None, help="the person's name in the agent's LineUp")
    relay.add_argument(
        "--allow-plaintext",
        action="store_true",
        default=env.get("LINEUP_RELAY_ALLOW_PLAINTEXT", "").lower() in ("1", "true", "yes", "on"),
        help="allow ws:// or tcp:// to another machine (the token would cross "
        "the network in clear)",
    )
    add_agent_arguments(relay)
    relay.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``lineup relay``."""
    return asyncio.run(main(args))


async def main(args: argparse.Namespace) -> int:
    from lineup.direct import relay_directory
    from lineup.sdk import AgentConfig, RelayOptions

    configure_logging(str(args.log_level))
    token = os.environ.get("LINEUP_RELAY_TOKEN", "")
    missing = [
        n
        for n, v in (
            ("--server", args.server),
            ("--api", args.api),
            ("--uid", args.uid),
            ("--people", args.people),
            ("LINEUP_RELAY_TOKEN", token),
        )
        if not v
    ]
    if missing:
        print(f"error: relay mode needs {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        options = RelayOptions(
            server=args.server,
            api=args.api,
            uid=args.uid,
            token=token,
            people=tuple(str(args.people).split(",")),
            person_name=args.person,
            allow_plaintext=bool(args.allow_plaintext),
        )
    except ValueError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    config = AgentConfig.for_relay(options)
    reports = relay_directory(options.uid) / "reports"
    try:
        agent = build_agent(args, config, Path(reports))
    except (ImportError, AttributeError, TypeError, ValueError) as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    failed = await serve(
        agent,
        "lineup-relay",
        lambda _endpoint: _print_banner(agent.name, options, relay_directory(options.uid)),
    )
    if failed is not None:
        return failed
    print("LineUp relay mode stopped; the agent's LineUp is kept for its next start.", flush=True)
    return 0


def _print_banner(name: str, options: RelayOptions, directory: Path) -> None:
    lines = [
        f"LineUp relay mode: {name} serves LineUp through {options.server} as {options.uid!r}.",
        "To connect: open the LineUp web app in relay mode, sign in with your TangSengDaoDao "
        f"account ({', '.join(options.people)}), and choose the agent {options.uid!r}.",
        f"Text sent to {options.uid!r} from TangSengDaoDao's own app reaches it too.",
        f"Its LineUp is kept in {directory}.",
    ]
    print("\n".join(lines), flush=True)
