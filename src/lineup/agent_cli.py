"""Redeeming a pairing code from the command line: ``lineup agent pair`` and ``lineup mcp
pair`` take the same options (a self-signed hub pinned, a CA, plain text allowed) and print
the same answer. Outside ``lineup.sdk`` so that building the parser does not import the SDK
(the SDK is imported when a pairing runs)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def add_pair_options(parser: argparse.ArgumentParser, *, default_name: str) -> None:
    parser.add_argument("--hub", required=True, help="the hub's address, e.g. http://host:8000")
    parser.add_argument("--code", required=True, help="the one-time code shown in LineUp")
    parser.add_argument("--name", default=default_name, help="the agent's name in LineUp")
    parser.add_argument("--credentials", type=Path, default=None, help="where to save them")
    parser.add_argument(
        "--tls-fingerprint",
        default=None,
        metavar="AB:CD:…",
        help="pin the hub's certificate by its SHA-256 fingerprint (a self-signed hub)",
    )
    parser.add_argument("--tls-ca-file", default=None, metavar="PATH", help="trust this CA (PEM)")
    parser.add_argument(
        "--allow-insecure",
        action="store_true",
        help="allow plain http:// to another machine (a network you trust)",
    )


def run_pair(
    args: argparse.Namespace, *, runtime: str = "python", credentials: Path | None = None
) -> int:
    """Pair with the options of :func:`add_pair_options`; ``credentials`` is where to save
    them when ``--credentials`` is not given (else the SDK's default)."""
    from lineup.sdk import InsecureConnection, PairingFailed, pair

    try:
        config = asyncio.run(
            pair(
                args.hub,
                args.code,
                name=args.name,
                runtime=runtime,
                credentials_path=args.credentials or credentials,
                tls_fingerprint=args.tls_fingerprint,
                ca_file=args.tls_ca_file,
                allow_insecure=args.allow_insecure or None,
            )
        )
    except (PairingFailed, InsecureConnection, ValueError) as failure:
        print(f"error: {failure}", file=sys.stderr)
        return 2
    print(f"paired as agent {config.agent_id} in workspace {config.workspace_id}")
    return 0
