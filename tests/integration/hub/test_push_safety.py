"""The hub posts Web Push messages only to push services: a subscription cannot point it at
its own machine or network (by name, numeric trick, redirect or a name that resolves to a
private address), and what a push service replies is never shown back."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from lineup.hub.notify import vapid
from lineup.hub.notify.endpoints import PushPolicy
from lineup.hub.notify.push import PushSender
from lineup.store.notifications import Device
from tests.integration.hub.conftest import fast_settings
from tests.integration.hub.notify_endpoints import BrowserDevice, MailServer, PushService
from tests.integration.hub.test_notifications import (
    api,
    notify_settings,
    running_hub,
    start_story,
    subscribe,
    view,
)
from tests.support.waiting import until

REFUSED_ENDPOINTS = [
    "http://fcm.googleapis.com/fcm/send/abc",
    "https://0x7f000001/push/x",
    "https://localhost./push/x",
    f"https://{socket.gethostname()}/push/x",
    "https://100.64.0.1/push/x",
    "https://[::1]/push/x",
    "https://169.254.169.254/latest/meta-data",
]


@pytest.mark.parametrize("endpoint", REFUSED_ENDPOINTS)
def test_a_subscription_to_anything_but_a_push_service_is_refused(
    hub_database: str, tmp_path: Path, push_service: PushService, endpoint: str
) -> None:
    with running_hub(fast_settings(hub_database, tmp_path)) as hub:
        ana = hub.sign_up(name="Ana")
        sub = push_service.device("phone").subscription()
        sub["endpoint"] = endpoint
        response = api(ana, "POST", "/devices", sub)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_argument"
        assert error["details"] == {"field": "endpoint"}
        assert error["message"].startswith("A push endpoint")
        assert view(ana)["devices"] == []


def test_a_push_services_reply_is_reported_by_its_status_never_its_body(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    settings = notify_settings(hub_database, tmp_path, mail_server, notify_max_attempts=1)
    with running_hub(settings) as hub:
        story = start_story(hub)
        phone = push_service.device("phone")
        subscribe(story.person, phone)
        phone.answer(400, body="<html>internal admin panel: root password s3cr3t</html>")
        story.request()
        shown = until(
            lambda: (v := view(story.person))["devices"][0]["lastError"] and v,
            "the device's error shown",
        )
        error = shown["devices"][0]["lastError"]
        assert "400" in error
        assert "s3cr3t" not in str(shown) and "admin panel" not in str(shown)
        story.close()


def test_a_device_on_a_host_no_longer_allowed_is_never_posted_to(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    """A subscription saved while its host was allowed (or by an older hub) is checked again
    at every send: nothing reaches the address, and the device shows why."""
    with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
        ana = hub.sign_up(name="Ana")
        subscribe(ana, push_service.device("phone"))
    settings = notify_settings(hub_database, tmp_path, mail_server, push_hosts=())
    with running_hub(settings) as hub:
        ana.client = hub.client  # the session outlives the restart
        story = start_story(hub, ana)
        story.request()
        shown = until(
            lambda: (v := view(story.person))["devices"][0]["lastError"] and v,
            "the refusal shown",
        )
        assert shown["devices"][0]["lastError"].startswith("Not sent: A push endpoint")
        pushed = [n for n in shown["recent"] if n["channel"] == "push"]
        assert pushed[0]["status"] == "failed"  # refused for good, not retried
        story.close()
    assert push_service.received == []


def test_a_redirect_away_from_the_push_service_is_not_followed(
    hub_database: str, tmp_path: Path, push_service: PushService, mail_server: MailServer
) -> None:
    with PushService() as inside:
        target = inside.device("admin")
        with running_hub(notify_settings(hub_database, tmp_path, mail_server)) as hub:
            story = start_story(hub)
            phone = push_service.device("phone")
            subscribe(story.person, phone)
            phone.answer(307, location=target.endpoint.replace("127.0.0.1", "localhost"))
            story.request()
            shown = until(
                lambda: (v := view(story.person))["devices"][0]["lastError"] and v,
                "the refused redirect shown",
            )
            assert shown["devices"][0]["lastError"].startswith("Not sent:")
            story.close()
        assert inside.received == []


# --- the connect-time check, with the resolver's answers chosen by the test ---------------


class Resolver(AbstractResolver):
    """Answers every name with the given addresses, as a DNS server under attack might."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in self.addresses
        ]

    async def close(self) -> None:
        return None


def _device(browser: BrowserDevice, endpoint: str | None = None) -> Device:
    sub: dict[str, Any] = browser.subscription()
    return Device(
        "dev_1", "user_1", endpoint or sub["endpoint"], sub["keys"]["p256dh"],
        sub["keys"]["auth"], "phone", 0, None, None, None, None,
    )  # fmt: skip


@pytest.mark.parametrize("addresses", [("127.0.0.1",), ("142.250.74.106", "10.0.0.7"), ("::1",)])
async def test_a_push_service_name_resolving_to_a_private_address_is_not_connected_to(
    push_service: PushService, addresses: tuple[str, ...]
) -> None:
    resolver = Resolver(*addresses)
    sender = PushSender(
        vapid.new_keys(), "mailto:ops@example.test", PushPolicy(), resolver=resolver
    )
    endpoint = "https://updates.push.services.mozilla.com/wpush/v2/x"
    try:
        result = await sender.send(_device(push_service.device("phone"), endpoint), {}, tag="t")
    finally:
        await sender.close()
    assert resolver.asked == ["updates.push.services.mozilla.com"]
    assert result.outcome == "failed"
    assert result.error is not None and "not public" in result.error


async def test_a_host_the_operator_listed_may_resolve_to_a_private_address(
    push_service: PushService,
) -> None:
    port = push_service.url.rsplit(":", 1)[1]
    policy = PushPolicy(operator_hosts=("push.internal.test",), allow_http=True)
    sender = PushSender(
        vapid.new_keys(), "mailto:ops@example.test", policy, resolver=Resolver("127.0.0.1")
    )
    phone = push_service.device("phone")
    try:
        endpoint = f"http://push.internal.test:{port}/push/phone"
        result = await sender.send(_device(phone, endpoint), {"title": "hi"}, tag="t")
    finally:
        await sender.close()
    assert result.outcome == "delivered"
    assert push_service.delivered("phone")[0].payload == {"title": "hi"}
