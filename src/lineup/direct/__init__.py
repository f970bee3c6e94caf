"""Direct mode (seed 000 §3.1): an agent serves LineUp itself, for a network with no hub.

``await lineup.direct.run(agent)`` runs any SDK agent in the mode its configuration says —
serving LineUp itself when that is ``"mode": "direct"`` (:class:`DirectHost`, an
``AgentHost`` of :mod:`lineup.sdk`), else connected to its hub. ``lineup direct``
(:mod:`lineup.direct.cli`) runs the demo agent — or your own — this way. The server is the
hub's own application, embedded (:class:`EmbeddedHub`), configured for one agent and one
person with a pre-shared token. Relay mode (``"mode": "relay"``, :class:`RelayHost`) is the
same embedded hub, kept between runs and reached through WuKongIM instead of a port
(docs/relay-mode.md). This package uses only the SDK's public API.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineup.direct._host import DirectHost, loopback_host, people_urls, run
    from lineup.direct._relay import RelayHost, relay_directory
    from lineup.direct._server import (
        DirectServerFailed,
        EmbeddedHub,
        RedactTokens,
        install_token_redaction,
    )

_FROM = {
    "DirectHost": "_host",
    "loopback_host": "_host",
    "people_urls": "_host",
    "run": "_host",
    "RelayHost": "_relay",
    "relay_directory": "_relay",
    "DirectServerFailed": "_server",
    "EmbeddedHub": "_server",
    "RedactTokens": "_server",
    "install_token_redaction": "_server",
}


def __getattr__(name: str) -> Any:
    """Loaded on first use: the embedded hub is heavy, and ``lineup``'s command line (which
    reads ``lineup.direct.cli`` to build its parser) should not pay for it on every command."""
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'lineup.direct' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"lineup.direct.{module}"), name)


__all__ = [
    "DirectHost",
    "DirectServerFailed",
    "EmbeddedHub",
    "RedactTokens",
    "RelayHost",
    "install_token_redaction",
    "loopback_host",
    "people_urls",
    "relay_directory",
    "run",
]
