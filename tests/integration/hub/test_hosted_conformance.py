"""Hosted-agent conformance through the hub: what a person relies on when LineUp hosts an
engine, the same for every engine (``tests/support/hosted_engines.py``), on SQLite and
PostgreSQL, with the engine as a real process.

One hub per engine and database walks one story: a conversation of several turns, shown live
as a transcript; a LineUp tool whose question the person answers through the API, and a
message steered into that turn meanwhile; a tool of the person's app; the engine's own
question to the person (engines that ask one: Pi through an extension's dialogs, Claude Code
with AskUserQuestion); an approval allowed and one declined; an approval whose input the
person edits (engines that take one: not Codex); a governed capability invoked from the
engine; the process cap; a task stopped from the app (interrupt); the engine killed mid-turn
and started again with nothing done twice; an idle engine reaped and started again from the
hub's record, whose context snapshot is kept. Leaving no orphan behind when the hub itself is
killed, and contacting nothing but loopback, are in ``tests/e2e/test_hosted_engines.py``
(they need the hub as a process).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lineup.hub.governance import credentials
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.hosted_engines import CASES, INSTALL, EngineCase, make_case
from tests.support.hosted_hub import (
    Person,
    agent_replies,
    reply_containing,
    running_hub,
    sign_in,
)
from tests.support.providers import API_KEY as LEDGER_KEY
from tests.support.providers import LedgerProvider
from tests.support.scripted_model import ScriptedModel, Step
from tests.support.waiting import until_async


@pytest.fixture(params=CASES)
def engine(request: pytest.FixtureRequest) -> Iterator[EngineCase]:
    with ScriptedModel() as model:
        case = make_case(request.param, model if request.param != "fake" else None)
        if case is None:
            pytest.skip(INSTALL[request.param])
        yield case


async def transcript(person: Person, conversation_id: str) -> list[dict[str, Any]]:
    """The conversation's transcript entries as recorded (``activity.*``), in log order."""
    found: list[dict[str, Any]] = []
    after = 0
    while True:
        page = await person.get(
            f"/raw-events?subject=conversation:{conversation_id}&after={after}&limit=500"
        )
        found += [e for e in page["events"] if e["type"].startswith("activity.")]
        if not page["hasMore"] or not page["events"]:
            return found
        after = page["events"][-1]["sequence"]


def started(entries: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        e["payload"]
        for e in entries
        if e["type"] == "activity.started" and e["payload"]["kind"] == kind
    ]


def finished(entries: list[dict[str, Any]], activity_id: str) -> dict[str, Any]:
    return next(
        e["payload"]
        for e in entries
        if e["type"] == "activity.finished" and e["payload"]["activityId"] == activity_id
    )


async def card_of(person: Person, conversation_id: str, kind: str) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        page = await person.get(f"/conversations/{conversation_id}/messages?limit=200")
        open_ = [
            i for i in page["interactions"] if i["status"] == "requested" and i["type"] == kind
        ]
        return open_[0] if open_ else None

    card: dict[str, Any] = await until_async(found, f"an open {kind} card")
    return card


async def test_a_hosted_engine_keeps_its_promises_through_the_hub(
    hub_database: str, tmp_path: Path, engine: EngineCase
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    effects = project / engine.effects_file
    ledger = LedgerProvider()
    settings = fast_settings(
        hub_database,
        tmp_path / "hub",
        engine_roots=(tmp_path,),
        providers=(),
        extra_providers=(ledger,),
    )
    clock = FakeClock()

    def done() -> list[str]:
        return effects.read_text().splitlines() if effects.exists() else []

    async with (
        running_hub(settings, tmp_path, engines={engine.name: engine.runtime()}, cap=1) as hub,
        httpx.AsyncClient(base_url=hub.url, timeout=30) as http,
    ):
        manager = hub.hosting.manager
        manager.clock = clock
        await credentials.put(hub.state, "ledger", "books", {"apiKey": LEDGER_KEY})
        person = await sign_in(http, first=True)
        assert (await person.get("/hosted-agents"))["engines"] == [engine.name]
        created = await person.post(
            "/hosted-agents",
            {
                "name": "Builder",
                "engine": engine.name,
                "cwd": str(project),
                "model": engine.model_settings(),
            },
            201,
        )
        agent_id = created["agentId"]
        books = (await person.post("/projects", {"name": "Books"}, 201))["id"]
        await person.post(
            "/policy/rules",
            {"capability": "ledger.*", "effect": "allow", "projectId": books, "roles": ["owner"]},
            201,
        )
        cid = (
            await person.post(
                "/conversations",
                {"title": "Build", "agentIds": [agent_id], "projectId": books},
                201,
            )
        )["id"]
        key = (agent_id, cid)

        async def say(text: str, conversation: str = cid, **extra: Any) -> Any:
            body = {"content": text, "targetAgentId": agent_id, **extra}
            return await person.post(f"/conversations/{conversation}/messages", body, 201)

        # --- a conversation of several turns, in one process ---------------------------
        first, reply = engine.plain("hello there")
        await say(first)
        assert await reply_containing(person, cid, reply)
        pid = manager.pid(key)
        assert pid is not None
        second, reply = engine.plain("and again")
        await say(second)
        assert await reply_containing(person, cid, reply)
        assert manager.pid(key) == pid

        # --- a LineUp tool: the person answers its question through the API; a message
        # marked as steering, sent meanwhile, goes into that turn ------------------------
        message, ends = engine.question("What is your name?")
        await say(message)
        card = await card_of(person, cid, "input")
        assert card["request"]["title"] == "What is your name?"
        await say("Also: be brief.", steer=True)
        await person.post(f"/interactions/{card['id']}/respond", {"response": {"text": "Ana"}})
        reply = await reply_containing(person, cid, ends)
        assert engine.answer_reached(reply, "Ana")
        assert engine.steered(reply, "Also: be brief.")
        assert not [r for r in await agent_replies(person, cid) if "said: Also" in r]

        # --- a tool of the person's app (tool.call), answered through the API ----------
        message, ends = engine.app_tool("confirm", {"message": "Ship it?"})
        await say(message)

        async def app_call() -> dict[str, Any] | None:
            calls = (await person.get("/tool-calls?status=pending"))["toolCalls"]
            return calls[0] if calls else None

        call = await until_async(app_call, "the app tool call")
        assert call["name"] == "confirm" and call["arguments"] == {"message": "Ship it?"}
        await person.post(
            f"/tool-calls/{call['id']}/result",
            {"name": "confirm", "result": {"message": "yes", "data": {"confirmed": True}}},
        )
        reply = await reply_containing(person, cid, ends)
        assert engine.answer_reached(reply, '"confirmed": true')

        # --- the engine's own question (not LineUp's tool), answered through the API ---
        own = engine.own_question()
        if own is not None:
            await say(own.message)
            card = await card_of(person, cid, "choice")
            assert card["request"]["title"] == own.title
            picked = next(o for o in card["request"]["options"] if o["label"] == own.pick)
            await person.post(
                f"/interactions/{card['id']}/respond", {"response": {"optionId": picked["id"]}}
            )
            if own.confirm:
                sure = await card_of(person, cid, "approval")
                await person.post(
                    f"/interactions/{sure['id']}/respond", {"response": {"optionId": "approve"}}
                )
            reply = await reply_containing(person, cid, "Blue then.")
            assert engine.answer_reached(reply, own.told)

        # --- approvals: allowed (the effect happens), declined (it does not) -----------
        message, title = engine.command("make build")
        await say(message)
        card = await card_of(person, cid, "approval")
        assert card["request"]["title"].startswith(title)
        assert "make build" in card["request"]["content"]
        assert card["request"]["details"]["cwd"] == str(project)
        await person.post(
            f"/interactions/{card['id']}/respond", {"response": {"optionId": "approve"}}
        )
        await until_async(lambda: done() == ["make build"], "the allowed command's effect")
        message, _ = engine.command("make deploy")
        await say(message)
        card = await card_of(person, cid, "approval")
        await person.post(
            f"/interactions/{card['id']}/respond",
            {"response": {"optionId": "reject", "text": "not today"}},
        )
        assert await reply_containing(
            person, cid, engine.declined_reply("make deploy", "not today")
        )
        assert engine.declined_reached("not today")
        assert done() == ["make build"]

        # --- an approval whose input the person edits (engines that take one) ----------
        if engine.editable:
            edit = engine.edit("draft", "final")
            await say(edit.message)
            card = await card_of(person, cid, "approval")
            assert card["request"]["editableInput"] == edit.proposed
            bad = await http.post(
                f"/api/workspaces/{person.workspace_id}/interactions/{card['id']}/respond",
                json={"response": {"optionId": "reject", "input": edit.edited}},
                headers={"X-CSRF-Token": person.csrf},
            )
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_argument"
            await person.post(
                f"/interactions/{card['id']}/respond",
                {"response": {"optionId": "approve", "input": edit.edited}},
            )
            await until_async(lambda: len(done()) == 2, "the edited input's effect")
            assert done()[-1] == edit.effect

        # --- a governed capability, through the hub's core ----------------------------
        if engine.model is None:
            await say('[tool:ledger__entry__post {"amount": 5, "memo": "lunch"}]')
        else:
            engine.model.then(
                engine.call("ledger__entry__post", amount=5, memo="lunch"), Step.text("Posted.")
            )
            await say("Post five to the ledger.")

        async def confirm_card() -> dict[str, Any] | None:
            listed = (await person.get("/approvals?view=waiting"))["approvals"]
            return listed[0] if listed else None

        approval = await until_async(confirm_card, "the capability's confirm card")
        assert approval["capability"] == "ledger.entry.post"
        assert approval["params"] == {"amount": 5, "memo": "lunch"}
        await person.post(f"/approvals/{approval['id']}/decision", {"decision": "approve"})
        await until_async(lambda: len(ledger.entries) == 1, "the ledger entry")
        await reply_containing(person, cid, "succeeded" if engine.model is None else "Posted.")

        # --- the transcript, as recorded ------------------------------------------------
        entries = await transcript(person, cid)
        commands = [c for c in started(entries, "command") if "make build" in c["command"]]
        assert commands and finished(entries, commands[0]["activityId"])["exitCode"] == 0
        outputs = [
            e["payload"]["chunk"]
            for e in entries
            if e["type"] == "activity.output"
            and e["payload"]["activityId"] == commands[0]["activityId"]
        ]
        assert engine.model is not None or outputs == ["pretend: make build\n"]
        asked = [t for t in started(entries, "tool_call") if t["name"] == "ask_input"]
        assert asked and asked[0]["arguments"]["title"] == "What is your name?"
        assert "Ana" in json.dumps(finished(entries, asked[0]["activityId"]).get("result"))
        contexts = started(entries, "context")
        assert contexts[0]["snapshotUrl"] and contexts[0]["replyTo"]
        assert any(e["type"] == "activity.usage" for e in entries)

        if engine.model is None:  # reasoning, a diff, and output past the inline limit
            await say("[think][change:app.py][spew:70000]")
            assert await reply_containing(person, cid, "changed app.py")
            entries = await transcript(person, cid)
            assert started(entries, "reasoning")[-1]["text"] == "Reading the message."
            assert "+new line" in started(entries, "file_change")[-1]["diff"]
            spew = started(entries, "command")[-1]
            done_spew = finished(entries, spew["activityId"])
            assert done_spew["outputChars"] == 70_000 and done_spew["outputUrl"]
            whole = await http.get(done_spew["outputUrl"])
            assert whole.status_code == 200 and len(whole.text) == 70_000

        # --- the process cap, and a task stopped from the app ---------------------------
        task = (
            await person.post(
                f"/conversations/{cid}/messages",
                {"content": engine.waits(), "trackAsTask": True, "targetAgentId": agent_id},
                201,
            )
        )["taskId"]
        await until_async(lambda: manager.busy(key), "the task's turn to run")
        other = (
            await person.post("/conversations", {"title": "Other", "agentIds": [agent_id]}, 201)
        )["id"]
        await say("anyone there?", other)
        assert "(rate_limited)" in await reply_containing(person, other, "rate_limited")
        await person.post(f"/tasks/{task}/cancel", {"reason": "Stop now"})

        async def task_status() -> str | None:
            status = (await person.get(f"/tasks/{task}"))["task"]["status"]
            return status if status in ("cancelled", "failed", "succeeded") else None

        assert await until_async(task_status, "the task to end") == "cancelled"
        assert manager.pid(key) == pid, "an interrupt stops the turn, not the process"
        message, reply = engine.plain("still with me?")
        await say(message)
        assert await reply_containing(person, cid, reply)

        # --- killed mid-turn: started again, nothing done twice --------------------------
        message, _ = engine.command("make install", then_wait=True)
        await say(message)
        card = await card_of(person, cid, "approval")
        await person.post(
            f"/interactions/{card['id']}/respond", {"response": {"optionId": "approve"}}
        )
        await until_async(lambda: done()[-1:] == ["make install"], "the second effect")
        before = len(done())
        waiting = None
        if engine.model is not None:  # it goes on to ask, and waits for the answer
            waiting = await card_of(person, cid, "input")
        os.kill(pid, signal.SIGKILL)
        assert await reply_containing(person, cid, "stopped unexpectedly")
        if waiting is not None:  # nothing waits for its answer any more: it is taken back

            async def withdrawn() -> bool:
                card = await person.get(f"/interactions/{waiting['id']}")
                return bool(card["status"] == "cancelled")

            await until_async(withdrawn, "the question nothing waits for to be withdrawn")
        errors = started(await transcript(person, cid), "error")
        assert errors[-1]["code"] == "unavailable"
        message, reply = engine.after_restart("are you back?")
        await say(message)
        assert await reply_containing(person, cid, reply)
        restarted = manager.pid(key)
        assert restarted not in (None, pid)
        assert len(done()) == before and done().count("make install") == 1
        assert engine.remembers("hello there")

        # --- reaped when idle, started again from the record ---------------------------
        await until_async(lambda: not manager.busy(key), "the turn to end")  # replied first
        clock.advance(hub.hosting.manager.table.idle_ms / 1000 + 1)
        assert key in await manager.reap()
        assert manager.pid(key) is None
        message, reply = engine.after_restart("after a rest")
        await say(message)
        assert await reply_containing(person, cid, reply)
        assert manager.pid(key) not in (None, restarted)
        assert engine.remembers("are you back?")
        entries = await transcript(person, cid)
        latest = started(entries, "context")[-1]
        assert latest["text"].startswith("The engine started with")
        snapshot = await http.get(latest["snapshotUrl"])
        assert snapshot.status_code == 200
        kept = snapshot.json()
        given = json.dumps(kept["turns"]) + (kept["instructions"] or "")
        assert "are you back?" in given and "hello there" in given
        assert done().count("make build") == 1 and done().count("make install") == 1
