"""The ``lineup mcp`` command: ``pair`` once, then serve."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from lineup.agent_cli import add_pair_options, run_pair


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="an MCP server through which MCP hosts reach their person (see docs/mcp.md)",
        description="Serve LineUp to an MCP host. Pair first: lineup mcp pair --hub URL "
        "--code CODE",
    )
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on")
    mcp.add_argument("--port", type=int, default=8765, help="HTTP: the port (path /mcp)")
    mcp.add_argument("--credentials", type=Path, default=None, help="the paired identity")
    mcp.add_argument(
        "--wait",
        type=float,
        default=None,
        help="seconds a question waits before answering 'pending' (default 45)",
    )
    mcp.add_argument(
        "--progress-every",
        type=float,
        default=None,
        help="seconds between progress notifications while a question waits (default 10)",
    )
    mcp.add_argument(
        "--no-elicitation",
        action="store_true",
        help="never ask in the host itself; people answer in LineUp only",
    )
    mcp.set_defaults(func=_cmd_serve)
    actions = mcp.add_subparsers(dest="mcp_command", metavar="ACTION")
    pair = actions.add_parser("pair", help="redeem a pairing code for the MCP server's identity")
    add_pair_options(pair, default_name="MCP host")
    pair.set_defaults(func=_cmd_pair)


def _cmd_pair(args: argparse.Namespace) -> int:
    from lineup.mcp._run import default_credentials

    return run_pair(args, runtime="mcp", credentials=default_credentials())


def _cmd_serve(args: argparse.Namespace) -> int:
    from lineup.mcp._run import AlreadyServing, default_credentials, serve
    from lineup.mcp._server import DEFAULT_WAIT, PROGRESS_EVERY

    credentials = args.credentials or default_credentials()
    if not credentials.exists():
        print(
            f"error: no credentials at {credentials}; pair first: "
            "lineup mcp pair --hub URL --code CODE",
            file=sys.stderr,
        )
        return 2
    if args.transport == "http" and args.host not in ("127.0.0.1", "::1", "localhost"):
        print(
            f"warning: serving MCP on {args.host} without authentication: anyone who reaches "
            "it can ask your person and report as this agent. Keep it on a trusted network.",
            file=sys.stderr,
        )
    try:
        asyncio.run(
            serve(
                credentials,
                transport=args.transport,
                host=args.host,
                port=args.port,
                wait=DEFAULT_WAIT if args.wait is None else args.wait,
                progress_every=args.progress_every or PROGRESS_EVERY,
                elicitation=not args.no_elicitation,
            )
        )
    except AlreadyServing as refused:
        print(f"error: {refused}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
