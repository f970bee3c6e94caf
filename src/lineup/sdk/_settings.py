"""What a running agent was configured with, and the shapes of its handlers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from lineup.protocol.redaction import Hook
from lineup.sdk._backoff import Backoff
from lineup.sdk._config import AgentConfig
from lineup.sdk._context import MessageContext, TaskContext
from lineup.sdk._tls import TlsTrust
from lineup.sdk._transport import Transport
from lineup.sdk._uploads import Uploader

TaskHandler = Callable[[TaskContext], Awaitable[str | None]]
MessageHandler = Callable[[MessageContext], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything an :class:`~lineup.sdk.Agent` was configured with."""

    config: AgentConfig
    state_path: Path
    transport: Transport
    runtime: str
    agent_version: str
    capabilities: tuple[str, ...] | None
    tools: tuple[Any, ...] | None
    heartbeat_interval: float | None
    backoff: Backoff
    answer_timeout: float
    http_transport: httpx.AsyncBaseTransport | None = None
    """For uploads (HTTP); tests pass an ``httpx.MockTransport``."""
    sensitive_fields: tuple[str, ...] = ()
    """Names of log fields whose values never leave the machine (see ``_diagnostics``)."""
    redact: Hook | None = None
    """The adapter's own redaction, run on every string of a diagnostic line first."""
    diagnostic_loggers: tuple[str, ...] = ()
    """Loggers besides ``lineup.sdk`` whose lines are sent to the hub."""
    diagnostics_interval: float | None = 5.0
    """Seconds between batches of diagnostic lines; ``None``: none are kept or sent."""
    settings_schema: dict[str, Any] | None = None
    """The JSON Schema of the settings people may change from the app (sent in the hello)."""
    tls: TlsTrust | None = None
    """How HTTP requests (uploads) trust the hub; the WebSocket transport holds the same."""

    def uploader(self) -> Uploader:
        return Uploader(
            self.config.hub_url,
            self.config.credential,
            self.backoff,
            self.http_transport,
            tls=self.tls,
        )
