"""The ``lineup`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from lineup import __version__


def _cmd_version(_: argparse.Namespace) -> int:
    from lineup.protocol import PROTOCOL_VERSION

    print(f"lineup {__version__} (LAP/{PROTOCOL_VERSION})")
    return 0


def _cmd_schemas(args: argparse.Namespace) -> int:
    from lineup.protocol.schemas import write_schemas

    written = write_schemas(Path(args.out))
    print(f"wrote {len(written)} schemas to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lineup",
        description="LineUp: a self-hosted hub where people see and steer their AI agents.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    version = commands.add_parser("version", help="print the version and protocol version")
    version.set_defaults(func=_cmd_version)

    schemas = commands.add_parser("schemas", help="write the protocol's JSON Schemas")
    schemas.add_argument("--out", default="docs/spec/schemas", help="target directory")
    schemas.set_defaults(func=_cmd_schemas)

    _add_hub_commands(commands)
    return parser


def _add_hub_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    try:
        from lineup.hub.cli import add_commands
    except ImportError:
        serve = commands.add_parser("serve", help="start the hub (not built yet)")
        serve.set_defaults(func=_hub_missing)
        return
    add_commands(commands)


def _hub_missing(_: argparse.Namespace) -> int:
    print("The LineUp hub is not built yet in this version; nothing to serve.")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
