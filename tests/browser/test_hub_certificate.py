"""Settings → This hub shows the certificate a TLS hub serves: a person who accepted the
browser's warning for a self-signed hub compares its fingerprint there, and copies it for
agents; Connect my agent says its command pins it. Against a real `lineup serve
--tls-self-signed`."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from lineup.hub.tls import certificate_fingerprint
from tests.browser.conftest import DESKTOP, PHONE, axe_violations, screenshot
from tests.e2e.processes import HubProcess
from tests.support.people import Person


@pytest.fixture
def tls_hub(tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path / "hub", None, tls=True)
    process.home.mkdir()
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_settings_show_the_self_signed_hubs_fingerprint_to_compare_and_pin(
    tls_hub: HubProcess, browser: Browser, viewport: dict[str, int]
):
    fingerprint = certificate_fingerprint(tls_hub.certificate)
    trusting = ssl.create_default_context(cafile=str(tls_hub.certificate))
    ana = Person.at(tls_hub.url, "ana@example.test", verify=trusting)
    # the person accepted the browser's warning about the self-signed certificate
    context = browser.new_context(
        base_url=tls_hub.url, viewport=viewport, ignore_https_errors=True, locale="en-GB"
    )
    try:
        context.add_cookies(
            [{"name": k, "value": v, "url": tls_hub.url} for k, v in ana.cookies().items()]
        )
        page = context.new_page()
        page.goto("/settings")
        card = page.get_by_test_id("hub-certificate")
        expect(card.get_by_role("heading", name="This hub")).to_be_visible()
        expect(card).to_contain_text("Self-signed by the hub")
        expect(card).to_contain_text(f"wss://127.0.0.1:{tls_hub.port}/ws/agent")
        expect(card.get_by_test_id("hub-fingerprint")).to_have_text(fingerprint)
        expect(card.get_by_role("button", name="Copy fingerprint")).to_be_visible()
        card.scroll_into_view_if_needed()
        screenshot(page, f"hub-certificate-{'phone' if viewport == PHONE else 'desktop'}")
        assert axe_violations(page) == []

        page.goto("/agents")
        page.get_by_role("button", name="Connect my agent").first.click()
        expect(page.get_by_test_id("pairing-command")).to_contain_text(
            f"--tls-fingerprint {fingerprint}"
        )
        expect(page.get_by_test_id("pairing-fingerprint")).to_contain_text(fingerprint)
    finally:
        context.close()
        ana.close()
