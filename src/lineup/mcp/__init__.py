"""``lineup mcp``: an MCP server through which any MCP host (Claude Code, Codex, Cursor, …)
reaches its person in LineUp. See ``docs/mcp.md``.

The server is one paired LineUp agent: its questions are LineUp cards, its tasks LineUp
tasks, and a person answers in the LineUp app — or, when the host supports elicitation, in
the host itself, whichever comes first.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# Loaded on first use, so that `lineup --help` (which names `lineup mcp`) does not import
# the MCP SDK and its web stack.
_EXPORTS = {
    "DEFAULT_WAIT": "lineup.mcp._server",
    "AlreadyServing": "lineup.mcp._run",
    "PersonLink": "lineup.mcp._person",
    "build_server": "lineup.mcp._server",
    "default_credentials": "lineup.mcp._run",
    "requested_schema": "lineup.mcp._forms",
    "response_from": "lineup.mcp._forms",
    "serve": "lineup.mcp._run",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'lineup.mcp' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
