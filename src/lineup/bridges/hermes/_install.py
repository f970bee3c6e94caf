"""``lineup hermes install``: put the plugin into a Hermes home, enable it, and pair.

Run with the ``lineup`` of Hermes's own environment (the gateway imports the adapter from
the ``lineup`` package installed there). Hermes's configuration is edited with the YAML
library Hermes itself ships (``ruamel.yaml``, which keeps the file's comments).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineup.bridges.hermes import PLATFORM

PLUGIN_SOURCE = Path(__file__).with_name("plugin")


def hermes_home(explicit: Path | None = None) -> Path:
    """The Hermes home to install into: ``explicit``, ``$HERMES_HOME``, else ``~/.hermes``."""
    if explicit is not None:
        return explicit.expanduser()
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


@dataclass(frozen=True)
class Installed:
    plugin_dir: Path
    config_file: Path
    agent_id: str | None


def install(
    home: Path,
    *,
    hub_url: str | None = None,
    code: str | None = None,
    name: str = "Hermes",
) -> Installed:
    """Copy the plugin to ``home/plugins/lineup``, enable it and the platform in
    ``home/config.yaml``, and, given a pairing code, pair (credentials in ``home/lineup``)."""
    target = home / "plugins" / PLATFORM
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PLUGIN_SOURCE, target, ignore=shutil.ignore_patterns("__pycache__"))
    config_file = home / "config.yaml"
    _enable(config_file, name)
    agent_id = None
    if code is not None:
        if hub_url is None:
            raise ValueError("a pairing code needs the hub's address (--hub)")
        from lineup.sdk import pair

        config = asyncio.run(
            pair(
                hub_url,
                code,
                name=name,
                runtime="hermes",
                credentials_path=home / PLATFORM / "credentials.json",
            )
        )
        agent_id = config.agent_id
    return Installed(target, config_file, agent_id)


def _enable(config_file: Path, name: str) -> None:
    from ruamel.yaml import YAML

    yaml = YAML()
    data: Any = yaml.load(config_file.read_text()) if config_file.exists() else None
    if data is None:
        data = {}
    plugins = data.setdefault("plugins", {})
    enabled = plugins.setdefault("enabled", [])
    if PLATFORM not in enabled:
        enabled.append(PLATFORM)
    disabled = plugins.get("disabled") or []
    if PLATFORM in disabled:
        disabled.remove(PLATFORM)
    gateway = data.setdefault("gateway", {})
    platforms = gateway.setdefault("platforms", {})
    entry = platforms.setdefault(PLATFORM, {})
    entry["enabled"] = True
    extra = entry.setdefault("extra", {})
    extra.setdefault("name", name)
    config_file.parent.mkdir(parents=True, exist_ok=True)
    with config_file.open("w") as out:
        yaml.dump(data, out)
