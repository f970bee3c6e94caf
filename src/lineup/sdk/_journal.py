"""Durable handlers: each context operation is a numbered step, journaled once.

A handler that is resumed after a restart runs again from the top. Every operation it makes
through its context gets the next step index, in call order; a step already in the journal is
not repeated — its recorded result is returned at once — so the handler fast-forwards to where
it stopped. Envelope and interaction ids are derived from (agent, scope, step), so even a frame
resent by another route is the same frame to the hub.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from lineup.protocol.codec import describe_validation_error, encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import InvalidArgument
from lineup.protocol.events import InteractionResolved
from lineup.sdk._errors import JournalMismatch
from lineup.sdk._state import StateStore, Step
from lineup.sdk._uploads import UploadedFile

M = TypeVar("M", bound=BaseModel)


class Runtime(Protocol):
    """What a context needs from the running agent (implemented by the agent's core)."""

    @property
    def agent_id(self) -> str: ...

    @property
    def store(self) -> StateStore: ...

    def make_envelope(
        self,
        event_type: str,
        payload: BaseModel,
        *,
        envelope_id: str,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Envelope: ...

    def outbox_changed(self) -> None: ...

    async def wait_settled(self, step: Step) -> None: ...

    async def send_live(self, envelope: Envelope) -> bool: ...

    async def wait_answer(
        self, interaction_id: str, expires_at: datetime | None
    ) -> InteractionResolved: ...

    async def upload(
        self, name: str, content: bytes, mime_type: str | None, key: str
    ) -> UploadedFile: ...


def derive_id(prefix: str, agent_id: str, scope: str, index: int | str) -> str:
    """``prefix_`` + 26 hex digits of sha256(agent, scope, step): stable across restarts."""
    digest = hashlib.sha256(f"{agent_id}\x1f{scope}\x1f{index}".encode()).hexdigest()
    return f"{prefix}_{digest[:26]}"


def build_payload(model: type[M], **fields: Any) -> M:
    """Validate a payload here, so a mistake is an ``InvalidArgument`` before anything is sent."""
    try:
        return model(**fields)
    except ValidationError as exc:
        message, problems = describe_validation_error(exc)
        raise InvalidArgument(
            f"Invalid {model.__name__}: {message}", details={"problems": problems}
        ) from None


def json_value(value: Any) -> Any:
    """``value`` as it will read back from the journal (tuples become lists, and so on)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"A journaled step result must be JSON-serialisable: {exc}") from None


class Journal:
    """The numbered steps of one handler run, ``scope`` being the task id (or message)."""

    def __init__(self, runtime: Runtime, scope: str, *, first_index: int = 1) -> None:
        self._runtime = runtime
        self.scope = scope
        self._next = first_index

    def derive(self, prefix: str, index: int | str) -> str:
        return derive_id(prefix, self._runtime.agent_id, self.scope, index)

    def begin(self, kind: str, name: str) -> tuple[int, Step | None]:
        """Take the next step index; return the recorded step if this one happened before."""
        index = self._next
        self._next += 1
        recorded = self._runtime.store.step(self.scope, index)
        if recorded is not None and (recorded.kind, recorded.name) != (kind, name):
            raise JournalMismatch(
                f"Step {index} of {self.scope} was {recorded.kind} {recorded.name!r} when it "
                f"first ran, and is now {kind} {name!r}; the handler must repeat its steps in "
                "the same order when it is resumed."
            )
        return index, recorded

    def skip_recorded(self) -> list[Step]:
        """Move past every step recorded from here on (a resumed run that cannot repeat
        them); the next step gets a new index. Returns the steps passed over."""
        skipped = self._runtime.store.steps_from(self.scope, self._next)
        if skipped:
            self._next = skipped[-1].index + 1
        return skipped

    def commit(
        self, index: int, kind: str, name: str, result: Any, envelope: Envelope | None
    ) -> Step:
        """Journal the step and queue its envelope, atomically."""
        store = self._runtime.store
        frame = encode(envelope) if envelope is not None else None
        store.record_step(
            self.scope,
            index,
            kind,
            name,
            result,
            envelope.id if envelope is not None else None,
            frame,
        )
        if envelope is not None:
            self._runtime.outbox_changed()
        step = store.step(self.scope, index)
        assert step is not None
        return step

    async def emit(self, kind: str, name: str, build: Callable[[int], tuple[Envelope, Any]]) -> Any:
        """One step that sends one envelope; waits for the hub's answer, returns the result.

        ``build(index)`` makes the envelope and the result to journal. A hub error that is
        final for the frame is raised here (and again on replay, as recorded).
        """
        index, recorded = self.begin(kind, name)
        if recorded is None:
            envelope, result = build(index)
            recorded = self.commit(index, kind, name, json_value(result), envelope)
        await self._runtime.wait_settled(recorded)
        return recorded.result
