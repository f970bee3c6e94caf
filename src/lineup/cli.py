"""The ``lineup`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from lineup import __version__

HUB_COMMANDS = ("serve", "user", "secrets", "audit", "credentials", "direct")
"""Commands that run the hub (direct mode embeds it): they need ``pip install 'lineup[hub]'``."""


def _cmd_version(_: argparse.Namespace) -> int:
    from lineup.protocol import PROTOCOL_VERSION

    print(f"lineup {__version__} (LAP/{PROTOCOL_VERSION})")
    return 0


def _cmd_schemas(args: argparse.Namespace) -> int:
    from lineup.protocol.schemas import render, write_schemas

    written = write_schemas(Path(args.out))
    print(f"wrote {len(written)} schemas to {args.out}")
    missing = missing_hub_dependency()
    if missing is not None:
        print(f"the OpenAPI document needs the hub ({missing} is missing): {_HUB_INSTALL}")
        return 0
    from lineup.hub.app import openapi_document

    openapi = Path(args.openapi)
    openapi.parent.mkdir(parents=True, exist_ok=True)
    openapi.write_text(render(openapi_document()), encoding="utf-8")
    print(f"wrote the HTTP API's OpenAPI document to {openapi}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lineup",
        description="LineUp: a self-hosted hub where people see and steer their AI agents.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    version = commands.add_parser("version", help="print the version and protocol version")
    version.set_defaults(func=_cmd_version)

    schemas = commands.add_parser(
        "schemas", help="write the protocol's JSON Schemas and the HTTP API's OpenAPI document"
    )
    schemas.add_argument("--out", default="docs/spec/schemas", help="target directory")
    schemas.add_argument(
        "--openapi", default="docs/spec/openapi.json", help="where the OpenAPI document goes"
    )
    schemas.set_defaults(func=_cmd_schemas)

    missing = missing_hub_dependency()
    if missing is None:
        _add_hub_commands(commands)
    _add_agent_commands(commands)
    if missing is None:
        _add_direct_command(commands)
    else:
        for name in HUB_COMMANDS:
            commands.add_parser(name, help=f"(needs the hub: {_HUB_INSTALL})", add_help=False)
    return parser


_HUB_INSTALL = "pip install 'lineup[hub]'"


def missing_hub_dependency() -> str | None:
    """The name of a hub dependency that is not installed, or None when the hub can run.

    The agent SDK installs without the hub's dependencies; an agent's machine that runs
    ``lineup serve`` anyway should be told what to install, not shown a traceback."""
    try:
        import lineup.direct.cli
        import lineup.hub.cli  # noqa: F401
    except ModuleNotFoundError as missing:
        if missing.name is None or missing.name.split(".")[0] == "lineup":
            raise
        return missing.name
    return None


def _add_direct_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``lineup direct``: an agent serving LineUp itself, no hub (seed 000 §3.1)."""
    from lineup.direct.cli import add_command

    add_command(commands)


def _add_agent_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser(
        "demo-agent",
        help="run the MVP demo agent (pairs with --code on first run; see --help)",
        add_help=False,
    )
    agent = commands.add_parser("agent", help="agent-side commands")
    actions = agent.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    pair = actions.add_parser("pair", help="redeem a pairing code and save the credentials")
    pair.add_argument("--hub", required=True, help="the hub's address, e.g. http://host:8000")
    pair.add_argument("--code", required=True, help="the one-time code shown in LineUp")
    pair.add_argument("--name", default="my-agent", help="the agent's name in LineUp")
    pair.add_argument("--credentials", type=Path, default=None, help="where to save them")
    pair.set_defaults(func=_cmd_pair)


def _cmd_pair(args: argparse.Namespace) -> int:
    import asyncio

    from lineup.sdk import PairingFailed, pair

    try:
        config = asyncio.run(
            pair(args.hub, args.code, name=args.name, credentials_path=args.credentials)
        )
    except PairingFailed as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 2
    print(f"paired as agent {config.agent_id} in workspace {config.workspace_id}")
    return 0


def _add_hub_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from lineup.hub.cli import add_commands

    add_commands(commands)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["demo-agent"]:  # its own parser takes every option
        from lineup.sdk.demo import run

        try:
            from lineup.direct import run as run_either_mode
        except ImportError:  # without the hub's packages: connected to a hub only
            return run(arguments[1:])
        return run(arguments[1:], run_agent=run_either_mode)
    if arguments[:1] and arguments[0] in HUB_COMMANDS:
        missing = missing_hub_dependency()
        if missing is not None:
            print(
                f"error: 'lineup {arguments[0]}' runs the hub, whose dependencies are not "
                f"installed (no module named {missing!r}); install them with: {_HUB_INSTALL}",
                file=sys.stderr,
            )
            return 2
    parser = build_parser()
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
