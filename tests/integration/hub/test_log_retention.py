"""The event log compacted by its retention policy (seed 001 §10.3, §11): by age and by size,
keeping what is still needed; an app and an agent behind the horizon get
``system.resync_required`` and end with the state of one that never left."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from starlette.testclient import TestClient

from lineup.cli import main
from lineup.domain.retention import DAY_MS
from lineup.hub import Settings, create_app
from lineup.hub.audit import verify_chain
from lineup.hub.retention import Compaction, compact
from lineup.hub.state import HubState
from lineup.protocol.errors import Conflict
from lineup.protocol.times import now_ms
from lineup.store import Reader
from lineup.store.schema import events
from tests.integration.hub.conftest import fast_settings
from tests.integration.hub.test_client_gateway import _open, _subscribe
from tests.support.agents import AgentSocket
from tests.support.clock import FakeClock
from tests.support.governance import put
from tests.support.hub_client import HubClient
from tests.support.monitor import ONCE, TickedMonitor
from tests.support.people import Person
from tests.support.waiting import until

DAY = 24 * 3600.0


@pytest.fixture
def clock() -> FakeClock:
    # the store stamps events with the real time: start the hub's clock there
    return FakeClock(start_ms=now_ms())


def _recorded_at(client: TestClient, workspace_id: str, sequence: int) -> int:
    def read(r: Reader) -> int:
        stmt = select(events.c.recorded_at).where(
            events.c.workspace_id == workspace_id, events.c.sequence == sequence
        )
        value: int = r.connection.execute(stmt).scalar_one()
        return value

    assert client.portal is not None
    recorded: int = client.portal.call(_state(client).store.read, read)
    return recorded


def _first_at_or_after(client: TestClient, workspace_id: str, cutoff: int) -> int:
    def read(r: Reader) -> int:
        stmt = select(func.min(events.c.sequence)).where(
            events.c.workspace_id == workspace_id, events.c.recorded_at >= cutoff
        )
        value: int = r.connection.execute(stmt).scalar_one()
        return value

    assert client.portal is not None
    first: int = client.portal.call(_state(client).store.read, read)
    return first


def _app(hub_database: str, tmp_path: Path, clock: FakeClock, **overrides: object) -> TestClient:
    # no notification worker: its cursor would pin the horizon until it has read the log
    values: dict[str, object] = {
        "monitor_interval": ONCE,
        "retention_interval": 60.0,
        "notify_enabled": False,
    }
    values.update(overrides)
    settings: Settings = fast_settings(hub_database, tmp_path, **values)
    return TestClient(create_app(settings, clock=clock), base_url="http://testserver")


def _state(client: TestClient) -> HubState:
    state: HubState = client.app.state.hub  # type: ignore[attr-defined]
    return state


def _compact(client: TestClient, *, dry_run: bool = False) -> list[Compaction]:
    state = _state(client)
    assert client.portal is not None
    done: list[Compaction] = client.portal.call(
        lambda: compact(state.store, state.settings, state.clock(), dry_run=dry_run)
    )
    return done


def views(person: Person) -> dict[str, Any]:
    """Every projection the views expose, as an app rebuilding its screens reads them."""
    seen: dict[str, Any] = {}
    for path in ("/conversations", "/tasks", "/interactions", "/inbox", "/tool-calls"):
        seen[path] = person.read(path)
    seen["/artifacts"] = person.read("/artifacts")
    seen["/agents"] = person.read("/agents")
    for conversation in seen["/conversations"]["conversations"]:
        path = f"/conversations/{conversation['id']}/messages"
        seen[path] = person.read(path)
    for task in seen["/tasks"]["tasks"]:
        detail = person.read(f"/tasks/{task['id']}")
        detail.pop("timeline", None)  # read from the log itself, not a projection
        seen[f"/tasks/{task['id']}"] = detail
    return seen


def _events_page(person: Person, after: int) -> dict[str, Any]:
    page: dict[str, Any] = person.read(f"/events?after={after}")
    return page


def _people_frames(hub: HubClient, person: Person, last_sequence: int) -> list[dict[str, Any]]:
    """What the people's socket sends a subscriber up to ``client.caught_up``."""
    frames = []
    with _open(hub, person) as ws:
        _subscribe(ws, person, last_sequence)
        while True:
            frame = json.loads(ws.receive_text())
            frames.append(frame)
            if frame["type"] == "client.caught_up":
                return frames


def _work(ana: Person, agent: AgentSocket) -> dict[str, str]:
    """A finished task with an artifact, an open one waiting for a person, a tool call on the
    people's app still pending, and messages both ways."""
    agent_id = agent.agent_id
    conversation = ana.send("/conversations", {"title": "Ops", "agentIds": [agent_id]}, 201)["id"]
    done = ana.send("/tasks", {"title": "Done soon", "targetAgentId": agent_id}, 201)["task"]["id"]
    agent.call("task.accepted", {"taskId": done}, taskId=done)
    agent.call("artifact.created", {"name": "report", "url": "https://example.test/r"}, taskId=done)
    agent.call("task.status_changed", {"status": "succeeded", "summary": "ok"}, taskId=done)
    open_ = ana.send("/tasks", {"title": "Still open", "targetAgentId": agent_id}, 201)["task"]
    agent.call("task.accepted", {"taskId": open_["id"]}, taskId=open_["id"])
    agent.call(
        "interaction.requested",
        {"interaction": {"id": "int_keep", "type": "approval", "title": "Go?"}},
        taskId=open_["id"],
    )
    ask = {"call_id": "c1", "name": "confirm", "arguments": {"message": "Restart?"}}
    assert agent.call("tool.call", ask, conversationId=conversation)["type"] == "ack"
    agent.call("message.create", {"content": "hello"}, conversationId=conversation)
    for n in range(5):
        ana.send(f"/conversations/{conversation}/messages", {"content": f"note {n}"}, 201)
    return {"conversation": conversation, "done": done, "open": open_["id"]}


def test_compaction_by_age_then_an_app_behind_the_horizon_resyncs_to_the_same_views(
    hub_database: str, tmp_path: Path, clock: FakeClock
) -> None:
    # the offline agent's open task must not fail while the clock moves a day
    with _app(hub_database, tmp_path, clock, retention_days=1, grace_period=30 * DAY) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        with hub.agent(creds) as agent:
            work = _work(ana, agent)
        until(lambda: ana.read(f"/agents/{creds['agentId']}")["status"] == "offline", "offline")
        recent = ana.send(
            f"/conversations/{work['conversation']}/messages", {"content": "today"}, 201
        )["sequence"]
        before = views(ana)
        latest = _events_page(ana, 0)["latestSequence"]
        assert _events_page(ana, 0)["resyncRequired"] is False
        # a day after "today" was recorded, everything recorded before it is past the limit
        cutoff = _recorded_at(client, ana.workspace_id, recent)
        clock.advance((cutoff + DAY_MS - clock()) / 1000)
        assert ana.refresh().status_code == 200  # a day on, as the app does: a new access token

        TickedMonitor(client, clock).tick()  # the monitor's pass compacts by age

        page = _events_page(ana, 0)
        horizon = page["earliestSequence"]
        assert horizon == _first_at_or_after(client, ana.workspace_id, cutoff)
        assert 1 < horizon <= recent, "events older than a day are compacted, today's kept"
        assert page == {
            "events": [],
            "latestSequence": latest,
            "nextAfter": latest,
            "earliestSequence": horizon,
            "resyncRequired": True,
        }
        # from the horizon on the log is whole, and still pages as before
        whole = _events_page(ana, horizon - 1)
        assert whole["resyncRequired"] is False
        assert [e["sequence"] for e in whole["events"]] == list(range(horizon, latest + 1))
        # the open task's events, and the pending tool call's, were kept for their readers
        timeline = ana.read(f"/tasks/{work['open']}")["timeline"]
        assert [e["type"] for e in timeline][:1] == ["task.created"]

        # an app behind the horizon: told to resync, then caught up at the latest
        frames = _people_frames(hub, ana, 0)
        assert [f["type"] for f in frames] == ["ack", "system.resync_required", "client.caught_up"]
        assert frames[1]["payload"]["earliestSequence"] == horizon
        assert frames[1]["payload"]["latestSequence"] == latest
        assert frames[1]["payload"]["resumeAfter"] == latest
        assert frames[2]["payload"]["sequence"] == latest
        # ... and rebuilds from the views exactly what an app that never left shows
        assert views(ana) == before
        # an app whose cursor is at the horizon is replayed as ever, with no resync
        types = [f["type"] for f in _people_frames(hub, ana, horizon - 1)]
        assert "system.resync_required" not in types
        assert len([t for t in types if t not in ("ack", "client.caught_up")]) == latest - (
            horizon - 1
        )
        # a second pass finds nothing more to do
        (again,) = [c for c in _compact(client) if c.workspace_id == ana.workspace_id]
        assert (again.horizon_before, again.horizon_after, again.deleted) == (horizon, horizon, 0)


def test_compaction_by_size_keeps_what_is_needed_and_an_agent_behind_gets_it_all(
    hub_database: str,
    tmp_path: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _app(hub_database, tmp_path, clock, retention_days=0) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        agent_id = creds["agentId"]
        with hub.agent(creds) as agent:
            work = _work(ana, agent)
            cursor = max(f.get("sequence") or 0 for f in agent.frames)
        # the agent said this cursor in its last hello: what it surely has
        with hub.agent(creds, last_sequence=cursor):
            pass
        until(lambda: ana.read(f"/agents/{agent_id}")["status"] == "offline", "offline")
        # while it is away: its question answered, a message for it, a new task, and a task
        # made and cancelled before it ever heard of it
        ana.send("/interactions/int_keep/respond", {"response": {"optionId": "approve"}})
        conversation = work["conversation"]
        message = ana.send(
            f"/conversations/{conversation}/messages",
            {"content": "while you were away", "targetAgentId": agent_id},
            201,
        )
        new = ana.send("/tasks", {"title": "New work", "targetAgentId": agent_id}, 201)["task"]
        gone = ana.send("/tasks", {"title": "Never mind", "targetAgentId": agent_id}, 201)
        ana.send(f"/tasks/{gone['task']['id']}/cancel", {"reason": "not needed"})
        for n in range(20):  # noise nobody needs once it is old
            ana.send(f"/conversations/{conversation}/messages", {"content": f"chat {n}"}, 201)
        # the workspace keeps at most 3 events in full (a layered setting, audited)
        changed = put(ana, f"/settings/workspace/{ana.workspace_id}", {"retention.maxEvents": 3})
        assert changed.status_code == 200, changed.text
        before = views(ana)
        latest = _events_page(ana, 0)["latestSequence"]

        (dry,) = [c for c in _compact(client, dry_run=True) if c.workspace_id == ana.workspace_id]
        assert dry.deleted > 20 and dry.horizon_after == latest - 2
        assert _events_page(ana, 0)["resyncRequired"] is False, "a dry run changes nothing"

        (done,) = [c for c in _compact(client) if c.workspace_id == ana.workspace_id]
        assert (done.deleted, done.kept) == (dry.deleted, dry.kept)
        assert done.horizon_after == latest - 2 and done.kept > 0
        assert _events_page(ana, 0)["earliestSequence"] == latest - 2
        assert views(ana) == before, "compaction changes no projection"

        # the audit chain is its own record: still whole, still verifiable
        state = _state(client)
        assert client.portal is not None
        verified = client.portal.call(verify_chain, state.store)
        assert verified.ok and verified.checked >= 1
        # the projections cannot be rebuilt from a compacted log: they are its only record
        with pytest.raises(Conflict) as refused:
            client.portal.call(state.store.rebuild_projections)
        assert refused.value.details["reason"] == "compacted"

        # the agent behind the horizon: told to resync, then replayed what is kept for it
        with hub.agent(creds, last_sequence=cursor) as back:
            resync = back.next_of("system.resync_required")
            assert resync["payload"]["resumeAfter"] == cursor
            assert resync["payload"]["earliestSequence"] == latest - 2
            got = [back.next_of(t) for t in ("interaction.resolved", "message.delivered")]
            assigned = back.next_of("task.assigned")
        assert got[0]["payload"]["interactionId"] == "int_keep"
        assert got[0]["payload"]["response"] == {"optionId": "approve"}
        assert got[1]["payload"]["messageId"] == message["message"]["id"]
        assert got[1]["payload"]["content"] == "while you were away"
        assert assigned["payload"]["taskId"] == new["id"]
        replayed = [f for f in back.frames if f.get("sequence") and f["type"] != "ack"]
        sequences = [f["sequence"] for f in replayed]
        assert sequences == sorted(sequences) and sequences[0] > cursor
        # nothing of the cancelled task it never had, nor of other people's chat
        assert gone["task"]["id"] not in {f["payload"].get("taskId") for f in replayed}

        # the operator's command prints the figures; a dry run changes nothing
        monkeypatch.setenv("LINEUP_DATABASE_URL", hub_database)
        monkeypatch.setenv("LINEUP_HOME", str(tmp_path))
        monkeypatch.setenv("LINEUP_RETENTION_DAYS", "0")
        capsys.readouterr()
        assert main(["log", "compact", "--dry-run"]) == 0
        printed = capsys.readouterr().out.splitlines()
        (line,) = [p for p in printed if p.startswith(ana.workspace_id)]
        figures = rf"{ana.workspace_id}: horizon {latest - 2} -> \d+ of \d+; would delete \d+ "
        figures += r"events, \d+ kept below the horizon \(3 events; \d+ ms\)"
        assert re.fullmatch(figures, line), line
        assert re.fullmatch(r"\d+ workspaces: would delete \d+ events in [\d.]+ s.*", printed[-1])
        assert _events_page(ana, 0)["earliestSequence"] == latest - 2


def test_an_agent_behind_the_horizon_gets_what_one_that_never_left_gets(
    hub_database: str, tmp_path: Path, clock: FakeClock
) -> None:
    """The same offline agent's downlink, read back before and after compaction: the same
    frames for everything still open."""
    with _app(hub_database, tmp_path, clock, retention_days=0, retention_max_events=2) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        agent_id = creds["agentId"]
        with hub.agent(creds) as agent:
            work = _work(ana, agent)
            cursor = max(f.get("sequence") or 0 for f in agent.frames)
        with hub.agent(creds, last_sequence=cursor):
            pass
        until(lambda: ana.read(f"/agents/{agent_id}")["status"] == "offline", "offline")
        ana.send("/interactions/int_keep/respond", {"response": {"optionId": "reject"}})
        ana.send(
            f"/conversations/{work['conversation']}/messages",
            {"content": "ping", "targetAgentId": agent_id},
            201,
        )
        ana.send("/tasks", {"title": "Later", "targetAgentId": agent_id}, 201)
        ana.send(f"/tasks/{work['open']}/cancel", {"reason": "changed my mind"})

        def downlink() -> list[tuple[str, int, dict[str, Any]]]:
            with hub.agent(creds, last_sequence=cursor) as back:
                # a live message marks the end of the replay
                end = ana.send(
                    f"/conversations/{work['conversation']}/messages",
                    {"content": "end", "targetAgentId": agent_id},
                    201,
                )["message"]["id"]
                while True:
                    frame = back.receive()
                    if frame.get("payload", {}).get("messageId") == end:
                        break
            return [
                (f["type"], f["sequence"], f["payload"])
                for f in back.frames
                if f.get("sequence")
                and f["type"] not in ("ack", "agent.welcome")
                and f["payload"].get("content") != "end"  # each read's own end marker
            ]

        never_left = downlink()
        until(lambda: ana.read(f"/agents/{agent_id}")["status"] == "offline", "offline")
        (done,) = [c for c in _compact(client) if c.workspace_id == ana.workspace_id]
        assert done.deleted > 0 and done.horizon_after > cursor + 1
        assert downlink() == never_left
        assert {t for t, _, _ in never_left} >= {
            "interaction.resolved",
            "message.delivered",
            "task.assigned",
            "task.cancel_requested",
        }
