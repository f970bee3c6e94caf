"""Which providers a hub runs: the in-tree ones its settings name, and any given to it."""

from __future__ import annotations

import logging

from lineup.core.provider import Provider
from lineup.hub.config import Settings

log = logging.getLogger("lineup.hub.governance")


def configured_providers(settings: Settings) -> list[Provider]:
    providers: list[Provider] = [p for p in settings.extra_providers if isinstance(p, Provider)]
    for name in settings.providers:
        built = _in_tree(name, settings)
        if built is not None:
            providers.append(built)
    return providers


def _in_tree(name: str, settings: Settings) -> Provider | None:
    log.warning("no in-tree provider named %r; skipped", name)
    return None
