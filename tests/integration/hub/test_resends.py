"""An agent's resent event is answered with the original, whatever its command does the
second time — also in the writer's optimistic pass, which does not look the id up first."""

from __future__ import annotations

import asyncio

import pytest

from lineup.hub import accounts, commands
from lineup.hub.commands import Recorded
from lineup.hub.recorder import Recorder, Writing
from lineup.protocol.errors import Conflict
from lineup.protocol.facts import AgentRenamedPayload
from lineup.protocol.ids import new_id
from lineup.store import Store, User

ACTOR = "agent:agent_1"
NOTED = AgentRenamedPayload(agent_id="agent_1", name="noted")  # any fact will do


async def _workspace(recorder: Recorder) -> str:
    user = User(new_id("user"), f"{new_id('u')}@example.test", "Ana", created_at=0)
    workspace_id: str = await recorder.run(lambda w: accounts.create_workspace(w, user, "w"))
    return workspace_id


def _record(w: Writing, workspace_id: str, event_id: str) -> Recorded:
    return Recorded(w.append(workspace_id, NOTED, actor=ACTOR, event_id=event_id))


def _noop(w: Writing) -> Recorded:
    return Recorded(None)  # e.g. task.accepted for a task already running


def _refuse(w: Writing) -> Recorded:
    raise Conflict("already done")  # e.g. a transition the first delivery made


def _record_elsewhere(w: Writing, workspace_id: str) -> Recorded:
    # a command that records under an id of its own, not the event's
    return Recorded(w.append(workspace_id, NOTED, actor=ACTOR))


@pytest.mark.parametrize("second", ["noop", "refuse", "record_elsewhere", "record_again"])
async def test_a_resend_is_answered_with_the_original_event(store: Store, second: str) -> None:
    recorder = Recorder(store)
    ws = await _workspace(recorder)
    first = await recorder.run(
        lambda w: commands.once(w, ws, ACTOR, "e-1", lambda: _record(w, ws, "e-1"))
    )
    assert first.result is not None and not first.duplicate
    before = await store.last_sequence(ws)

    def again(w: Writing) -> Recorded:
        command = {
            "noop": lambda: _noop(w),
            "refuse": lambda: _refuse(w),
            "record_elsewhere": lambda: _record_elsewhere(w, ws),
            "record_again": lambda: _record(w, ws, "e-1"),
        }[second]
        return commands.once(w, ws, ACTOR, "e-1", command)

    # in a batch with a new event, so the optimistic pass has something to commit
    resent, other = await asyncio.gather(
        recorder.run(again),
        recorder.run(lambda w: commands.once(w, ws, ACTOR, "e-2", lambda: _record(w, ws, "e-2"))),
    )
    assert resent.duplicate and resent.sequence == first.sequence
    assert other.sequence == before + 1 and not other.duplicate
    assert await store.last_sequence(ws) == before + 1  # the resend recorded nothing


async def test_a_command_that_fails_for_a_new_event_still_fails(store: Store) -> None:
    recorder = Recorder(store)
    ws = await _workspace(recorder)
    with pytest.raises(Conflict, match="already done"):
        await recorder.run(lambda w: commands.once(w, ws, ACTOR, "e-new", lambda: _refuse(w)))
