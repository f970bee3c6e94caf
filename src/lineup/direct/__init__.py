"""Direct mode (seed 000 §3.1): an agent serves LineUp itself, for a network with no hub.

``await lineup.direct.run(agent)`` runs any SDK agent in the mode its configuration says —
serving LineUp itself when that is ``"mode": "direct"`` (:class:`DirectHost`, an
``AgentHost`` of :mod:`lineup.sdk`), else connected to its hub. ``lineup direct``
(:mod:`lineup.direct.cli`) runs the demo agent — or your own — this way. The server is the
hub's own application, embedded (:class:`EmbeddedHub`), configured for one agent and one
person with a pre-shared token. This package uses only the SDK's public API.
"""

from lineup.direct._host import DirectHost, loopback_host, people_urls, run
from lineup.direct._server import (
    DirectServerFailed,
    EmbeddedHub,
    RedactTokens,
    install_token_redaction,
)

__all__ = [
    "DirectHost",
    "DirectServerFailed",
    "EmbeddedHub",
    "RedactTokens",
    "install_token_redaction",
    "loopback_host",
    "people_urls",
    "run",
]
