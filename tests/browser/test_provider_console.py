"""The provider console end to end: a hub whose provider directory holds two signed versions
of the small files provider; a workspace owner opens Providers, installs 1.0.0 — the contract
kit's results and the capabilities it adds on the approval card — and approves it; checks its
health; disables it and enables it again, each through its own approval; upgrades it to 1.1.0
and rolls it back to 1.0.0; the change history shows every step. On a phone the two panes are
two steps: the list, then the provider."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.agent import new_id
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    Hub,
    HubProcess,
    Person,
    _free_port,
    _require_build,
    axe_violations,
    screenshot,
)
from tests.support.packages import signed_package, trusted_keys_file

PROVIDER = "files"
# installing and upgrading run the contract kit on the package before the card appears
KIT = 60_000


@pytest.fixture
def provider_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    """A hub of the test's own, discovering packages in a directory holding files 1.0.0 and
    1.1.0, signed by a key it trusts."""
    _require_build()
    discovery = tmp_path / "provider-dir"
    discovery.mkdir()
    for version in ("1.0.0", "1.1.0"):
        built = signed_package(tmp_path / f"build-{version}", provider_id=PROVIDER, version=version)
        if built.is_dir():
            shutil.copytree(built, discovery / built.name)
        else:
            shutil.copy2(built, discovery / built.name)
    monkeypatch.setenv("LINEUP_PROVIDER_DIR", str(discovery))
    monkeypatch.setenv("LINEUP_PROVIDER_TRUSTED_KEYS", str(trusted_keys_file(tmp_path)))
    home = tmp_path / "home"
    home.mkdir()
    process = HubProcess(home, _free_port())
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture
def owner(provider_hub: Hub) -> Iterator[Person]:
    client = httpx.Client(base_url=provider_hub.url, timeout=15, trust_env=False)
    person = Person.sign_up(
        client, f"{new_id('ana').lower()}@example.test", "Ana", workspaceName="Studio"
    )
    try:
        yield person
    finally:
        person.close()


def _page(browser: Browser, person: Person, viewport: dict[str, int]) -> Page:
    context = browser.new_context(
        base_url=person.hub_url,
        viewport=viewport,  # type: ignore[arg-type]
        color_scheme="light",
        locale="en-GB",
        timezone_id="UTC",
    )
    context.set_default_timeout(10_000)
    person.sign_in_context(context)
    return context.new_page()


def _pending_card(page: Page, title: re.Pattern[str]) -> Locator:
    card = page.locator("article.pcard[data-status='pending']")
    expect(card.get_by_role("heading", name=title)).to_be_visible(timeout=KIT)
    return card


def _approve(page: Page, title: re.Pattern[str]) -> Locator:
    """Approve the waiting change called ``title``; return its card once it says applied."""
    card = _pending_card(page, title)
    approve = card.get_by_role("button", name="Approve")
    expect(approve).to_be_enabled()
    approve.click()
    decided = page.locator("article.pcard[data-status='applied']")
    expect(decided.get_by_role("region", name="Outcome")).to_contain_text("Ana approved")
    expect(decided.get_by_role("region", name="Outcome")).to_contain_text("the change is applied")
    return decided


def test_an_owner_installs_checks_disables_upgrades_and_rolls_back_a_provider(
    browser: Browser, owner: Person
) -> None:
    page = _page(browser, owner, DESKTOP)
    page.goto("/inbox")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Providers").click()
    expect(page.get_by_role("heading", name="Providers", level=1)).to_be_visible()
    expect(page.locator(f".prow[data-provider-id='{PROVIDER}']")).to_have_count(0)

    # Install: both discovered versions are listed, read and checked, nothing run yet.
    page.get_by_role("link", name="Install…").click()
    packages = page.get_by_role("list", name="Available packages")
    ours = packages.get_by_role("listitem").filter(
        has=page.locator("code", has_text=re.compile(f"^{PROVIDER}$"))
    )
    expect(ours).to_have_count(2)
    # a row is named by the package's name and version
    first = ours.and_(packages.get_by_role("listitem", name=re.compile(r" 1\.0\.0$")))
    expect(first.get_by_test_id("package-refused")).to_have_count(0)
    first.get_by_role("button", name="Install").click()

    # The approval card: what it adds, the contract kit's results, nothing blocking it.
    card = _pending_card(page, re.compile(r"^Install .+ 1\.0\.0$"))
    expect(page).to_have_url(re.compile(r"/providers\?change="))
    expect(card.get_by_test_id("change-versions")).to_have_text("not installed → 1.0.0")
    expect(card.get_by_role("list", name="Added capabilities")).to_contain_text(f"{PROVIDER}.")
    expect(card.get_by_test_id("contract-summary")).to_contain_text("Passed all")
    expect(card.get_by_role("region", name="Blockers")).to_have_count(0)
    # the waiting install is in the list beside it
    expect(page.get_by_role("list", name="Waiting installs")).to_contain_text("1.0.0")
    screenshot(page, "provider-install-card")
    assert axe_violations(page) == []
    _approve(page, re.compile(r"^Install "))

    # Installed and enabled: it is in the list, and its page says so.
    row = page.locator(f".prow[data-provider-id='{PROVIDER}']")
    expect(row).to_have_attribute("data-state", "enabled")
    expect(row).to_contain_text("1.0.0")
    page.get_by_role("link", name=f"Open {PROVIDER}").click()
    expect(page).to_have_url(re.compile(rf"/providers/{PROVIDER}$"))
    detail = page.locator(f".pdetail[data-provider-id='{PROVIDER}']")
    expect(detail.get_by_test_id("provider-version")).to_have_text("1.0.0")
    expect(detail.get_by_test_id("provider-state")).to_have_text("Enabled")
    expect(row.get_by_role("link")).to_have_attribute("aria-current", "page")

    # Health, on demand: the newest result first.
    detail.get_by_role("tab", name="Health").click()
    detail.get_by_role("button", name="Check now").click()
    history = detail.get_by_role("list", name="Health history")
    expect(history.get_by_role("listitem").first).to_contain_text(re.compile(r"^\s*Healthy"))
    expect(detail.get_by_test_id("provider-health")).to_have_text("Healthy")
    screenshot(page, "provider-health")

    # Disable, through its approval; then enable again.
    detail.get_by_role("button", name="Disable").click()
    _approve(page, re.compile(r"^Disable "))
    expect(detail.get_by_test_id("provider-state")).to_have_text("Disabled")
    expect(row).to_have_attribute("data-state", "disabled")
    detail.get_by_role("button", name="Enable").click()
    _approve(page, re.compile(r"^Enable "))
    expect(detail.get_by_test_id("provider-state")).to_have_text("Enabled")

    # Upgrade to the newer package of the same provider: the kit runs again (its regression).
    detail.get_by_role("button", name="Upgrade…").click()
    form = detail.get_by_role("form", name="Upgrade")
    expect(form.get_by_role("radio")).to_have_count(1)
    expect(form.get_by_role("radio", name=re.compile(r"1\.1\.0"))).to_be_checked()
    form.get_by_role("button", name="Request upgrade").click()
    card = _pending_card(page, re.compile(r"^Upgrade .+ from 1\.0\.0 to 1\.1\.0$"))
    expect(card.get_by_test_id("contract-summary")).to_contain_text("Passed all")
    screenshot(page, "provider-upgrade-card")
    _approve(page, re.compile(r"^Upgrade "))
    expect(detail.get_by_test_id("provider-version")).to_have_text("1.1.0")
    expect(row).to_contain_text("1.1.0")
    detail.get_by_role("tab", name="Overview").click()
    expect(detail.get_by_test_id("provider-previous")).to_contain_text("1.0.0")

    # One step back to the kept previous version.
    detail.get_by_role("button", name="Roll back to 1.0.0").click()
    _approve(page, re.compile(r"^Roll back .+ from 1\.1\.0 to 1\.0\.0$"))
    expect(detail.get_by_test_id("provider-version")).to_have_text("1.0.0")
    expect(row).to_contain_text("1.0.0")
    expect(detail.get_by_test_id("provider-state")).to_have_text("Enabled")

    # Every step is in the history, newest first.
    detail.get_by_role("tab", name="Changes").click()
    changes = detail.get_by_role("list", name="Change history").get_by_role("listitem")
    expect(changes).to_have_count(5)
    expect(changes.first).to_contain_text("Roll back")
    expect(changes.first).to_contain_text("Applied")
    expect(changes.last).to_contain_text("Install")
    screenshot(page, "provider-console")
    assert axe_violations(page) == []

    # On a phone: the list first, then the provider alone with a way back.
    phone = _page(browser, owner, PHONE)
    phone.goto("/providers")
    phone.locator(f".prow[data-provider-id='{PROVIDER}']").get_by_role("link").click()
    expect(phone.get_by_role("heading", level=1)).to_be_visible()
    expect(phone.get_by_role("list", name="Installed providers")).to_have_count(0)
    expect(phone.locator(".pdetail").get_by_test_id("provider-version")).to_have_text("1.0.0")
    overflow = phone.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    screenshot(phone, "provider-console-phone")
    assert axe_violations(phone) == []
    phone.get_by_role("link", name="Providers").first.click()
    expect(phone.get_by_role("list", name="Installed providers")).to_be_visible()
    phone.context.close()
    page.context.close()
