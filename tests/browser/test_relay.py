"""Relay mode in a real browser: the web app on the official WuKongIM JS SDK and the agent's
``lineup relay`` process meet only through the relay test peer (a loopback WuKongIM server and
TangSengDaoDao stub, tests/support/relay_peer/), which also serves the built app.

The person signs in on the relay screen (TSDD login, route, agent uid), gives the agent a task,
answers its ``choice`` tool call, watches its progress and approves its approval, opens the
agent's chart (stored with TSDD by the agent's host, opened at TSDD's address) and uploads a
provider package (stored with TSDD by the page, fetched into the hub by the host). The agent's
process (the SDK agent, its embedded hub and the bridge to WuKongIM) is SIGKILLed while the
tool call waits and started again after the person answered: the answer is run once, the
app's realtime socket resumes (a reply comes live), and no message, progress step or handler
step is lost or doubled.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from lineup.core.package import write_archive
from tests.browser.conftest import DESKTOP, REPO, screenshot
from tests.e2e.relay import RelayAgentProcess
from tests.support.packages import package_files
from tests.support.relay_agent import CHART
from tests.support.relay_app import TunnelApp
from tests.support.relay_peer import PeerUser, RelayPeer, running_peer
from tests.support.waiting import until

STATIC = REPO / "src" / "lineup" / "hub" / "static"
DEADLINE = 30.0
AGENT_UID = "builder-bot"
PERSON_UID = "ana"


@pytest.fixture
def peer() -> Iterator[RelayPeer]:
    if not (STATIC / "index.html").exists():
        pytest.fail("The web app is not built: run `make web` first.")
    with running_peer(static_dir=STATIC) as running:
        yield running


@pytest.fixture
def agent(peer: RelayPeer, tmp_path: Path) -> Iterator[RelayAgentProcess]:
    process = RelayAgentProcess(
        peer, peer.add_user(AGENT_UID, name="Build bot"), tmp_path / "agent-home", (PERSON_UID,)
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()
        print(process.tail())  # shown when the test fails


def _context(browser: Browser, base: str) -> BrowserContext:
    return browser.new_context(base_url=base, viewport=DESKTOP, locale="en-GB", timezone_id="UTC")  # type: ignore[arg-type]


def _sign_in(page: Page, peer: RelayPeer) -> None:
    page.goto(f"/#relay={peer.api}&agent={AGENT_UID}")
    expect(page.get_by_role("heading", name="Sign in through a relay")).to_be_visible()
    assert "relay=" not in page.url, "the relay address stays in the address bar"
    expect(page.get_by_label("IM server API address")).to_have_value(peer.api)
    page.get_by_label("Username").fill(PERSON_UID)
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("wrong username or password")
    page.get_by_label("Password").fill("secret-pass")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Open which agent?")).to_be_visible()
    expect(page.get_by_label("Agent uid")).to_have_value(AGENT_UID)
    expect(page.get_by_label("WuKongIM address")).to_have_value(peer.ws)
    screenshot(page, "relay-agent")
    page.get_by_role("button", name="Open agent").click()
    inbox = page.get_by_role("heading", name="Inbox", level=1)
    expect(inbox).to_be_visible(timeout=DEADLINE * 1000)
    expect(page.get_by_test_id("relay-badge")).to_have_text("Relay mode")
    expect(page.get_by_test_id("direct-badge")).to_have_count(0)


def _messages_once(page: Page, text: str) -> None:
    stream = page.get_by_role("log", name="Messages")
    expect(stream.get_by_text(text, exact=True)).to_have_count(1, timeout=DEADLINE * 1000)


def _from_another_device(peer: RelayPeer, person: PeerUser, conversation: str, text: str) -> None:
    """``person`` writes to the agent in ``conversation`` through a second WuKongIM session of
    theirs (the tunnel spoken by the Python stand-in app), not through the page."""

    async def write() -> None:
        app = await TunnelApp.open(peer.ws, person.uid, person.token, AGENT_UID)
        try:
            await app.find_workspace()
            agents = (await app.ok("GET", app.ws("/agents")))["agents"]
            await app.ok(
                "POST",
                app.ws(f"/conversations/{conversation}/messages"),
                {"content": text, "targetAgentId": agents[0]["id"]},
                201,
            )
        finally:
            await app.close()

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API holds this thread's loop
        thread.submit(asyncio.run, write()).result(timeout=DEADLINE * 2)


def _open_the_agents_chart(context: BrowserContext, page: Page, peer: RelayPeer) -> None:
    """The agent uploads a chart as an artifact of the conversation; its link opens TSDD's
    copy of it in a new tab (stored with TSDD once, by the agent's relay host)."""
    page.get_by_label("Message", exact=True).fill("Please send the chart")
    page.get_by_role("button", name="Send").click()
    _messages_once(page, "Noted: Please send the chart")
    link = page.locator("a.artifact").filter(has_text="Build chart")
    expect(link).to_be_visible(timeout=DEADLINE * 1000)
    assert re.fullmatch(r"/api/workspaces/[^/]+/files/[^/]+", link.get_attribute("href") or "")
    with context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_url(re.compile(r"/storage/chat/1/"), timeout=DEADLINE * 1000)
    assert context.request.get(tab.url).body() == CHART  # the bytes the agent uploaded
    screenshot(tab, "relay-file-opened")
    tab.close()
    (stored,) = [f for f in peer.files() if f["sha256"] == hashlib.sha256(CHART).hexdigest()]
    assert stored["uploader"] == AGENT_UID and stored["type"] == "image/png"
    with context.expect_page() as again:  # a second open: the same address, no second upload
        link.click()
    again.value.wait_for_url(re.compile(re.escape(stored["path"].split("/", 2)[2])))
    again.value.close()
    assert [f["sha256"] for f in peer.files()].count(stored["sha256"]) == 1


def _upload_a_package(page: Page, peer: RelayPeer, tmp_path: Path) -> None:
    """An upload from the page goes to TSDD's file API and the agent's host hands the hub the
    same bytes: the hub reads the package (and refuses it, unsigned)."""
    archive = tmp_path / "notes.lineup-provider"
    archive.write_bytes(write_archive(package_files("notes")))
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Providers").click()
    page.get_by_role("link", name="Install…").click()
    page.get_by_label("Upload a package").set_input_files(str(archive))
    expect(page.get_by_text(re.compile(r"was refused: the package is not signed"))).to_be_visible(
        timeout=DEADLINE * 1000
    )
    screenshot(page, "relay-upload")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    (stored,) = [f for f in peer.files() if f["sha256"] == digest]
    assert stored["uploader"] == PERSON_UID and stored["filename"] == "notes.lineup-provider"


def test_the_web_app_in_relay_mode_reaches_its_agent_only_through_wukongim(
    browser: Browser, peer: RelayPeer, agent: RelayAgentProcess, tmp_path: Path
) -> None:
    ana = peer.add_user(PERSON_UID, name="Ana")
    context = _context(browser, peer.api)
    try:
        page = context.new_page()
        _sign_in(page, peer)

        # --- a conversation; the agent answers a message, then takes a task ----------------
        nav = page.get_by_role("navigation", name="Main")
        nav.get_by_role("link", name=re.compile("Conversations")).click()
        page.get_by_role("button", name="New conversation").first.click()
        page.get_by_label("Title").fill("Deploy")
        # the agent is in the conversation once the form has loaded it (its one agent, ticked)
        expect(page.get_by_role("checkbox", name=re.compile("relay-builder"))).to_be_checked()
        page.get_by_role("button", name="Create conversation").click()
        expect(page.get_by_role("combobox", name="To")).not_to_have_value("")
        page.get_by_label("Message", exact=True).fill("The site is ready")
        page.get_by_role("button", name="Send").click()
        _messages_once(page, "Noted: The site is ready")
        page.get_by_label("Message", exact=True).fill("Deploy the site")
        page.get_by_label("Track as task").check()
        page.get_by_role("button", name="Send").click()
        _messages_once(page, "Deploy the site")

        nav.get_by_role("link", name=re.compile("Inbox")).click()
        card = page.locator("article[data-tool='choice']")
        expect(card).to_contain_text("Deploy where?", timeout=DEADLINE * 1000)
        screenshot(page, "relay-choice")

        # --- the agent's process dies; the answer is given while it is away ----------------
        agent.kill()
        card.get_by_role("button", name="staging").click()
        agent.start()  # the persisted request is redelivered to it and runs once
        expect(card.locator(".outcome-answer")).to_have_text("staging", timeout=DEADLINE * 1000)

        # --- the task goes on: its approval --------------------------------------------------
        approval = page.locator("[data-interaction-id]").filter(has_text="Deploy to staging?")
        expect(approval).to_be_visible(timeout=DEADLINE * 1000)
        approval.get_by_role("button", name="Approve").click()
        expect(approval.get_by_role("region", name="Outcome")).to_contain_text("answered")

        nav.get_by_role("link", name=re.compile("Conversations")).click()
        page.get_by_role("link", name=re.compile("Deploy")).click()
        _messages_once(page, "Deploy the site")
        _messages_once(page, "Noted: The site is ready")
        expect(page.locator(".task-chip").first).to_contain_text(
            "Succeeded", timeout=DEADLINE * 1000
        )
        page.get_by_role("link", name="Open task").first.click()
        # the progress it reported, once, and its end
        expect(page.get_by_text(re.compile(r"40% — Planning the deploy"))).to_have_count(1)
        expect(page.get_by_text(re.compile(r"succeeded, 100%"))).to_have_count(1)
        expect(page.get_by_text("Deployed to staging").first).to_be_visible()
        screenshot(page, "relay-done")

        # the page's realtime socket works after the restart: what Ana writes from another
        # device, and the agent's reply, show in the open conversation without a reload
        page.go_back()
        conversation = page.url.rsplit("/", 1)[-1]
        _from_another_device(peer, ana, conversation, "Sent from my phone")
        _messages_once(page, "Sent from my phone")
        _messages_once(page, "Noted: Sent from my phone")

        # --- files: the agent's chart opens through TSDD; a package uploads through it -------
        _open_the_agents_chart(context, page, peer)
        _upload_a_package(page, peer, tmp_path)
        nav.get_by_role("link", name=re.compile("Conversations")).click()
        page.get_by_role("link", name=re.compile("Deploy")).click()

        # each handler step after the crash was taken once; nothing left loopback
        until(lambda: "approved True" in agent.steps, "the agent's last step")
        assert agent.steps.count("chose staging") == 1, agent.steps
        assert agent.steps.count("approved True") == 1, agent.steps
        assert agent.refused == ""
        print("relay peer stats:", peer.stats())

        # --- a reload keeps the session; signing out forgets it -------------------------------
        page.reload()
        nav.get_by_role("link", name=re.compile("Conversations")).click(timeout=DEADLINE * 1000)
        page.get_by_role("link", name=re.compile("Deploy")).click()
        _messages_once(page, "Noted: The site is ready")
        _messages_once(page, "Noted: Sent from my phone")
        expect(page.get_by_role("heading", name="Sign in through a relay")).to_have_count(0)
        nav.get_by_role("link", name=re.compile("Settings")).click()
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in through a relay")).to_be_visible()
        assert page.evaluate("() => localStorage.getItem('lineup.relay')") is None
    finally:
        with contextlib.suppress(Exception):
            context.close()
