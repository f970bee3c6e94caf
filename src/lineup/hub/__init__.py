"""The LineUp hub: HTTP API, realtime gateways, accounts and pairing, presence, fan-out."""

from lineup.hub.app import create_app
from lineup.hub.config import Settings

__all__ = ["Settings", "create_app"]
