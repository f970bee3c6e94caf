"""The one way the hub changes state: validate, append events, commit.

A job is a plain (synchronous) function that runs inside the store's group-commit writer with
a :class:`Writing` that appends events and reads the projections it must check first, all in
the same transaction. Like every store job it must be re-runnable: the writer may roll a batch
back and run it again, so a job does nothing outside the transaction.

Fan-out is not done here: the broker listens to the store's commits, so nobody sees an event
that could still roll back, and events reach followers in commit (= sequence) order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from lineup.protocol.facts import FACTS, Fact
from lineup.protocol.ids import new_id
from lineup.protocol.times import now_ms
from lineup.store import AppendResult, NewEvent, Store, StoredEvent, WriteTx
from lineup.store.eventlog import reused_id, same_content

T = TypeVar("T")
Clock = Callable[[], int]


class Writing:
    """What a job sees: the transaction's reader, ``append`` and the injected clock."""

    def __init__(self, tx: WriteTx, clock: Clock) -> None:
        self.tx = tx
        self.read = tx
        self.now_ms = clock()
        self.appended: list[StoredEvent] = []
        self._answering: tuple[str, str, str | None] | None = None

    @property
    def optimistic(self) -> bool:
        """True in the writer's first pass (see ``WriteTx.optimistic``)."""
        return self.tx.optimistic

    @property
    def connection(self) -> Any:
        return self.tx.connection

    def answering(self, sender: str, event_id: str, fingerprint: str | None) -> None:
        """This job answers ``sender``'s event ``event_id``, whose content digests to
        ``fingerprint``: the event appended under that id keeps it, for resends to match."""
        self._answering = (sender, event_id, fingerprint)

    def recorded_before(
        self, workspace_id: str, sender: str, event_id: str, fingerprint: str | None = None
    ) -> AppendResult | None:
        """A resend of an event ``sender`` already recorded: its original, so the ack can say
        so. The same id with other content is a ``Conflict``, never a duplicate."""
        found = self.tx.find_event(workspace_id, sender, event_id)
        if found is None:
            return None
        if not same_content(found.fingerprint, fingerprint):
            raise reused_id(event_id)
        return AppendResult(found.event, duplicate=True)

    def append(
        self,
        workspace_id: str,
        fact: Fact,
        *,
        actor: str,
        event_id: str | None = None,
        conversation_id: str | None = None,
        task_id: str | None = None,
        correlation_id: str | None = None,
        occurred_at: int | None = None,
    ) -> AppendResult:
        """Record ``fact``; its model says which event type it is, so the hub cannot record
        a type that projections and readers have no model for."""
        model = type(fact)
        if FACTS.get(getattr(model, "fact_type", "")) is not model:
            raise TypeError(f"{model.__name__} is not a recorded fact (lineup.protocol.facts)")
        fingerprint = None
        answering = self._answering
        if answering is not None and answering[0] == actor and answering[1] == event_id:
            fingerprint = answering[2]
        result = self.tx.append(
            NewEvent(
                id=event_id or new_id("evt"),
                workspace_id=workspace_id,
                type=model.fact_type,
                actor=actor,
                payload=fact.recorded(),
                occurred_at=occurred_at if occurred_at is not None else self.now_ms,
                conversation_id=conversation_id,
                task_id=task_id,
                correlation_id=correlation_id,
                fact=fact,
            ),
            fingerprint=fingerprint,
        )
        if not result.duplicate:
            self.appended.append(result.event)
        return result


class Recorder:
    def __init__(self, store: Store, clock: Clock = now_ms) -> None:
        self.store = store
        self.clock = clock

    async def run(
        self,
        job: Callable[[Writing], T],
        lane: Hashable | None = None,
        *,
        workspace: str | None = None,
        brief: bool = False,
    ) -> T:
        """Run ``job`` in the writer's next transaction; returns once that has committed.

        ``lane`` groups one sender's jobs (see ``Store.write``), so one busy agent gets its
        share of the writer and no more. ``workspace``, when the job writes that workspace's
        rows and nothing else, lets it commit beside other workspaces' jobs. ``brief``: see
        ``Store.write``."""
        return await self.store.write(
            lambda tx: job(Writing(tx, self.clock)), lane, workspace=workspace, brief=brief
        )
