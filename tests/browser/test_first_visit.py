"""The first visit to a new hub, and the Settings a person uses to guard their account."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, expect

from tests.browser.conftest import HubProcess

PASSWORD = "correct horse battery"


def test_a_new_hub_opens_on_create_account_and_settings_change_the_password(
    browser: Browser, hub_process: HubProcess
) -> None:
    context = browser.new_context(base_url=hub_process.url)
    try:
        page = context.new_page()
        page.goto("/")
        expect(page).to_have_url(re.compile(r"/signup$"))
        expect(page.get_by_role("heading", name="Create your account")).to_be_visible()
        page.get_by_label("Display name").fill("Ana")
        page.get_by_label("Email").fill("ana@example.test")
        page.get_by_label("Password").fill("password")
        page.get_by_role("button", name="Create account").click()
        expect(page.get_by_role("alert")).to_contain_text("That password is too easy to guess.")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Create account").click()
        expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()

        page.goto("/settings")
        page.get_by_label("Current password").fill(PASSWORD)
        page.get_by_label("New password").fill("purple tractor umbrella")
        page.get_by_role("button", name="Change password").click()
        expect(page.get_by_text("Password changed.")).to_be_visible()
        page.get_by_role("button", name="Make an invitation").click()
        expect(page.get_by_test_id("new-invitation")).to_contain_text("/signup?invite=")
    finally:
        context.close()
