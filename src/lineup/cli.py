"""The ``lineup`` command."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lineup import __version__
from lineup.agent_cli import add_pair_options, run_pair

HUB_MODULES = (
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "alembic",
    "asyncpg",
    "argon2",
    "cryptography",
    "redis",
)
"""What the hub's commands import first (``lineup[hub]``): looked for, not imported, so the
command line starts fast whichever command it runs."""
HUB_COMMANDS = (
    "serve",
    "user",
    "secrets",
    "audit",
    "log",
    "credentials",
    "direct",
    "relay",
    "provider",
    "session",
)
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
        _add_provider_commands(commands)
    _add_agent_commands(commands)
    _add_engine_commands(commands)
    _add_hermes_commands(commands)
    _add_mcp_command(commands)
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
    for name in HUB_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except ModuleNotFoundError:
            return name
    return None


def _add_direct_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``lineup direct``: an agent serving LineUp itself, no hub (seed 000 §3.1)."""
    from lineup.direct.cli import add_command
    from lineup.direct.relay_cli import add_command as add_relay_command

    add_command(commands)
    add_relay_command(commands)


def _add_mcp_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``lineup mcp``: LineUp as an MCP server, when the ``mcp`` extra is installed."""
    if importlib.util.find_spec("mcp") is None:
        commands.add_parser("mcp", help="(needs: pip install 'lineup[mcp]')", add_help=False)
        return
    from lineup.mcp._cli import add_command

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
    add_pair_options(pair, default_name="my-agent")
    pair.set_defaults(func=_cmd_pair)


def _cmd_pair(args: argparse.Namespace) -> int:
    return run_pair(args)


def _add_hermes_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``lineup hermes install``: Hermes Agent's gateway as a LineUp agent (docs/hermes.md)."""
    hermes = commands.add_parser("hermes", help="Hermes Agent: install the LineUp plugin")
    actions = hermes.add_subparsers(dest="hermes_command", metavar="ACTION", required=True)
    install = actions.add_parser(
        "install",
        help="put the LineUp plugin into a Hermes home, enable it, and pair with --code",
    )
    install.add_argument(
        "--hermes-home", type=Path, default=None, help="default $HERMES_HOME or ~/.hermes"
    )
    install.add_argument("--hub", default=None, help="the hub's address, e.g. http://host:8000")
    install.add_argument("--code", default=None, help="the one-time code shown in LineUp")
    install.add_argument("--name", default="Hermes", help="the agent's name in LineUp")
    install.set_defaults(func=_cmd_hermes_install)


def _cmd_hermes_install(args: argparse.Namespace) -> int:
    from lineup.bridges.hermes._install import hermes_home, install
    from lineup.sdk import InsecureConnection, PairingFailed

    if importlib.util.find_spec("gateway") is None:
        print(
            "error: Hermes Agent is not installed next to this lineup: run the `lineup` of "
            "Hermes's own environment (pip install lineup there first)",
            file=sys.stderr,
        )
        return 2
    try:
        done = install(
            hermes_home(args.hermes_home), hub_url=args.hub, code=args.code, name=args.name
        )
    except (PairingFailed, InsecureConnection, ValueError) as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 2
    print(f"installed the LineUp plugin in {done.plugin_dir}, enabled in {done.config_file}")
    if done.agent_id:
        print(f"paired as agent {done.agent_id}; start the gateway: hermes gateway run")
    else:
        print("pair it: run this again with --hub URL --code CODE, then: hermes gateway run")
    return 0


def _add_provider_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``lineup provider``: test, sign and start provider packages (docs/providers.md)."""
    provider = commands.add_parser("provider", help="provider packages: test, sign, start one")
    actions = provider.add_subparsers(dest="provider_command", metavar="ACTION", required=True)
    test = actions.add_parser(
        "test",
        help="check a package and run the contract kit on it; exit 0 passed, 1 failed,"
        " 2 refused before running",
    )
    test.add_argument("path", type=Path, help="a package directory or .lineup-provider archive")
    test.add_argument("--json", action="store_true", help="print the result as JSON")
    test.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="the longest one provider call may take, in seconds (default 10)",
    )
    test.add_argument(
        "--trust",
        type=Path,
        default=None,
        metavar="KEYFILE",
        help="a trusted-keys file: the signature must verify against one of its keys",
    )
    test.set_defaults(func=_cmd_provider_test)
    keygen = actions.add_parser("keygen", help="make an Ed25519 signing key")
    keygen.add_argument("out", type=Path, help="the private key file to write (mode 0600)")
    keygen.set_defaults(func=_cmd_provider_keygen)
    pack = actions.add_parser("pack", help="sign a package directory into an archive")
    pack.add_argument("dir", type=Path)
    pack.add_argument("--key", type=Path, required=True, help="the private key file")
    pack.add_argument("-o", "--out", type=Path, default=None, help="the archive to write")
    pack.set_defaults(func=_cmd_provider_pack)
    new = actions.add_parser("new", help="start a package from the template")
    new.add_argument("id", help="the provider's id (lowercase, e.g. crm)")
    new.add_argument("dir", type=Path, nargs="?", default=None, help="where (default ./ID)")
    new.set_defaults(func=_cmd_provider_new)


def _cmd_provider_test(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from lineup.core.package import PackageError, parse_trusted_keys
    from lineup.providers.packaging import kit_runner

    trusted = None
    if args.trust is not None:
        try:
            trusted = parse_trusted_keys(args.trust.read_text())
        except (OSError, PackageError) as exc:
            print(f"error: the trusted-keys file {args.trust}: {exc}", file=sys.stderr)
            return 2
    result = asyncio.run(kit_runner.run(args.path, trusted=trusted, timeout_s=args.timeout))
    if args.json:
        print(json.dumps(result.wire(), indent=2))
    else:
        print(kit_runner.render(result))
    return result.exit_code


def _cmd_provider_keygen(args: argparse.Namespace) -> int:
    from lineup.providers.packaging.authoring import keygen

    try:
        line = keygen(args.out)
    except FileExistsError:
        print(f"error: {args.out} exists; a key is never overwritten", file=sys.stderr)
        return 2
    print(f"wrote the private key to {args.out}; keep it secret. Its public key, for a hub's")
    print("trusted-keys file:")
    print(line)
    return 0


def _cmd_provider_pack(args: argparse.Namespace) -> int:
    from lineup.core.package import PackageError
    from lineup.providers.packaging.authoring import pack

    try:
        packed = pack(args.dir, args.key, args.out)
    except PackageError as exc:
        print(f"refused (rule {exc.rule}): {exc.message}", file=sys.stderr)
        return 2
    print(f"wrote {packed.archive}")
    print(f"digest {packed.digest}")
    print(f"signed by {packed.key_id}")
    return 0


def _cmd_provider_new(args: argparse.Namespace) -> int:
    from lineup.providers.packaging.authoring import new_package

    directory = args.dir or Path(args.id)
    try:
        written = new_package(args.id, directory)
    except (ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(f"next: lineup provider test {directory}")
    return 0


def _add_hub_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from lineup.hub.cli import add_commands

    add_commands(commands, engine_host=_engine_host)


def _engine_host(settings: Any) -> Any:
    """What runs the hub's hosted agents: SDK agents driving engine processes, composed here
    (the hub does not use the SDK)."""
    from lineup.engines.hosting import EngineHosting

    return EngineHosting.for_settings(settings)


def _add_engine_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    engines = commands.add_parser("engines", help="the coding agents LineUp can host")
    actions = engines.add_subparsers(dest="engines_command", metavar="ACTION", required=True)
    actions.add_parser(
        "doctor", help="which engines are installed, their versions, and how to add each"
    ).set_defaults(func=_engines_doctor)


def _engines_doctor(args: argparse.Namespace) -> int:
    from lineup.engines.catalog import doctor_lines, runtimes, statuses

    for line in doctor_lines(statuses(), set(runtimes(fake=False))):
        print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["demo-agent"]:  # its own parser takes every option
        from lineup.sdk.demo import run

        if missing_hub_dependency() is not None:  # without the hub's packages: a hub only
            return run(arguments[1:])
        from lineup.direct import run as run_either_mode

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
