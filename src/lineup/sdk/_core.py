"""The running agent: one :class:`Core` per :meth:`lineup.sdk.Agent.run`.

It puts the parts together — the link to the hub (:mod:`lineup.sdk._link`), the outbox
sender (:mod:`lineup.sdk._outbox`), the downlink dispatch (:mod:`lineup.sdk._downlink`),
the handlers' runners (:mod:`lineup.sdk._runners`) and what they wait for
(:mod:`lineup.sdk._requests`) — around one state file, and is what the task and message
contexts and the tools see of the agent (their ``Runtime`` protocols).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from lineup import __version__
from lineup.protocol.builtin_tools import ToolCancel
from lineup.protocol.capabilities import (
    CapabilityListing,
    CapabilityListQuery,
    CapabilityResult,
    CapabilitySpec,
)
from lineup.protocol.codec import encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.events import InteractionResolved
from lineup.protocol.ids import new_id
from lineup.protocol.redaction import Redactor
from lineup.protocol.tools import ToolList, ToolResult
from lineup.sdk._binding import Binding
from lineup.sdk._capabilities import StatusCallback
from lineup.sdk._diagnostics import DiagnosticLog
from lineup.sdk._downlink import Downlink
from lineup.sdk._journal import derive_id
from lineup.sdk._link import Link
from lineup.sdk._outbox import Outbox
from lineup.sdk._requests import Requests
from lineup.sdk._runners import Runners
from lineup.sdk._settings import MessageHandler, Settings, TaskHandler
from lineup.sdk._state import StateStore, Step
from lineup.sdk._tools import ANSWER_PREFIX
from lineup.sdk._uploads import UploadedFile

logger = logging.getLogger("lineup.sdk")


class Core:
    """The internals of a running agent; implements the contexts' ``Runtime`` protocol."""

    def __init__(
        self,
        settings: Settings,
        task_handler: TaskHandler | None,
        message_handler: MessageHandler | None,
        binding: Binding | None = None,
    ) -> None:
        self._settings = settings
        self.binding = binding if binding is not None else Binding(settings.settings_schema)
        self._config = settings.config
        self._store: StateStore | None = None
        self._shutting_down = False
        self._requests = Requests(lambda: self.store)
        self._outbox = Outbox(
            lambda: self.store, self._requests, settings.backoff, settings.answer_timeout
        )
        self._runners = Runners(self, task_handler, message_handler, lambda: self._shutting_down)
        self.diagnostics: DiagnosticLog | None = None
        if settings.diagnostics_interval is not None:
            config = self._config
            known = (
                config.credential,
                config.direct.token if config.direct else "",
                config.relay.token if config.relay else "",
            )
            self.diagnostics = DiagnosticLog(
                Redactor(
                    secrets=known, sensitive_fields=settings.sensitive_fields, hook=settings.redact
                ),
                loggers=settings.diagnostic_loggers,
            )
        self._downlink = Downlink(lambda: self.store, self._requests, self._runners, self.binding)
        self._link = Link(
            settings,
            self._downlink,
            self._outbox,
            self._tool_query,
            lambda: self._shutting_down,
            self.diagnostics,
        )

    @property
    def connected(self) -> asyncio.Event:
        """Set while the hub has welcomed the agent on an open connection."""
        return self._link.connected

    # --- Runtime protocol (used by the contexts) ------------------------------------------

    @property
    def agent_id(self) -> str:
        return self._config.agent_id

    @property
    def store(self) -> StateStore:
        if self._store is None:
            raise RuntimeError("The agent is not running.")
        return self._store

    def make_envelope(
        self,
        event_type: str,
        payload: BaseModel,
        *,
        envelope_id: str,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Envelope:
        return Envelope(
            id=envelope_id,
            type=event_type,
            occurred_at=datetime.now(UTC),
            workspace_id=self._config.workspace_id,
            task_id=task_id,
            conversation_id=conversation_id,
            payload=payload.model_dump(mode="json", by_alias=True, exclude_none=True),
        )

    def outbox_changed(self) -> None:
        self._outbox.changed()

    async def wait_settled(self, step: Step) -> None:
        await self._requests.wait_settled(step)

    async def send_live(self, envelope: Envelope) -> bool:
        return await self._link.send_live(encode(envelope))

    async def wait_answer(
        self, interaction_id: str, expires_at: datetime | None
    ) -> InteractionResolved:
        return await self._requests.wait_answer(interaction_id, expires_at)

    async def upload(
        self, name: str, content: bytes, mime_type: str | None, key: str
    ) -> UploadedFile:
        return await self._settings.uploader().upload(name, content, mime_type, key)

    # the ToolRuntime protocol of lineup.sdk._tools

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    async def wait_tool_result(self, call_id: str) -> ToolResult:
        return await self._requests.wait_tool_result(call_id)

    async def query_tools(self) -> list[dict[str, Any]]:
        return await self._link.query_tools()

    def withdraw_tool_call(self, call_id: str, reason: str | None = None) -> None:
        """Queue ``tool.cancel`` for a call nobody answered yet (durable, like any uplink)."""
        if self.store.answer(ANSWER_PREFIX + call_id) is not None:
            return
        envelope = self.make_envelope(
            "tool.cancel",
            ToolCancel(call_id=call_id, reason=reason),
            envelope_id=derive_id("evt", self.agent_id, "tool.cancel", call_id),
        )
        self.store.enqueue(envelope.id, encode(envelope))
        self.outbox_changed()

    def forget_tool_call(self, scope: str, call_id: str) -> None:
        """A call's result was used and nothing will ask for it again: drop its records."""
        self.store.forget(scope, [ANSWER_PREFIX + call_id])

    # the CapabilityRuntime protocol of lineup.sdk._capabilities

    async def query_capabilities(
        self, task_id: str | None, conversation_id: str | None
    ) -> list[CapabilitySpec]:
        def make() -> tuple[Envelope, str]:
            query = self.make_envelope(
                "capability.list",
                CapabilityListQuery(),
                envelope_id=new_id("evt"),
                task_id=task_id,
                conversation_id=conversation_id,
            )
            return query, encode(query)

        listing = await self._link.query(make, self._downlink.capability_lists, "the capabilities")
        assert isinstance(listing, CapabilityListing)
        return list(listing.capabilities)

    async def wait_invocation(
        self, invocation_id: str, on_status: StatusCallback | None
    ) -> CapabilityResult:
        return await self._requests.wait_invocation(invocation_id, on_status)

    # --- lifecycle ------------------------------------------------------------------------

    def stop(self) -> None:
        self._link.stop()

    async def drain(self) -> None:
        await self._outbox.drain()

    async def run(self) -> None:
        if self.diagnostics is None:
            await self._run()
            return
        with self.diagnostics.capturing():
            await self._run()

    async def _run(self) -> None:
        settings = self._settings
        logger.info(
            "agent %s starting: %s %s, LineUp SDK %s, hub %s",
            self._config.agent_id,
            settings.runtime,
            settings.agent_version,
            __version__,
            self._config.hub_url,
        )
        self._store = StateStore(self._settings.state_path, self._config.agent_id)
        try:
            pending = self._store.pending_jobs()
            if pending:
                logger.info("resuming %d unfinished handler(s) from the journal", len(pending))
            for job in pending:
                self._runners.start(job)
            await self._link.run()
        finally:
            self._shutting_down = True
            await self._runners.stop_all()
            self._requests.stop_tool_waits()
            self._store.close()
            self._store = None

    def _tool_query(self) -> tuple[Envelope, str]:
        query = self.make_envelope("tool.list", ToolList(tools=[]), envelope_id=new_id("evt"))
        return query, encode(query)
