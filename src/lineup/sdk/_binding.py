"""Where the agent stands with its people: confirmed or not, under which name, with which
settings — what the hub's welcome says and what ``agent.confirmed`` / ``agent.settings``
change later (docs/protocol.md §5.2).

A newly paired agent connects and waits, idle, until a person confirms it in the app; the
SDK says so in its log and in :attr:`lineup.sdk.Agent.awaiting_confirmation`, and nothing
fails meanwhile.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from lineup.protocol import agent_settings

logger = logging.getLogger("lineup.sdk")

SettingsHook = Callable[[dict[str, Any]], Awaitable[None] | None]
"""``def on_settings(values)`` or ``async def on_settings(values)``: the complete settings."""


class Binding:
    """The agent's confirmation and settings, as last heard from the hub."""

    def __init__(self, schema: Mapping[str, Any] | None) -> None:
        self.schema = dict(schema) if schema is not None else None
        self.awaiting_confirmation = False
        self.name: str | None = None
        self.settings: dict[str, Any] = agent_settings.effective(self.schema, None)
        self._hooks: list[SettingsHook] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def on_change(self, hook: SettingsHook) -> None:
        self._hooks.append(hook)

    def welcomed(self, name: str | None, awaiting: bool, settings: dict[str, Any] | None) -> None:
        self.name = name or self.name
        if awaiting and not self.awaiting_confirmation:
            logger.warning(
                "connected; waiting for a person to confirm this agent in LineUp "
                "(Agents → %s → Confirm). It gets no work until then.",
                self.name or "this agent",
            )
        self.awaiting_confirmation = awaiting
        if settings is not None:
            self._settings_are(settings)

    def confirmed(self, name: str) -> None:
        if self.awaiting_confirmation:
            logger.info("a person confirmed this agent as %r; it can take work now", name)
        self.awaiting_confirmation = False
        self.name = name

    def changed(self, values: dict[str, Any]) -> None:
        self._settings_are(values)

    def _settings_are(self, values: dict[str, Any]) -> None:
        if values == self.settings:
            return
        self.settings = dict(values)
        logger.info("settings: %s", ", ".join(sorted(values)) or "none")
        for hook in self._hooks:
            self._call(hook, dict(values))

    def _call(self, hook: SettingsHook, values: dict[str, Any]) -> None:
        try:
            outcome = hook(values)
        except Exception:
            logger.exception("the settings hook failed")
            return
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(_logged(outcome))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)


async def _logged(outcome: Awaitable[None]) -> None:
    try:
        await outcome
    except Exception:
        logger.exception("the settings hook failed")
