"""The notification worker is woken by commits that may notify someone, and by no others.

A busy agent's progress reports are most of a busy log. Each commit that woke the worker
cost a pass over the log (a read, a write job taking the workspace's writer, another read)
for nothing: only a task's end, a request to a person or an agent going offline can notify.
The worker still reads past such events, at its interval, to move its cursor.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from lineup.hub import Settings
from lineup.hub.notify.worker import NotificationWorker
from lineup.store import StoredEvent


def _event(kind: str, payload: dict[str, Any], sequence: int = 1) -> StoredEvent:
    return StoredEvent(
        id=f"evt_{sequence}",
        workspace_id="ws_1",
        type=kind,
        actor="agent:a1",
        payload=payload,
        occurred_at=1_764_480_000_000,
        sequence=sequence,
        recorded_at=1_764_480_000_001,
    )


def _worker() -> NotificationWorker:
    hub = SimpleNamespace(settings=Settings(database_url="sqlite:///:memory:"))
    return NotificationWorker(hub)  # type: ignore[arg-type]


QUIET = [
    _event("task.status_changed", {"taskId": "t1", "status": "running", "progress": 40}),
    _event("task.status_changed", {"taskId": "t1", "status": "waiting_on_agent"}),
    _event("agent.status_changed", {"agentId": "a1", "status": "online"}),
    _event("message.created", {"messageId": "m1", "content": "hi"}),
]

LOUD = [
    _event("task.status_changed", {"taskId": "t1", "status": "failed", "error": "broke"}),
    _event("task.status_changed", {"taskId": "t1", "status": "succeeded"}),
    _event("agent.status_changed", {"agentId": "a1", "status": "offline"}),
    _event("interaction.requested", {"interaction": {"id": "int_1", "type": "approval"}}),
    _event("tool.called", {"toolCallId": "tc_1", "tool": "choice"}),
]


def test_a_stream_of_progress_reports_does_not_wake_the_worker() -> None:
    worker = _worker()
    worker._on_commit([_event(e.type, e.payload, n) for n, e in enumerate(QUIET * 50, 1)])
    assert not worker._wake.is_set()


@pytest.mark.parametrize("event", LOUD, ids=lambda e: f"{e.type}:{e.payload.get('status', '')}")
def test_a_commit_that_may_notify_wakes_the_worker_even_among_progress_reports(
    event: StoredEvent,
) -> None:
    worker = _worker()
    worker._on_commit([*QUIET, event, *QUIET])
    assert worker._wake.is_set()
