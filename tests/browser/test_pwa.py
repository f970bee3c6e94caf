"""The installable app: a valid manifest, a service worker that registers and takes
over, and an app shell that opens offline with the last known inbox and an offline banner."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, Hub, HubProcess, screenshot, start_task


def test_the_app_installs_and_opens_offline_with_the_last_known_inbox(
    hub_process: HubProcess, new_context: Any, make_person: Any
) -> None:
    own_hub = Hub(hub_process.url, hub_process.log, hub_process.home)
    person = make_person("Ana", on=own_hub)
    agent = person.pair_agent("builder")
    started = start_task(person, agent)
    context = new_context(viewport=PHONE, person=person)
    page = context.new_page()

    page.goto("/inbox")
    card = page.locator(f"[data-interaction-id='{started.interaction_id}']")
    expect(card.get_by_role("heading", name="Install 3 development dependencies?")).to_be_visible()

    # The manifest: what a phone needs to put LineUp on its home screen.
    href = page.locator("link[rel=manifest]").get_attribute("href")
    assert href == "/manifest.webmanifest"
    manifest = page.evaluate(
        "async (href) => { const r = await fetch(href); return [r.status, await r.text()]; }",
        href,
    )
    assert manifest[0] == 200
    body = json.loads(manifest[1])
    assert body["name"] == "LineUp"
    assert body["short_name"] == "LineUp"
    assert body["start_url"] == "/inbox"
    assert body["display"] == "standalone"
    sizes = {icon["sizes"] for icon in body["icons"] if icon["type"] == "image/png"}
    assert {"192x192", "512x512"} <= sizes
    assert any(icon.get("purpose") == "maskable" for icon in body["icons"])
    for icon in body["icons"]:
        status, kind = page.evaluate(
            "async (src) => { const r = await fetch(src); "
            "return [r.status, r.headers.get('content-type')]; }",
            icon["src"],
        )
        assert status == 200, icon
        assert kind.startswith(icon["type"]), (icon, kind)

    # The service worker registers for the whole app and takes over this page.
    script = page.evaluate(
        "async () => (await navigator.serviceWorker.ready).active.scriptURL", None
    )
    assert script == f"{hub_process.url}/sw.js"
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    # It keeps the inbox's last answer (fetched once through it when it took over).
    page.wait_for_function(
        "async (ws) => !!(await caches.match(`/api/workspaces/${ws}/inbox`))",
        arg=person.workspace_id,
        polling=100,
    )

    # The hub goes away and so does the network: the app still opens.
    agent.disconnect()
    hub_process.stop()
    context.set_offline(True)
    page.reload()
    expect(page.get_by_test_id("offline-banner")).to_be_visible()
    expect(page.get_by_test_id("offline-banner")).to_contain_text("You are offline")
    expect(page.get_by_role("heading", name="Inbox", exact=True)).to_be_visible()
    expect(card.get_by_role("heading", name="Install 3 development dependencies?")).to_be_visible()
    screenshot(page, "phone-offline-inbox")


def test_settings_show_notification_preferences_and_save_them(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    page = new_context(person=person).new_page()
    page.goto("/settings")
    when = page.get_by_role("group", name="Tell me when")
    expect(
        when.get_by_role("checkbox", name="An agent is waiting for you", exact=False)
    ).to_be_checked()
    expect(when.get_by_role("checkbox", name="A task finished")).not_to_be_checked()
    expect(page.locator("[data-channel=email]")).to_contain_text("Not set up on this hub")
    when.get_by_role("checkbox", name="A task finished").check()
    page.get_by_role("checkbox", name="Quiet hours", exact=False).check()
    page.get_by_role("button", name="Save notification settings").click()
    expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    saved = person.client.get("/api/notifications").json()["preferences"]
    assert saved["events"] == ["waiting", "failed", "done"]
    assert saved["quietHours"] == {"start": "22:00", "end": "07:00"}
    screenshot(page, "settings-notifications")
