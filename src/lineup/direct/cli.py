"""``lineup direct``: run an agent that serves LineUp itself (seed 000 §3.1), with no hub.

::

    lineup direct                      # the demo agent on 0.0.0.0:9527, a random token
    lineup direct --port 9600 --token "$TOKEN"
    lineup direct --module my_pkg.bot:build_agent   # your own agent: build_agent(config)

It prints the addresses to open on a phone or computer on the same network, with the token
after ``#`` (browsers never send that part to the server, so it stays out of logs), and the
token itself for typing. Ctrl-C stops it; nothing it recorded is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lineup.hub.tls import add_tls_arguments

log = logging.getLogger("lineup.direct")


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    direct = commands.add_parser(
        "direct",
        help="serve one agent to people on this network, with no hub (direct mode)",
        description="Run an agent that serves LineUp itself, for people on the same network, "
        "with no hub (direct mode, seed 000 §3.1).",
    )
    environ = os.environ
    direct.add_argument(
        "--host",
        default=environ.get("LINEUP_DIRECT_HOST") or "0.0.0.0",  # noqa: S104
        help="address to listen on (default 0.0.0.0: every network; 127.0.0.1: this machine)",
    )
    direct.add_argument(
        "--port",
        type=int,
        default=int(environ.get("LINEUP_DIRECT_PORT") or "9527"),
        help="port to listen on (default 9527)",
    )
    direct.add_argument(
        "--token",
        default=None,
        help="the pre-shared token people enter (default: $LINEUP_DIRECT_TOKEN, else a random "
        "one, printed); at least 8 characters",
    )
    direct.add_argument(
        "--person", default=None, help="how you appear to the agent (default: your login name)"
    )
    add_agent_arguments(direct)
    add_tls_arguments(direct)
    direct.set_defaults(func=run)


def add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of every command that serves one agent: which agent, and how it logs."""
    parser.add_argument("--name", default="demo-agent", help="the agent's name")
    parser.add_argument(
        "--module",
        default=None,
        metavar="PKG.MOD:FUNC",
        help="serve your own agent: FUNC(config) returns a lineup.sdk.Agent (default: the demo)",
    )
    parser.add_argument(
        "--work-seconds", type=float, default=1.0, help="the demo agent's pretend work per step"
    )
    parser.add_argument("--log-level", default=os.environ.get("LINEUP_LOG_LEVEL", "info"))


def configure_logging(level: str) -> None:
    """The agent's log on stderr: stdout is for what people need to connect."""
    logging.basicConfig(
        level=level.upper(),
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )


async def serve(agent: Any, task_name: str, announce: Callable[[Any], None]) -> int | None:
    """Run ``agent`` in the mode its configuration says until it stops (Ctrl-C, SIGTERM);
    ``announce`` gets what ``agent.serving()`` gives once it serves. Returns the exit status
    of a failure, ``None`` after a normal stop."""
    from lineup.direct import run as run_agent
    from lineup.sdk import ConnectionRefusedByHub, DirectModeError

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # not on Windows
            loop.add_signal_handler(signum, agent.stop)
    running = asyncio.create_task(run_agent(agent), name=task_name)
    serving = asyncio.create_task(agent.serving(), name=f"{task_name}-serving")
    await asyncio.wait({running, serving}, return_when=asyncio.FIRST_COMPLETED)
    if serving.done() and not serving.cancelled() and serving.exception() is None:
        announce(serving.result())
    else:
        serving.cancel()
    try:
        await running
    except DirectModeError as problem:
        log.error("%s", problem)
        return 2
    except ConnectionRefusedByHub as refusal:
        log.error("%s", refusal)
        return 3
    return None


def run(args: argparse.Namespace) -> int:
    """Entry point of ``lineup direct``."""
    return asyncio.run(main(args))


async def main(args: argparse.Namespace) -> int:
    from lineup.sdk import AgentConfig, DirectOptions, new_direct_token

    configure_logging(str(args.log_level))
    given = args.token or os.environ.get("LINEUP_DIRECT_TOKEN") or None
    try:
        options = DirectOptions(
            token=given or new_direct_token(),
            host=args.host,
            port=args.port,
            person_name=args.person,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
            tls_self_signed=bool(args.tls_self_signed),
        )
    except ValueError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    config = AgentConfig.for_direct(options)
    with tempfile.TemporaryDirectory(prefix="lineup-direct-reports-") as reports:
        try:
            agent = build_agent(args, config, Path(reports))
        except (ImportError, AttributeError, TypeError, ValueError) as problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        failed = await serve(
            agent,
            "lineup-direct",
            lambda endpoint: _print_banner(
                agent.name, endpoint, options.token, generated=given is None
            ),
        )
        if failed is not None:
            return failed
    print("LineUp direct mode stopped; nothing was kept.", flush=True)
    return 0


def build_agent(args: argparse.Namespace, config: Any, reports: Path) -> Any:
    from lineup.sdk import Agent

    if not args.module:
        from lineup.sdk.demo import build_agent

        return build_agent(
            config, work_seconds=args.work_seconds, reports_dir=reports, name=args.name
        )
    module_name, _, function_name = str(args.module).partition(":")
    if not module_name or not function_name:
        raise ValueError("--module takes PKG.MOD:FUNC, e.g. my_pkg.bot:build_agent")
    factory = getattr(importlib.import_module(module_name), function_name)
    agent = factory(config)
    if not isinstance(agent, Agent):
        raise TypeError(f"{args.module} returned {type(agent).__name__}, not a lineup.sdk.Agent")
    return agent


def _print_banner(name: str, endpoint: Any, token: str, *, generated: bool) -> None:
    lines = [
        f"LineUp direct mode: {name} serves LineUp itself — no hub.",
        "Open one of these on a phone or computer on the same network:",
        *(f"  {url}" for url in endpoint.with_token(token)),
        f"or open {endpoint.urls[0]} and enter the token: {token}",
    ]
    if generated:
        lines.append("(a new random token; choose your own with --token or LINEUP_DIRECT_TOKEN)")
    if endpoint.tls_fingerprint:
        lines.append(
            f"TLS certificate SHA-256 fingerprint: {endpoint.tls_fingerprint}\n"
            "(browsers warn once about a self-signed certificate: compare it with this one)"
        )
        lines.append("Nothing is kept after this process stops (Ctrl-C).")
    else:
        lines.append(
            "Nothing is kept after this process stops (Ctrl-C). Plain HTTP: use it on a "
            "network you trust (or serve https: --tls-self-signed)."
        )
    print("\n".join(lines), flush=True)
