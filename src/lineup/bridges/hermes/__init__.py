"""Hermes Agent as a LineUp agent: a platform plugin for Hermes's messaging gateway.

Hermes's gateway talks to people through platform adapters (Telegram, Slack, …); this one
is LineUp. Installed into a Hermes home (``lineup hermes install``, see docs/hermes.md), the
gateway loads the plugin directory ``plugin/``, whose ``register`` is :func:`register`; the
adapter then runs a LineUp SDK :class:`~lineup.sdk.Agent` inside the gateway's event loop.

What maps to what:

* a LineUp conversation is a Hermes chat (``chat_id`` = the conversation id), so each
  conversation is its own Hermes session;
* a person's message is one Hermes turn; replies stream as ``message.delta`` and are recorded
  once whole; messages sent while a turn runs wait for it, a *steer* interrupts it;
* a task given to the agent is a turn too, reported as a task (accepted, progress on each
  tool Hermes runs, succeeded with the last reply as its summary);
* a dangerous-command approval is a LineUp approval card; the answer unblocks Hermes;
* files Hermes sends (documents, images, audio, video) are uploaded and shown as artifacts.

Only this package's ``register`` is imported by the plugin; the adapter (which needs
Hermes's ``gateway`` package) is imported when Hermes calls it.
"""

from __future__ import annotations

from typing import Any

PLATFORM = "lineup"
"""The platform's name in Hermes's configuration (``gateway.platforms.lineup``)."""


def register(ctx: Any) -> None:
    """Hermes's plugin entry point: register the LineUp platform with the gateway."""
    from lineup.bridges.hermes._adapter import on_tool_start, registration

    ctx.register_platform(**registration())
    ctx.register_hook("pre_tool_call", on_tool_start)


__all__ = ["PLATFORM", "register"]
