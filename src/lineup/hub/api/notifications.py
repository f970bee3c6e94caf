"""A person's notifications: preferences, devices (Web Push subscriptions), delivery health and
a test notification. Everything here belongs to the signed-in person, across workspaces."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Path, Response
from pydantic import Field

from lineup.hub.api import responses
from lineup.hub.api.deps import Body, Hub, SignedInUser
from lineup.hub.api.openapi import answers
from lineup.hub.notify import preferences as prefs_rules
from lineup.hub.notify.endpoints import EndpointRefused
from lineup.hub.notify.worker import push_policy, smtp_settings
from lineup.hub.state import HubState
from lineup.protocol.errors import InvalidArgument, NotFound
from lineup.protocol.ids import new_id
from lineup.protocol.times import iso
from lineup.store import notifications as ns

router = APIRouter(prefix="/api/notifications", tags=["notifications"])

MAX_DEVICES = 20


class QuietHours(Body):
    start: Annotated[str, Field(max_length=5)]
    end: Annotated[str, Field(max_length=5)]


class PreferencesBody(Body):
    events: Annotated[list[str], Field(max_length=10)]
    channels: Annotated[list[str], Field(max_length=10)]
    quiet_hours: QuietHours | None = None
    time_zone: Annotated[str, Field(min_length=1, max_length=64)] = "UTC"


class SubscriptionKeys(Body):
    p256dh: Annotated[str, Field(min_length=1, max_length=255)]
    auth: Annotated[str, Field(min_length=1, max_length=255)]


class DeviceBody(Body):
    """A browser's ``PushSubscription.toJSON()`` plus a name for the device."""

    endpoint: Annotated[str, Field(min_length=1, max_length=2048)]
    keys: SubscriptionKeys
    label: Annotated[str, Field(max_length=100)] = ""


_B64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")


def _b64url(value: str, field: str) -> bytes:
    """Strict: the decoder alone skips stray characters, and what is stored must stay the
    size of the key it holds (it is sealed into a bounded column)."""
    try:
        if not _B64URL.fullmatch(value):
            raise ValueError("not base64url")
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidArgument(
            "That is not a browser push subscription.", details={"field": field}
        ) from exc


def _check_subscription(hub: HubState, body: DeviceBody) -> None:
    try:
        push_policy(hub.settings).check(body.endpoint)
    except EndpointRefused as refused:
        raise InvalidArgument(str(refused), details={"field": "endpoint"}) from None
    key = _b64url(body.keys.p256dh, "keys.p256dh")
    if len(key) != 65 or key[0] != 4:
        raise InvalidArgument(
            "keys.p256dh must be an uncompressed P-256 public key.",
            details={"field": "keys.p256dh"},
        )
    if len(_b64url(body.keys.auth, "keys.auth")) != 16:
        raise InvalidArgument("keys.auth must be a 16-byte secret.", details={"field": "keys.auth"})


def _device(d: ns.Device) -> dict[str, Any]:
    return {
        "id": d.id,
        "label": d.label,
        "endpointOrigin": f"{urlsplit(d.endpoint).scheme}://{urlsplit(d.endpoint).netloc}",
        "createdAt": iso(d.created_at),
        "lastAttemptAt": iso(d.last_attempt_at),
        "lastDeliveredAt": iso(d.last_delivered_at),
        "failingSince": iso(d.failing_since),
        "lastError": d.last_error,
    }


def _notification(n: ns.Notification, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "id": n.id,
        "kind": n.kind,
        "channel": n.channel,
        "target": n.target,
        "targetLabel": labels.get(n.target, "a removed device" if n.channel == "push" else "email"),
        "title": n.title,
        "body": n.body,
        "link": n.link,
        "status": n.status,
        "attempts": n.attempts,
        "createdAt": iso(n.created_at),
        "deliveredAt": iso(n.delivered_at),
        "nextAttemptAt": iso(n.next_attempt_at) if n.status == ns.PENDING else None,
        "lastError": n.last_error,
    }


def _preferences(p: ns.Preferences) -> dict[str, Any]:
    quiet = None
    if p.quiet_start is not None and p.quiet_end is not None:
        quiet = {"start": p.quiet_start, "end": p.quiet_end}
    return {
        "events": list(p.events),
        "channels": list(p.channels),
        "quietHours": quiet,
        "timeZone": p.time_zone,
    }


async def notifications_view(hub: HubState, user_id: str) -> dict[str, Any]:
    def read(r: Any) -> dict[str, Any]:
        conn = r.connection
        user = r.get_user(user_id)
        stored = ns.get_preferences(conn, [user_id]).get(user_id)
        chosen = stored or ns.default_preferences(user_id)
        devices = ns.list_devices(conn, hub.keyring, [user_id])
        recent = ns.recent_notifications(conn, user_id, limit=20)
        public_key = ns.vapid_public_key(conn)
        labels = {d.id: d.label for d in devices}
        labels[ns.EMAIL_TARGET] = "email"
        return {
            "vapidPublicKey": public_key,
            "preferences": _preferences(chosen),
            "options": {
                "events": [{"id": k, "label": v} for k, v in prefs_rules.EVENTS.items()],
                "channels": [{"id": k, "label": v} for k, v in prefs_rules.CHANNELS.items()],
            },
            "email": {
                "configured": smtp_settings(hub) is not None,
                "address": user.email if user else None,
                "lastAttemptAt": iso(chosen.email_last_attempt_at),
                "lastDeliveredAt": iso(chosen.email_last_delivered_at),
                "failingSince": iso(chosen.email_failing_since),
                "lastError": chosen.email_last_error,
            },
            "devices": [_device(d) for d in devices],
            "recent": [_notification(n, labels) for n in recent],
        }

    return await hub.store.read(read)


@router.get("", **answers(responses.Notifications, 401))
async def get_notifications(hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    """Preferences, devices, email, the latest notifications and how each delivery went."""
    return await notifications_view(hub, signed.user.id)


@router.put("/preferences", **answers(responses.Notifications, 400, 401, 403, 413))
async def save_preferences(body: PreferencesBody, hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    """Replace the person's preferences: events, channels, quiet hours and time zone."""
    chosen = prefs_rules.validated(
        signed.user.id,
        body.events,
        body.channels,
        body.quiet_hours.start if body.quiet_hours else None,
        body.quiet_hours.end if body.quiet_hours else None,
        body.time_zone,
    )
    now = hub.clock()
    await hub.store.write(lambda tx: ns.save_preferences(tx.connection, chosen, now))
    return await notifications_view(hub, signed.user.id)


@router.post("/devices", status_code=201, **answers(responses.PushDevice, 400, 401, 403, 413))
async def add_device(body: DeviceBody, hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    """Subscribe this device (its browser's push subscription). The same subscription again
    updates the device instead of adding a second one."""
    _check_subscription(hub, body)
    label = body.label.strip() or "A browser"
    now = hub.clock()
    user_id = signed.user.id

    def job(tx: Any) -> ns.Device:
        owned = ns.list_devices(tx.connection, hub.keyring, [user_id])
        same = ns.key_hash(body.endpoint)
        if len(owned) >= MAX_DEVICES and all(ns.key_hash(d.endpoint) != same for d in owned):
            raise InvalidArgument(
                f"You can subscribe at most {MAX_DEVICES} devices; remove one first."
            )
        return ns.save_device(
            tx.connection,
            hub.keyring,
            user_id,
            body.endpoint,
            body.keys.p256dh,
            body.keys.auth,
            label,
            now,
        )

    device = await hub.store.write(job)
    return _device(device)


@router.delete("/devices/{device_id}", status_code=204, **answers(None, 400, 401, 403, 404))
async def remove_device(
    hub: Hub, signed: SignedInUser, device_id: Annotated[str, Path(max_length=64)]
) -> Response:
    removed = await hub.store.write(
        lambda tx: ns.remove_device(tx.connection, signed.user.id, device_id)
    )
    if not removed:
        raise NotFound("You have no device with that id.", details={"deviceId": device_id})
    return Response(status_code=204)


@router.post("/test", status_code=202, **answers(responses.Queued, 401, 403))
async def send_test(hub: Hub, signed: SignedInUser) -> dict[str, Any]:
    """Send a test notification to each of the person's devices and their email now."""
    now = hub.clock()
    user_id = signed.user.id
    email_on = smtp_settings(hub) is not None
    test_id = new_id("test")

    def job(tx: Any) -> int:
        conn = tx.connection
        chosen = ns.get_preferences(conn, [user_id]).get(user_id) or ns.default_preferences(user_id)
        targets = [("push", d) for _, d in ns.device_ids(conn, [user_id])]
        if email_on and "email" in chosen.channels:
            targets.append(("email", ns.EMAIL_TARGET))
        for channel, target in targets:
            ns.add_notification(
                conn,
                {
                    "dedupe_key": ns.key_hash("test", test_id, user_id, channel, target),
                    "user_id": user_id,
                    "workspace_id": "",
                    "channel": channel,
                    "target": target,
                    "kind": "test",
                    "subject_type": "test",
                    "subject_id": test_id,
                    "event_id": None,
                    "title": "Test notification",
                    "body": "LineUp can reach you here.",
                    "link": "/settings",
                    "tag": f"lineup:test:{test_id}",
                    "attempts": 0,
                    "next_attempt_at": now,
                    "created_at": now,
                    "updated_at": now,
                },
            )
        return len(targets)

    queued = await hub.store.write(job)
    if hub.notifier is not None:
        hub.notifier.wake()
    return {"queued": queued}
