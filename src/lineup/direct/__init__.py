"""Direct mode (seed 000 §3.1): an agent serves LineUp itself, for a network with no hub.

``lineup direct`` (:mod:`lineup.direct.cli`) runs the demo agent — or your own — this way;
any SDK agent does the same when its configuration says ``"mode": "direct"`` (see
:mod:`lineup.sdk._direct`). The server is the hub's own application, embedded
(:class:`EmbeddedHub`), configured for one agent and one person with a pre-shared token.
"""

from lineup.direct._server import (
    DirectServerFailed,
    EmbeddedHub,
    RedactTokens,
    install_token_redaction,
)

__all__ = ["DirectServerFailed", "EmbeddedHub", "RedactTokens", "install_token_redaction"]
