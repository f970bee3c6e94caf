"""Notifications (seed 001 §5.1, §7.3, §7.4, §11): the right events reach people by
Web Push and email, once per person, channel and device; failures are retried, recorded and
shown; bodies carry no request details.

The push service and the mail server are real local servers (``notify_endpoints``): the push
service decrypts what it receives with the keys a browser would have made.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import Settings, create_app
from lineup.protocol import facts
from lineup.protocol.ids import new_id
from lineup.store import Store
from lineup.store import notifications as ns
from tests.integration.hub.conftest import fast_settings
from tests.integration.hub.notify_endpoints import BrowserDevice, MailServer, PushService
from tests.support.agents import AgentSocket
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.people import Person
from tests.support.waiting import until

SECRET_TITLE = "Drop the customers table in production"
SECRET_WHY = "Password hunter2 rotates tonight"
SECRET_DETAIL = "card-4242-4242-4242-4242"


def notify_settings(database_url: str, home: Path, mail: MailServer, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "smtp_host": "127.0.0.1",
        "smtp_port": mail.port,
        "smtp_tls": "none",
        "smtp_from": "LineUp <lineup@example.test>",
        "vapid_subject": "mailto:ops@example.test",
        "push_allow_http": True,
        "push_hosts": ("127.0.0.1",),  # the local push service
        "notify_interval": 0.05,
        "notify_retry_base": 0.05,
        "notify_retry_max": 0.2,
    }
    return fast_settings(database_url, home, **{**values, **extra})


@contextmanager
def running_hub(settings: Settings, clock: Any = None) -> Iterator[HubClient]:
    app = create_app(settings) if clock is None else create_app(settings, clock=clock)
    with TestClient(app, base_url="http://testserver") as client:
        hub = HubClient(client)
        hub.open_agents = []  # type: ignore[attr-defined]
        try:
            yield hub
        finally:
            # An open agent socket would keep the app from shutting down after a failure.
            for socket in hub.open_agents:  # type: ignore[attr-defined]
                with suppress(Exception):
                    socket.close()


@dataclass
class Story:
    hub: HubClient
    person: Person
    agent: AgentSocket
    agent_socket: ExitStack
    task_id: str

    def request(self, kind: str = "approval", interaction_id: str | None = None) -> str:
        interaction_id = interaction_id or new_id("int")
        interaction: dict[str, Any] = {
            "id": interaction_id,
            "type": kind,
            "title": SECRET_TITLE,
            "why": SECRET_WHY,
            "impact": "Everything is gone.",
            "details": {"card": SECRET_DETAIL},
        }
        if kind == "choice":
            interaction["options"] = [
                {"id": "a", "label": "Region A"},
                {"id": "b", "label": "Region B"},
            ]
        answer = self.agent.call(
            "interaction.requested", {"interaction": interaction}, taskId=self.task_id
        )
        assert answer["type"] == "ack", answer
        return interaction_id

    def close(self) -> None:
        self.hub.open_agents.remove(self.agent_socket)  # type: ignore[attr-defined]
        self.agent_socket.close()


def api(person: Person, method: str, path: str, body: Any = None) -> Any:
    person._use()
    return person.client.request(
        method, f"/api/notifications{path}", json=body, headers=person.headers()
    )


def subscribe(person: Person, device: BrowserDevice) -> dict[str, Any]:
    response = api(person, "POST", "/devices", device.subscription())
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


def start_story(hub: HubClient, person: Person | None = None) -> Story:
    person = person or hub.sign_up(name="Ana")
    credentials = hub.pair(person, "builder")
    socket = ExitStack()
    agent = socket.enter_context(hub.agent(credentials))
    hub.open_agents.append(socket)  # type: ignore[attr-defined]
    conversation = person.ok(
        person.post("/conversations", {"title": "Ship", "agentIds": [credentials["agentId"]]}), 201
    )
    posted = person.ok(
        person.post(
            f"/conversations/{conversation['id']}/messages",
            {"content": "Ship the release", "trackAsTask": True},
        ),
        201,
    )
    task_id = posted["taskId"]
    agent.next_of("task.assigned")
    assert agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["type"] == "ack"
    return Story(hub, person, agent, socket, task_id)


def view(person: Person) -> dict[str, Any]:
    response = api(person, "GET", "")
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def for_subject(received: list[Any], subject_id: str) -> list[Any]:
    return [r for r in received if r.payload and r.payload.get("subjectId") == subject_id]


# --- the right events, the right words ----------------------------------------------------


def test_an_interaction_request_reaches_the_person_by_push_and_email_without_its_details(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        subscribe(story.person, phone)
        interaction_id = story.request("approval")

        push = push_service.wait_for(
            lambda got: for_subject(got, interaction_id), "the push for the request"
        )[0]
        mail = mail_server.wait_for(lambda got: got[:1], "the email for the request")[0]

        assert push.vapid_ok, "the push is signed with the hub's VAPID key"
        assert push.headers["content-encoding"] == "aes128gcm"
        assert push.payload["title"] == "Waiting for you"
        assert push.payload["body"] == "builder asks for your approval."
        assert push.payload["url"].startswith("/inbox?")
        assert f"interaction={interaction_id}" in push.payload["url"]
        assert f"task={story.task_id}" in push.payload["url"]
        assert push.payload["tag"] == f"lineup:interaction:{interaction_id}"

        assert mail.recipients == [story.person.email]
        assert mail.message["Subject"] == "LineUp: Waiting for you"
        assert "builder asks for your approval." in mail.text
        assert f"http://127.0.0.1:8000/inbox?workspace={story.person.workspace_id}" in mail.text

        everything = json.dumps(push.payload) + mail.text + str(mail.message)
        for secret in (SECRET_TITLE, SECRET_WHY, SECRET_DETAIL, "Everything is gone"):
            assert secret not in everything

        settings_view = until(
            lambda: (
                (v := view(story.person))["devices"][0]["lastDeliveredAt"]
                and v["email"]["lastDeliveredAt"]
                and v
            ),
            "delivery recorded in Settings",
        )
        assert settings_view["devices"][0]["failingSince"] is None
        assert {n["status"] for n in settings_view["recent"]} == {"delivered"}
        assert {n["channel"] for n in settings_view["recent"]} == {"push", "email"}
        story.close()


def test_only_waiting_and_failed_notify_by_default(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        subscribe(story.person, phone)
        agent, task_id = story.agent, story.task_id
        # Progress, messages and a finished child task concern nobody's phone.
        agent.call("task.status_changed", {"status": "running", "progress": 40}, taskId=task_id)
        agent.call("message.create", {"content": "Working on it"}, taskId=task_id)
        child = agent.call(
            "task.child_created", {"parentTaskId": task_id, "title": "Build"}, taskId=task_id
        )
        assert child["type"] == "ack"
        # The task fails: that does.
        agent.call(
            "task.status_changed",
            {"status": "failed", "error": "The build broke: secret-token-123"},
            taskId=task_id,
        )
        failed = push_service.wait_for(lambda got: for_subject(got, task_id), "the failure push")
        assert [r.payload["kind"] for r in push_service.received] == ["failed"]
        assert failed[0].payload["title"] == "A task failed"
        assert failed[0].payload["body"] == "A task of builder failed."
        assert failed[0].payload["url"] == (
            f"/tasks/{task_id}?workspace={story.person.workspace_id}"
        )
        assert "secret-token-123" not in json.dumps(failed[0].payload)
        mail_server.wait_for(lambda got: got[:1], "the failure email")
        assert len(mail_server.mails) == 1
        story.close()


def test_a_failure_after_more_progress_reports_than_a_pass_looks_through_still_notifies(
    hub_database: str,
    tmp_path: Path,
    push_service: PushService,
    mail_server: MailServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pass passes over what cannot notify a window at a time (``SKIP_EVENTS``, made
    small here): woken by the failure, it goes on window after window until it reaches it
    (the interval, an hour here, would be too late)."""
    from lineup.hub.notify import worker

    monkeypatch.setattr(worker, "SKIP_EVENTS", 4)
    settings = notify_settings(hub_database, tmp_path, mail_server, notify_interval=3600)
    with running_hub(settings) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        subscribe(story.person, phone)
        agent, task_id = story.agent, story.task_id
        for progress in range(1, 15):
            report = {"status": "running", "progress": progress}
            assert agent.call("task.status_changed", report, taskId=task_id)["type"] == "ack"
        agent.call("task.status_changed", {"status": "failed", "error": "broke"}, taskId=task_id)
        push_service.wait_for(lambda got: for_subject(got, task_id), "the failure push")
        assert [r.payload["kind"] for r in push_service.received] == ["failed"]
        story.close()


def test_a_tool_call_that_asks_a_person_notifies_like_a_request(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        subscribe(story.person, push_service.device("phone"))
        call = {"call_id": "c1", "name": "confirm", "arguments": {"message": SECRET_TITLE}}
        assert story.agent.call("tool.call", call, taskId=story.task_id)["type"] == "ack"
        got = push_service.wait_for(
            lambda got: [r for r in got if r.payload and r.payload["subjectType"] == "tool_call"],
            "the tool-call push",
        )
        assert got[0].payload["body"] == "builder asks for your confirmation."
        assert "toolCall=" in got[0].payload["url"]
        assert SECRET_TITLE not in json.dumps(got[0].payload)
        story.close()


def test_an_agent_lost_while_working_notifies_as_failed(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    # The clock stands still: however slow the machine, the monitor never finds the agent
    # silent before its task runs; only the dropped connection takes it offline.
    settings = notify_settings(hub_database, tmp_path, mail_server)
    with running_hub(settings, clock=FakeClock()) as hub:
        story = start_story(hub)
        subscribe(story.person, push_service.device("phone"))
        story.close()  # the connection drops while the task runs
        got = push_service.wait_for(
            lambda got: [r for r in got if r.payload and r.payload["subjectType"] == "agent"],
            "the agent-unreachable push",
        )
        assert got[0].payload["title"] == "Agent unreachable"
        assert got[0].payload["body"] == "builder lost its connection while working on 1 task."


# --- exactly once -------------------------------------------------------------------------


def _reset_cursors(database_url: str) -> None:
    async def run() -> None:
        store = await Store.open(database_url)
        try:
            await store.write(lambda tx: tx.connection.execute(ns.notification_cursors.delete()))
        finally:
            await store.close()

    asyncio.run(run())


def test_exactly_one_notification_per_interaction_across_a_hub_restart(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    settings = notify_settings(hub_database, tmp_path, mail_server)
    phone = push_service.device("phone")
    with running_hub(settings) as hub:
        story = start_story(hub)
        subscribe(story.person, phone)
        first = story.request()
        push_service.wait_for(lambda got: for_subject(got, first), "the first push")
        mail_server.wait_for(lambda got: [m for m in got if first in m.text], "the first email")
        person = story.person
        story.close()
    # As if the hub died before it saved how far it had read: the next one reads it all again.
    _reset_cursors(hub_database)
    with running_hub(settings) as hub:
        again = HubClient(hub.client)
        person.client = again.client
        credentials = again.pair(person, "second")
        with again.agent(credentials) as agent:
            conversation = person.ok(
                person.post("/conversations", {"title": "t", "agentIds": [credentials["agentId"]]}),
                201,
            )
            marker = new_id("int")
            agent.call(
                "interaction.requested",
                {"interaction": {"id": marker, "type": "input", "title": "x"}},
                conversationId=conversation["id"],
            )
            push_service.wait_for(lambda got: for_subject(got, marker), "the push after restart")
            mail_server.wait_for(
                lambda got: [m for m in got if marker in m.text], "the email after restart"
            )
    # (The first agent's dropped connection also notified, as "agent unreachable".)
    asked = [
        r.payload["subjectId"] for r in push_service.received if r.payload["kind"] == "waiting"
    ]
    assert asked == [first, marker]
    waiting_mails = [
        m for m in mail_server.mails if m.message["Subject"] == "LineUp: Waiting for you"
    ]
    assert len(waiting_mails) == 2


async def test_two_workers_on_one_database_send_each_notification_once(
    database_url: str, tmp_path: Path, push_service: PushService
) -> None:
    """Two hub nodes (two stores, two workers, no lease) racing over the same outbox."""
    from lineup.hub import accounts
    from lineup.hub.notify import NotificationWorker
    from lineup.hub.state import HubState

    settings = fast_settings(
        database_url, tmp_path, push_allow_http=True, push_hosts=("127.0.0.1",), node_id="node"
    )
    stores = [await Store.open(database_url) for _ in range(2)]
    try:
        await stores[0].migrate()
        hubs = [HubState.create(settings, s) for s in stores]
        user, workspace_id = await accounts.sign_up(
            hubs[0], "ana@example.test", "correct horse battery staple", "Ana", None
        )
        devices = [push_service.device("phone"), push_service.device("laptop")]
        for device in devices:
            sub = device.subscription()
            await stores[0].write(
                lambda tx, sub=sub: ns.save_device(
                    tx.connection,
                    hubs[0].keyring,
                    user.id,
                    sub["endpoint"],
                    sub["keys"]["p256dh"],
                    sub["keys"]["auth"],
                    sub["label"],
                    1,
                )
            )
        agent_id = new_id("agent")

        def requests(w: Any) -> None:
            w.append(
                workspace_id,
                facts.AgentPairedPayload(agent_id=agent_id, name="builder"),
                actor="system",
            )
            for i in range(5):
                w.append(
                    workspace_id,
                    facts.InteractionRequestedPayload.model_validate(
                        {"interaction": {"id": f"int_{i}", "type": "approval", "title": "t"}}
                    ),
                    actor=f"agent:{agent_id}",
                )

        await hubs[0].recorder.run(requests)
        workers = [NotificationWorker(h) for h in hubs]
        for worker in workers:
            await worker.start()
        try:
            for _ in range(3):
                now = hubs[0].clock()
                await asyncio.gather(*(w.tick(now) for w in workers))
        finally:
            for worker in workers:
                await worker.stop()
        rows = await stores[1].read(lambda r: ns.list_notifications(r.connection))
    finally:
        for store in stores:
            await store.close()
    assert len(rows) == 10  # 5 requests x 2 devices
    assert {r.status for r in rows} == {"delivered"}
    per_device = {
        d.name: sorted(r.payload["subjectId"] for r in push_service.delivered(d.name))
        for d in devices
    }
    assert per_device == {d.name: [f"int_{i}" for i in range(5)] for d in devices}


async def test_the_database_refuses_a_second_notification_with_the_same_key(store: Store) -> None:
    from sqlalchemy import insert
    from sqlalchemy.exc import IntegrityError

    row = {
        "dedupe_key": ns.key_hash("k"),
        "user_id": "u",
        "workspace_id": "w",
        "channel": "push",
        "target": "d",
        "kind": "waiting",
        "subject_type": "interaction",
        "subject_id": "i",
        "event_id": None,
        "title": "t",
        "body": "b",
        "link": "/",
        "tag": "t",
        "attempts": 0,
        "next_attempt_at": 0,
        "created_at": 0,
        "updated_at": 0,
    }
    assert await store.write(lambda tx: ns.add_notification(tx.connection, dict(row))) is True
    assert await store.write(lambda tx: ns.add_notification(tx.connection, dict(row))) is False
    with pytest.raises(IntegrityError):
        await store.write(
            lambda tx: tx.connection.execute(
                insert(ns.notifications).values(id="ntf_dup", status="pending", **row)
            )
        )


# --- failures are retried, recorded and shown ---------------------------------------------


def test_a_rate_limited_or_unavailable_push_service_is_retried_until_delivered(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        subscribe(story.person, phone)
        phone.answer(429, retry_after="0")
        phone.answer(503)
        interaction_id = story.request()
        push_service.wait_for(
            lambda got: [r for r in for_subject(got, interaction_id) if r.status == 201],
            "the push to get through",
        )
        statuses = [r.status for r in for_subject(push_service.received, interaction_id)]
        assert statuses == [429, 503, 201]
        settings_view = until(
            lambda: (v := view(story.person))["devices"][0]["lastDeliveredAt"] and v,
            "the delivery recorded",
        )
        assert settings_view["devices"][0]["failingSince"] is None
        pushed = [n for n in settings_view["recent"] if n["channel"] == "push"]
        assert pushed[0]["status"] == "delivered"
        assert pushed[0]["attempts"] == 3
        story.close()

    async def attempts() -> list[ns.Attempt]:
        store = await Store.open(hub_database)
        try:
            return await store.read(lambda r: ns.list_attempts(r.connection, pushed[0]["id"]))
        finally:
            await store.close()

    outcomes = [(a.outcome, a.status_code) for a in asyncio.run(attempts())]
    assert outcomes == [("retry", 429), ("retry", 503), ("delivered", 201)]


def test_a_gone_subscription_is_removed_and_the_outcome_kept(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        device = subscribe(story.person, phone)
        phone.answer(410)
        interaction_id = story.request()
        push_service.wait_for(lambda got: for_subject(got, interaction_id), "the 410")
        settings_view = until(
            lambda: (v := view(story.person))["devices"] == [] and v, "the device removed"
        )
        pushed = [n for n in settings_view["recent"] if n["channel"] == "push"]
        assert pushed[0]["status"] == "expired"
        assert pushed[0]["target"] == device["id"]
        assert pushed[0]["targetLabel"] == "a removed device"
        assert "410" in pushed[0]["lastError"]
        story.close()


def test_a_broken_channel_shows_as_failing_in_settings(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    settings = notify_settings(hub_database, tmp_path, mail_server, notify_max_attempts=2)
    with running_hub(settings) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        subscribe(story.person, phone)
        phone.answer(403)  # the push service refuses the hub's signature
        mail_server.refuse("451 4.3.0 Try again later", "550 5.1.1 No such mailbox")
        story.request()
        settings_view = until(
            lambda: (
                (v := view(story.person))["devices"][0]["failingSince"]
                and v["email"]["failingSince"]
                and all(n["status"] == "failed" for n in v["recent"])
                and v
            ),
            "both channels reported failing",
        )
        assert "403" in settings_view["devices"][0]["lastError"]
        assert settings_view["devices"][0]["lastDeliveredAt"] is None
        assert "550" in settings_view["email"]["lastError"]
        assert mail_server.attempts == 2  # the 451 was retried; the 550 is final
        # A later success clears it.
        story.request()
        until(
            lambda: view(story.person)["devices"][0]["failingSince"] is None,
            "the device healthy again",
        )
        story.close()


# --- preferences --------------------------------------------------------------------------


def test_preferences_default_to_waiting_and_failed_and_can_be_changed(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        story = start_story(hub)
        person = story.person
        initial = view(person)
        assert initial["preferences"] == {
            "events": ["waiting", "failed"],
            "channels": ["push", "email", "browser"],
            "quietHours": None,
            "timeZone": "UTC",
        }
        assert initial["email"]["configured"] is True
        assert initial["vapidPublicKey"]

        bad = api(person, "PUT", "/preferences", {"events": ["everything"], "channels": []})
        assert bad.status_code == 400
        assert bad.json()["error"]["code"] == "invalid_argument"
        bad = api(
            person,
            "PUT",
            "/preferences",
            {"events": [], "channels": [], "timeZone": "Mars/Olympus"},
        )
        assert bad.status_code == 400

        # Email only, and task endings too.
        saved = api(
            person,
            "PUT",
            "/preferences",
            {"events": ["waiting", "done"], "channels": ["email"], "timeZone": "Europe/Berlin"},
        )
        assert saved.status_code == 200, saved.text
        assert saved.json()["preferences"]["events"] == ["waiting", "done"]
        subscribe(person, push_service.device("phone"))
        story.request()
        for status in ("running", "succeeded"):
            answer = story.agent.call(
                "task.status_changed", {"status": status}, taskId=story.task_id
            )
            assert answer["type"] == "ack", answer
        mails = mail_server.wait_for(lambda got: len(got) >= 2 and got, "two emails")
        assert sorted(m.message["Subject"] for m in mails) == [
            "LineUp: A task finished",
            "LineUp: Waiting for you",
        ]
        assert push_service.received == []
        story.close()


def test_quiet_hours_hold_a_notification_and_an_answered_request_is_not_sent_after(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    # 2027-01-15 22:30 in Berlin (21:30 UTC): inside 22:00–07:00.
    clock = FakeClock(1_800_000_000_000)
    clock.now = 1_800_000_000_000 - (1_800_000_000_000 % 86_400_000) + 21 * 3600_000 + 1800_000
    settings = notify_settings(hub_database, tmp_path, mail_server)
    with running_hub(settings, clock) as hub:
        story = start_story(hub)
        person = story.person
        subscribe(person, push_service.device("phone"))
        saved = api(
            person,
            "PUT",
            "/preferences",
            {
                "events": ["waiting", "failed"],
                "channels": ["push"],
                "quietHours": {"start": "22:00", "end": "07:00"},
                "timeZone": "Europe/Berlin",
            },
        )
        assert saved.status_code == 200, saved.text
        answered = story.request()
        kept = story.request("choice")
        held = until(
            lambda: (
                len(
                    h := [
                        n
                        for n in view(person)["recent"]
                        if (n["nextAttemptAt"] or "").endswith("T06:00:00.000Z")
                    ]
                )
                == 2
                and h
            ),
            "the notifications held",
        )
        assert len(held) == 2
        assert all(n["status"] == "pending" and n["attempts"] == 0 for n in held)
        assert held[0]["nextAttemptAt"].endswith("T06:00:00.000Z")  # 07:00 in Berlin
        response = person.post(
            f"/interactions/{answered}/respond", {"response": {"optionId": "approve"}}
        )
        assert response.status_code == 200, response.text

        clock.advance(9 * 3600)  # morning
        assert person.refresh().status_code == 200  # as the app does: a new access token
        push_service.wait_for(lambda got: for_subject(got, kept), "the morning push")

        def asked() -> list[dict[str, Any]]:
            return [n for n in view(person)["recent"] if "interaction=" in n["link"]]

        final = until(
            lambda: (v := asked()) and all(n["status"] != "pending" for n in v) and v,
            "both settled",
        )
        by_subject = {n["link"].split("interaction=")[1].split("&")[0]: n for n in final}
        assert by_subject[answered]["status"] == "skipped"
        assert "no longer waiting" in by_subject[answered]["lastError"]
        assert by_subject[kept]["status"] == "delivered"
        assert for_subject(push_service.received, answered) == []
        story.close()


# --- devices ------------------------------------------------------------------------------


def test_a_person_lists_and_removes_their_devices_and_nobody_else_can(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        ana = hub.sign_up(name="Ana")
        ben = hub.sign_up(name="Ben")
        phone = push_service.device("phone")
        first = subscribe(ana, phone)
        again = subscribe(ana, phone)  # the same browser subscribing again
        assert again["id"] == first["id"]
        laptop = subscribe(ana, push_service.device("laptop"))
        assert [d["label"] for d in view(ana)["devices"]] == ["phone", "laptop"]
        assert first["endpointOrigin"] == push_service.url

        assert api(ben, "DELETE", f"/devices/{laptop['id']}").status_code == 404
        assert api(ana, "DELETE", f"/devices/{laptop['id']}").status_code == 204
        assert api(ana, "DELETE", f"/devices/{laptop['id']}").status_code == 404
        assert [d["id"] for d in view(ana)["devices"]] == [first["id"]]
        assert view(ben)["devices"] == []

        broken = phone.subscription()
        broken["keys"]["p256dh"] = "AAAA"
        response = api(ana, "POST", "/devices", broken)
        assert response.status_code == 400
        assert response.json()["error"]["details"]["field"] == "keys.p256dh"

        # A test notification reaches every channel now.
        queued = api(ana, "POST", "/test").json()["queued"]
        assert queued == 2  # the phone and email
        push_service.wait_for(
            lambda got: [r for r in got if r.payload and r.payload["kind"] == "test"], "test push"
        )
        mail_server.wait_for(lambda got: got[:1], "test email")


def test_push_endpoints_must_be_public_https_by_default(
    hub_database: str, tmp_path: Path, push_service: PushService
) -> None:
    settings = fast_settings(hub_database, tmp_path)
    with running_hub(settings) as hub:
        ana = hub.sign_up(name="Ana")
        sub = push_service.device("phone").subscription()
        assert api(ana, "POST", "/devices", sub).status_code == 400
        sub["endpoint"] = "https://127.0.0.1/push/x"
        assert api(ana, "POST", "/devices", sub).status_code == 400
        sub["endpoint"] = "https://fcm.googleapis.com/fcm/send/abc"
        assert api(ana, "POST", "/devices", sub).status_code == 201
        assert view(ana)["email"]["configured"] is False
        assert ana.client.get("/api/notifications").status_code == 200
        ana.client.cookies.clear()
        assert ana.client.get("/api/notifications").status_code == 401
