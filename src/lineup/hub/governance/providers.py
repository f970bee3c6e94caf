"""Which providers a hub runs: the in-tree ones its settings name, and any given to it.

The in-tree scheduling provider stands for an outside system: it keeps its plants' data under
``$LINEUP_HOME/providers/scheduling/`` and each plant's API key in a file beside its database
(the system's own configuration, mode 0600). On first start the hub makes the demo plant and
its key, and keeps a sealed copy of the key among the credentials it injects per execution —
as an operator would after creating an API key in the real system.
"""

from __future__ import annotations

import importlib
import logging
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from lineup.core.provider import Provider
from lineup.hub.config import Settings

if TYPE_CHECKING:
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.governance")

DEMO_PLANT = "plant-1"


def configured_providers(settings: Settings) -> list[Provider]:
    providers: list[Provider] = [p for p in settings.extra_providers if isinstance(p, Provider)]
    for name in settings.providers:
        if name == "scheduling":
            providers.append(_scheduling(settings))
        elif name == "files":
            providers.append(_files(settings))
        else:
            raise ValueError(
                f"LINEUP_PROVIDERS names {name!r}; the in-tree ones are scheduling and files"
            )
    for entry in settings.provider_modules:
        providers.append(_from_module(entry, settings))
    return providers


def _from_module(entry: str, settings: Settings) -> Provider:
    module_name, _, factory_name = entry.partition(":")
    if not module_name or not factory_name:
        raise ValueError(f"LINEUP_PROVIDER_MODULES entry {entry!r} is not module:factory")
    factory = getattr(importlib.import_module(module_name), factory_name)
    provider = factory(settings)
    if not isinstance(provider, Provider):
        raise ValueError(f"{entry} did not make a provider")
    log.warning("provider %s loaded from %s: development use only", provider.id, entry)
    return provider


def _root(settings: Settings) -> Path:
    return settings.scheduling_dir or settings.home / "providers" / "scheduling"


def _scheduling(settings: Settings) -> Provider:
    from lineup.providers.scheduling import SchedulingProvider

    root = _root(settings)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    return SchedulingProvider(root, {DEMO_PLANT: _system_key(root / f"{DEMO_PLANT}.key")})


def _files(settings: Settings) -> Provider:
    """The files provider over the directories ``LINEUP_PROVIDER_CONFIG`` names."""
    from lineup.providers.adapter import AdapterContext, manifest_at
    from lineup.providers.files import make

    root = Path(__file__).resolve().parents[2] / "providers" / "files"
    data_dir = settings.home / "providers" / "data" / "files"
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    context = AdapterContext(
        manifest=manifest_at(root),
        data_dir=data_dir,
        config=settings.provider_config.get("files", {}),
        log=logging.getLogger("lineup.provider.files"),
    )
    return make(context)


def _system_key(path: Path) -> str:
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return key


async def prepare(hub: HubState) -> None:
    """Make the in-tree systems' demo data and hand their keys to the hub's credentials."""
    from lineup.hub.governance import credentials
    from lineup.providers.scheduling import SchedulingProvider

    for provider in hub.governance.catalogue.providers.values():
        if not isinstance(provider, SchedulingProvider):
            continue
        await provider.seed_demo(DEMO_PLANT)
        key = _system_key(_root(hub.settings) / f"{DEMO_PLANT}.key")
        held = await credentials.get(hub, provider.id, DEMO_PLANT)
        if held.get("apiKey") != key:
            await credentials.put(hub, provider.id, DEMO_PLANT, {"apiKey": key})
