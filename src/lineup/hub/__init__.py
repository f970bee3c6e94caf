"""The LineUp hub: HTTP API, realtime gateways, accounts and pairing, presence, fan-out."""

from typing import TYPE_CHECKING, Any

from lineup.hub.config import Settings

if TYPE_CHECKING:
    from lineup.hub.app import create_app


def __getattr__(name: str) -> Any:
    """``create_app`` is loaded on first use: the application pulls in FastAPI and every
    route, which ``lineup``'s other commands (and the contract kit's child process) need not
    pay for."""
    if name == "create_app":
        from lineup.hub.app import create_app

        return create_app
    raise AttributeError(f"module 'lineup.hub' has no attribute {name!r}")


__all__ = ["Settings", "create_app"]
