"""Browser end-to-end fixtures: the real hub as a process, Chromium driven by Playwright.

The hub runs ``lineup serve`` on a free port with its own ``LINEUP_HOME`` (SQLite) and short
heartbeats; it serves the built web app from ``src/lineup/hub/static`` (``make web``).
Chromium is Debian's ``/usr/bin/chromium`` (``LINEUP_CHROMIUM`` overrides it). Every wait
has a deadline; readiness is polled, never slept on.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.browser.agent import Pairing, ScriptedAgent, new_id, redeem
from tests.support import people
from tests.support.people import PASSWORD

REPO = Path(__file__).resolve().parents[2]
STATIC_INDEX = REPO / "src" / "lineup" / "hub" / "static" / "index.html"
AXE = REPO / "web" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("LINEUP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

expect.set_options(timeout=10_000)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Hub:
    url: str
    log: Path
    home: Path
    """``LINEUP_HOME``, under which hosted engines may work (``LINEUP_ENGINE_ROOTS``)."""


class HubProcess:
    """``lineup serve`` on a fixed port and home, which a test may stop and start again;
    ``command`` runs another composition of the hub instead (given ``--port``), with ``env``
    added to its environment."""

    def __init__(
        self,
        home: Path,
        port: int,
        *,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.home = home
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = home / "hub.log"
        self.command = command or [str(Path(sys.executable).parent / "lineup"), "serve"]
        self.env = env or {}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Hub:
        env = {
            **os.environ,
            "LINEUP_HOME": str(self.home),
            "LINEUP_HEARTBEAT_INTERVAL": "0.5",
            "LINEUP_GRACE_PERIOD": "30",
            # one hub serves the whole session and every test pairs agents from 127.0.0.1
            "LINEUP_PAIRING_ATTEMPTS_PER_IP": "1000",
            # hosted agents on the fake engine, working in directories under the home
            "LINEUP_ENGINE_FAKE": "1",
            "LINEUP_ENGINE_ROOTS": str(self.home),
        }
        for name in ("LINEUP_DATABASE_URL", "LINEUP_REDIS_URL", "LINEUP_PUBLIC_URL"):
            env.pop(name, None)
        env.update(self.env)
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [*self.command, "--port", str(self.port), "--log-level", "warning"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        _wait_ready(self.process, self.url, self.log)
        return Hub(self.url, self.log, self.home)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.process = None


def _require_build() -> None:
    if not STATIC_INDEX.exists():
        pytest.fail(
            "The web app is not built (src/lineup/hub/static/index.html is missing): "
            "run `make web` (or `cd web && npm ci && npm run build`) first."
        )


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """One hub for the session; each test signs up its own person and workspace."""
    _require_build()
    process = HubProcess(tmp_path_factory.mktemp("lineup-home"), _free_port())
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture
def hub_process(tmp_path: Path) -> Iterator[HubProcess]:
    """A hub of the test's own, for tests that restart it."""
    _require_build()
    process = HubProcess(tmp_path, _free_port())
    process.start()
    try:
        yield process
    finally:
        process.stop()


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2, trust_env=False) as client:
        while time.monotonic() < deadline:
            try:
                if client.get(f"{url}/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            try:
                code = process.wait(timeout=0.1)  # the bounded pause between polls
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"lineup serve exited with {code}:\n{log.read_text()}")
    pytest.fail(f"the hub was not ready within {timeout}s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def new_context(browser: Browser, hub: Hub) -> Iterator[Any]:
    """Make browser contexts (closed at the end of the test)."""
    made: list[BrowserContext] = []

    def make(
        viewport: dict[str, int] | None = None,
        person: Person | None = None,
        color_scheme: str = "light",
    ) -> BrowserContext:
        context = browser.new_context(
            base_url=person.hub_url if person is not None else hub.url,
            viewport=viewport or DESKTOP,  # type: ignore[arg-type]
            color_scheme=color_scheme,  # type: ignore[arg-type]
            locale="en-GB",
            timezone_id="UTC",
        )
        context.set_default_timeout(10_000)
        if person is not None:
            person.sign_in_context(context)
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


# --- people and agents through the API (for tests that start mid-story) ----------------------


@dataclass
class Person(people.Person):
    """A person on a hub process who can also sign a browser in and pair scripted agents."""

    agents: list[ScriptedAgent] = field(default_factory=list)

    @property
    def hub_url(self) -> str:
        return str(self.client.base_url).rstrip("/")

    def sign_in_context(self, context: BrowserContext) -> None:
        cookies: list[Any] = [
            {"name": name, "value": value, "url": self.hub_url}
            for name, value in self.cookies().items()
        ]
        if self.refresh_token:  # only for the refresh route, as the hub sets it
            host = httpx.URL(self.hub_url).host
            cookies.append(
                {
                    "name": "lineup_refresh",
                    "value": self.refresh_token,
                    "domain": host,
                    "path": people.REFRESH_PATH,
                    "httpOnly": True,
                    "sameSite": "Strict",
                }
            )
        context.add_cookies(cookies)

    def pair_agent(self, name: str = "builder") -> ScriptedAgent:
        code = self.send("/pairing-codes", {}, 201)["code"]
        agent = ScriptedAgent(redeem(self.hub_url, code, name))
        self.confirm_agent(agent.pairing.agent_id)  # as the person would, in the app
        agent.connect()
        self.agents.append(agent)
        return agent


@pytest.fixture
def make_person(hub: Hub) -> Iterator[Any]:
    made: list[Person] = []

    def make(display_name: str = "Ana", on: Hub | None = None) -> Person:
        where = on or hub
        client = httpx.Client(base_url=where.url, timeout=15, trust_env=False)
        email = f"{new_id('ana').lower()}@example.test"
        person = Person.sign_up(client, email, display_name, workspaceName="Studio")
        made.append(person)
        return person

    yield make
    for person in made:
        for agent in person.agents:
            agent.disconnect()
        person.close()


@dataclass
class StartedTask:
    conversation_id: str
    task_id: str
    interaction_id: str | None = None


def start_task(
    person: Person,
    agent: ScriptedAgent,
    title: str = "Refresh the landing page",
    *,
    approval: bool = True,
) -> StartedTask:
    """A conversation, a tracked task the agent runs, a child task, and an approval request."""
    conversation = person.send(
        "/conversations", {"title": title, "agentIds": [agent.pairing.agent_id]}, 201
    )
    person.send(
        f"/conversations/{conversation['id']}/messages",
        {"content": f"{title}: analyse it and propose changes", "trackAsTask": True},
        201,
    )
    assigned = agent.next_downlink("task.assigned")
    task_id = assigned["payload"]["taskId"]
    agent.call("task.accepted", {"taskId": task_id}, task_id=task_id)
    agent.call(
        "task.status_changed",
        {"status": "running", "progress": 30, "summary": "Scanning the pages"},
        task_id=task_id,
    )
    agent.call(
        "task.child_created",
        {"parentTaskId": task_id, "title": "Scan the repository", "status": "running"},
        task_id=task_id,
    )
    agent.call(
        "artifact.created",
        {"name": "audit.md", "url": "https://example.test/audit.md", "mimeType": "text/markdown"},
        task_id=task_id,
    )
    started = StartedTask(conversation["id"], task_id)
    if approval:
        started.interaction_id = request_approval(agent, task_id)
    return started


def request_approval(agent: ScriptedAgent, task_id: str) -> str:
    interaction_id = new_id("int")
    agent.call(
        "interaction.requested",
        {
            "interaction": {
                "id": interaction_id,
                "type": "approval",
                "title": "Install 3 development dependencies?",
                "why": "The build needs a linter, a test runner and a bundler plugin.",
                "impact": "Changes package.json and the lock file; nothing is deployed.",
                "risk": "medium",
                "details": {"packages": ["eslint", "vitest", "vite-plugin-inspect"]},
            }
        },
        task_id=task_id,
    )
    return interaction_id


# --- evidence ------------------------------------------------------------------------------


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False, animations="disabled")


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Run axe-core on the page; return the serious and critical violations."""
    # evaluated rather than added as a <script>: the page's Content-Security-Policy refuses
    # inline scripts, and the DevTools protocol's evaluation is not subject to it
    page.evaluate(AXE.read_text())
    results: list[dict[str, Any]] = page.evaluate(
        """async () => {
            const r = await axe.run(document, { resultTypes: ["violations"] });
            return r.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " :: " + n.failureSummary)
            }));
        }"""
    )
    return [v for v in results if v["impact"] in ("serious", "critical")]


def tab_to(page: Page, name: str, limit: int = 80) -> None:
    """Press Tab until the focused element is the button called ``name`` (keyboard only)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement; "
            "return e ? [e.tagName, (e.getAttribute('aria-label') || e.textContent || '').trim()] "
            ": null }"
        )
        if focused and focused[0] == "BUTTON" and focused[1] == name:
            return
    raise AssertionError(f"Tab never reached a button named {name!r}")


__all__ = [
    "DESKTOP",
    "PASSWORD",
    "PHONE",
    "Hub",
    "Pairing",
    "Person",
    "StartedTask",
    "axe_violations",
    "request_approval",
    "screenshot",
    "start_task",
    "tab_to",
]
