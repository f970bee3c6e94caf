"""The notification worker: committed events in, one notification per person and channel out.

Two steps, each a writer transaction, so each is atomic across hub nodes
(``lineup.store.write_locks``):

1. **Produce.** Read each workspace's log after the persisted cursor, turn the events that
   matter into outbox rows (one per subject, person, channel and device, unique by
   ``dedupe_key``), and move the cursor — all in one transaction per workspace, which names
   it (its writers, on any node, wait for it; the others do not). A restart resumes
   from the cursor; a second node that runs the same pass finds the cursor moved and the keys
   taken. The store's commit listener only wakes the worker early; the log is what it reads.
2. **Deliver.** Claim due rows for a while (``claimed_until``), send them outside any
   transaction, then record the attempt's outcome: delivered; retried with backoff on 429,
   5xx and network trouble; expired (404/410 — the subscription is removed); failed for good
   otherwise, or after ``notify_max_attempts``. Each outcome also updates the channel's health
   (last delivered, failing since, last error) that Settings shows.

Quiet hours hold a notification until they end; one that is no longer relevant by then (the
request was answered, the agent came back) is skipped, and that is recorded too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from lineup.hub.config import Settings
from lineup.hub.notify import rules, vapid
from lineup.hub.notify.email import EmailSender, SmtpSettings
from lineup.hub.notify.endpoints import PushPolicy
from lineup.hub.notify.preferences import quiet_until
from lineup.hub.notify.push import PushSender, SendResult
from lineup.hub.state import HubState
from lineup.protocol.ids import new_id
from lineup.store import StoredEvent, WriteTx
from lineup.store import notifications as ns

log = logging.getLogger("lineup.hub.notify")

BATCH_EVENTS = 200
SKIP_EVENTS = 20_000
"""Events one pass looks through, in the database, for the next one that may notify."""
BATCH_WORKSPACES = 50
CLAIM_LIMIT = 32
CLAIM_LEASE_MS = 60_000
PARALLEL_SENDS = 16
STOP_GRACE_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class _Job:
    """A claimed notification and where it goes (a device or an email address)."""

    item: ns.Notification
    device: ns.Device | None = None
    email: str | None = None


def smtp_settings(hub: HubState) -> SmtpSettings | None:
    s = hub.settings
    if not s.smtp_host or not s.smtp_from:
        return None
    return SmtpSettings(
        host=s.smtp_host,
        port=s.smtp_port,
        username=s.smtp_username,
        password=s.smtp_password,
        tls=s.smtp_tls,
        sender=s.smtp_from,
    )


def vapid_subject(hub: HubState) -> str:
    """``LINEUP_VAPID_SUBJECT``; else the sender's address, the public https URL, or a
    placeholder (push services may ask for a real contact: set the variable)."""
    s = hub.settings
    if s.vapid_subject:
        return s.vapid_subject
    if s.smtp_from and "@" in s.smtp_from:
        return "mailto:" + s.smtp_from.split("<")[-1].strip(" >")
    if s.public_url and s.public_url.startswith("https://"):
        return s.public_url.rstrip("/")
    return "mailto:admin@lineup.invalid"


def push_policy(settings: Settings) -> PushPolicy:
    return PushPolicy(operator_hosts=settings.push_hosts, allow_http=settings.push_allow_http)


class NotificationWorker:
    def __init__(self, hub: HubState) -> None:
        self.hub = hub
        self.settings = hub.settings
        # Unique per process: two processes configured with the same node id never mistake
        # each other's claims for their own.
        self.node = f"{hub.settings.node_id}/{new_id('nw')}"
        smtp = smtp_settings(hub)
        self.email: EmailSender | None = EmailSender(smtp) if smtp else None
        self.push: PushSender | None = None
        self.vapid_public_key: str | None = None
        self._wake = asyncio.Event()
        self._unlisten: Any = None
        self._next_due_ms: int | None = None
        self._inflight: set[asyncio.Future[None]] = set()

    # --- life --------------------------------------------------------------------------

    async def start(self) -> None:
        keys = await vapid.load_or_create(self.hub.store, self.hub.keyring, self.hub.clock())
        self.vapid_public_key = keys.public_key
        self.push = PushSender(keys, vapid_subject(self.hub), push_policy(self.hub.settings))
        self._unlisten = self.hub.store.add_commit_listener(self._on_commit)

    async def stop(self) -> None:
        if self._unlisten is not None:
            with contextlib.suppress(ValueError):
                self._unlisten()
            self._unlisten = None
        if self._inflight:
            await asyncio.wait(list(self._inflight), timeout=STOP_GRACE_SECONDS)
        if self.push is not None:
            await self.push.close()
        try:
            # Whatever was claimed but not finished is due again now, for whichever node.
            await self.hub.store.write(lambda tx: ns.release_claims(tx.connection, self.node))
        except Exception:
            log.warning("could not release notification claims; they expire by themselves")

    def wake(self) -> None:
        self._wake.set()

    def _on_commit(self, events: Sequence[StoredEvent]) -> None:
        if any(rules.may_notify(e) for e in events):
            self._wake.set()

    async def run(self) -> None:
        """Produce and deliver until cancelled; woken by commits, else every interval."""
        interval = self.settings.notify_interval
        while self.push is None:
            try:
                await self.start()
            except Exception:
                log.exception("notifications could not start; trying again")
                await asyncio.sleep(interval)
        try:
            while True:
                self._wake.clear()
                try:
                    await self.tick(self.hub.clock())
                except Exception:
                    log.exception("notification pass failed")
                timeout = interval
                if self._next_due_ms is not None:
                    due_in = (self._next_due_ms - self.hub.clock()) / 1000
                    timeout = min(interval, max(0.0, due_in))
                # Not ``asyncio.wait_for``: on Python 3.11 it can swallow a cancellation that
                # arrives as the wait ends, and the hub would never stop this task.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._wake.wait()
        finally:
            await self.stop()

    async def tick(self, now_ms: int) -> None:
        await self.produce(now_ms)
        await self.deliver_due(now_ms)

    # --- 1. produce --------------------------------------------------------------------

    async def produce(self, now_ms: int) -> int:
        """Turn unread events into outbox rows; returns how many rows were queued."""
        total = 0
        while True:
            behind = await self.hub.store.read(
                lambda r: ns.workspaces_behind(r.connection, BATCH_WORKSPACES)
            )
            if not behind:
                return total
            # One job per workspace: each waits only for that workspace's writers (and rides
            # in their batches), never for the whole cluster.
            passes = await asyncio.gather(
                *(
                    self.hub.store.write(
                        partial(self._produce_job, now_ms=now_ms, named=[workspace_id]),
                        workspace=workspace_id,
                    )
                    for workspace_id, *_ in behind
                )
            )
            total += sum(created for created, _ in passes)
            more = any(more for _, more in passes)
            if not more and len(behind) < BATCH_WORKSPACES:
                return total

    def _produce_job(self, tx: WriteTx, *, now_ms: int, named: list[str]) -> tuple[int, bool]:
        conn = tx.connection
        created = 0
        more = False
        # Read again under the workspaces' locks: this is what makes a pass once-only.
        behind = ns.workspaces_behind(conn, BATCH_WORKSPACES, among=named)
        for workspace_id, cursor, last in behind:
            until = min(last, cursor + SKIP_EVENTS)
            first = ns.first_that_may_notify(
                conn,
                workspace_id,
                cursor,
                until,
                types=rules.WATCHED,
                statuses=rules.NOTIFYING_STATUSES,
            )
            if first is None:  # nothing up to ``until`` can notify
                ns.set_cursor(conn, workspace_id, until, now_ms)
                more = more or until < last
                continue
            events = tx.read_events(workspace_id, after=first - 1, limit=BATCH_EVENTS)
            if len(events) == BATCH_EVENTS:
                more = True
            audience: _Audience | None = None
            for event in events:
                notices = rules.notices_for(event, tx)
                if not notices:
                    continue
                if audience is None:  # read once per workspace: nothing here changes it
                    audience = _Audience.read(conn, workspace_id)
                for notice in notices:
                    created += self._queue(conn, workspace_id, event, notice, audience, now_ms)
            if events:
                ns.set_cursor(conn, workspace_id, events[-1].sequence, now_ms)
        return created, more

    def _queue(
        self,
        conn: Any,
        workspace_id: str,
        event: StoredEvent,
        notice: rules.Notice,
        audience: _Audience,
        now_ms: int,
    ) -> int:
        prefs, devices = audience.preferences, audience.devices
        created = 0
        for person in audience.people:
            chosen = prefs.get(person.user_id) or ns.default_preferences(person.user_id)
            if notice.kind not in chosen.events:
                continue
            targets: list[tuple[str, str]] = []
            if "push" in chosen.channels:
                targets += [("push", d) for d in devices.get(person.user_id, [])]
            if "email" in chosen.channels and self.email is not None:
                targets.append(("email", ns.EMAIL_TARGET))
            for channel, target in targets:
                created += ns.add_notification(
                    conn,
                    {
                        "dedupe_key": ns.key_hash(notice.key, person.user_id, channel, target),
                        "user_id": person.user_id,
                        "workspace_id": workspace_id,
                        "channel": channel,
                        "target": target,
                        "kind": notice.kind,
                        "subject_type": notice.subject_type,
                        "subject_id": notice.subject_id,
                        "event_id": event.id,
                        "title": notice.title,
                        "body": notice.body,
                        "link": notice.link,
                        "tag": notice.tag,
                        "attempts": 0,
                        "next_attempt_at": now_ms,
                        "created_at": now_ms,
                        "updated_at": now_ms,
                    },
                )
        return created

    # --- 2. deliver --------------------------------------------------------------------

    async def deliver_due(self, now_ms: int) -> int:
        """Claim what is due, send it, record each outcome; returns how many were sent."""
        sent = 0
        while True:
            # A read first: the claim is a job that runs alone in the cluster, and a tick
            # (one per commit under load) mostly finds nothing due.
            due = await self.hub.store.read(
                lambda r: r.connection.execute(ns.next_due_statement(now_ms)).scalar()
            )
            if due is None or due > now_ms:
                self._next_due_ms = due
                return sent
            jobs, next_due = await self.hub.store.write(lambda tx: self._claim_job(tx, now_ms))
            self._next_due_ms = next_due
            if not jobs:
                return sent
            gate = asyncio.Semaphore(PARALLEL_SENDS)

            async def one(job: _Job, gate: asyncio.Semaphore = gate) -> None:
                async with gate:
                    result = await self._send(job)
                await self._record(job.item, result)

            # Shielded: a stopping hub lets sends in flight finish and be recorded (``stop``),
            # rather than leave a sent notification looking unsent.
            tasks = [asyncio.ensure_future(one(job)) for job in jobs]
            self._inflight.update(tasks)
            for task in tasks:
                task.add_done_callback(self._inflight.discard)
            await asyncio.shield(asyncio.gather(*tasks))
            sent += len(jobs)
            if len(jobs) < CLAIM_LIMIT:
                return sent

    def _claim_job(self, tx: WriteTx, now_ms: int) -> tuple[list[_Job], int | None]:
        conn = tx.connection
        claimed = ns.claim_due(conn, self.node, now_ms, CLAIM_LEASE_MS, CLAIM_LIMIT)
        prefs = ns.get_preferences(conn, list({c.user_id for c in claimed}))
        jobs: list[_Job] = []
        for item in claimed:
            chosen = prefs.get(item.user_id) or ns.default_preferences(item.user_id)
            skip = self._stale(tx, item, chosen)
            if skip is not None:
                ns.record_attempt(conn, item, self.node, ns.Outcome("skipped", error=skip), now_ms)
                continue
            until = None if item.kind == "test" else quiet_until(chosen, now_ms)
            if until is not None:
                ns.hold(conn, item.id, self.node, until, now_ms)
                continue
            if item.channel == "push":
                device = ns.get_device(conn, self.hub.keyring, item.target)
                assert device is not None  # _stale checked
                jobs.append(_Job(item, device=device))
            else:
                user = tx.get_user(item.user_id)
                assert user is not None  # _stale checked
                jobs.append(_Job(item, email=user.email))
        next_due = conn.execute(ns.next_due_statement(now_ms)).scalar_one_or_none()
        return jobs, next_due

    def _stale(self, tx: WriteTx, item: ns.Notification, prefs: ns.Preferences) -> str | None:
        """Why this notification should no longer go out, if it should not."""
        if item.kind == "test":  # asked for from Settings: every channel, now
            if item.channel == "push" and not ns.device_exists(tx.connection, item.target):
                return "the device was removed"
            if item.channel == "email" and self.email is None:
                return "email is not set up on this hub"
            return None
        if item.kind not in prefs.events or item.channel not in prefs.channels:
            return "turned off in the person's notification settings"
        if item.channel == "push" and not ns.device_exists(tx.connection, item.target):
            return "the device was removed"
        if item.channel == "email" and (self.email is None or tx.get_user(item.user_id) is None):
            return "email is not set up on this hub"
        if item.subject_type == "interaction":
            row = tx.get_interaction(item.workspace_id, item.subject_id)
            if row is not None and row.status != "requested":
                return f"no longer waiting: the request was {row.status}"
        if item.subject_type == "tool_call":
            call = tx.get_tool_call(item.workspace_id, item.subject_id)
            if call is not None and call.status != "pending":
                return f"no longer waiting: the tool call was {call.status}"
        if item.subject_type == "agent":
            agent = tx.get_agent(item.workspace_id, item.subject_id)
            if agent is not None and agent.status == "online":
                return "the agent is back online"
        if tx.get_membership(item.workspace_id, item.user_id) is None:
            return "no longer a member of the workspace"
        return None

    async def _send(self, job: _Job) -> SendResult:
        item = job.item
        try:
            if job.device is not None:
                assert self.push is not None
                return await self.push.send(job.device, self.push_payload(item), tag=item.tag)
            assert self.email is not None and job.email is not None
            message = self.email.message(
                job.email,
                f"LineUp: {item.title}",
                item.body,
                self.settings.base_url.rstrip("/") + item.link,
                item.dedupe_key,
                self.hub.clock() / 1000,
            )
            return await self.email.send(message)
        except Exception as exc:  # a bug or an unexpected library error: keep it visible
            log.exception("sending notification %s failed", item.id)
            return SendResult("retry", None, f"could not send: {type(exc).__name__}")

    @staticmethod
    def push_payload(item: ns.Notification) -> dict[str, Any]:
        """What the service worker gets (encrypted for the device): no request details."""
        return {
            "title": item.title,
            "body": item.body,
            "url": item.link,
            "tag": item.tag,
            "kind": item.kind,
            "workspaceId": item.workspace_id,
            "subjectType": item.subject_type,
            "subjectId": item.subject_id,
            "notificationId": item.id,
        }

    async def _record(self, item: ns.Notification, result: SendResult) -> None:
        now_ms = self.hub.clock()
        outcome = ns.Outcome(result.outcome, result.status_code, result.error)
        if result.outcome == "retry":
            attempt = item.attempts + 1
            if attempt >= self.settings.notify_max_attempts:
                error = f"gave up after {attempt} attempts: {result.error}"
                outcome = ns.Outcome("failed", result.status_code, error)
            else:
                delay = min(
                    self.settings.notify_retry_max,
                    self.settings.notify_retry_base * 2 ** (attempt - 1),
                )
                delay = max(delay, min(result.retry_after_s or 0.0, self.settings.notify_retry_max))
                outcome = ns.Outcome(
                    "retry", result.status_code, result.error, now_ms + int(delay * 1000)
                )
        if result.outcome in ("failed", "expired") or outcome.outcome == "failed":
            log.warning(
                "notification %s (%s) %s: %s", item.id, item.channel, outcome.outcome, outcome.error
            )
        try:
            await self.hub.store.write(
                lambda tx: ns.record_attempt(tx.connection, item, self.node, outcome, now_ms)
            )
        except Exception:
            # The claim expires and the notification is tried again: never silently dropped.
            log.exception("could not record the outcome of notification %s", item.id)
        if outcome.retry_at is not None and (
            self._next_due_ms is None or outcome.retry_at < self._next_due_ms
        ):
            self._next_due_ms = outcome.retry_at


@dataclass(frozen=True)
class _Audience:
    """Who in a workspace may be told, with their preferences and devices."""

    people: list[ns.Recipient]
    preferences: dict[str, ns.Preferences]
    devices: dict[str, list[str]]
    """Each person's device ids."""

    @classmethod
    def read(cls, conn: Any, workspace_id: str) -> _Audience:
        people = ns.workspace_people(conn, workspace_id)
        ids = [p.user_id for p in people]
        devices: dict[str, list[str]] = {}
        for user_id, device_id in ns.device_ids(conn, ids):
            devices.setdefault(user_id, []).append(device_id)
        return cls(people, ns.get_preferences(conn, ids), devices)
