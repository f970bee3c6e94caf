"""The relay host in this process, against the relay test peer: a person's app (the Python
stand-in, speaking 3101–3104) reaches the agent's embedded LineUp through WuKongIM alone.

The SDK agent is the one of every mode (``tests.support.relay_agent``); only its
configuration says relay.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lineup.core.package import write_archive
from lineup.direct import RelayHost
from lineup.relay import media, tunnel
from lineup.relay.tsdd import TsddFiles, upload_path
from lineup.sdk import AgentConfig, RelayOptions
from tests.support.packages import package_files
from tests.support.relay_agent import CHART, REPORT, build_agent
from tests.support.relay_app import TunnelApp
from tests.support.relay_peer import RelayPeer, relay_peer  # noqa: F401
from tests.support.waiting import until_async


@pytest.fixture
async def running(
    relay_peer: RelayPeer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[RelayPeer, RelayHost, TunnelApp]]:
    monkeypatch.setenv("LINEUP_HOME", str(tmp_path / "home"))
    ana, bot = relay_peer.add_user("ana", name="Ana"), relay_peer.add_user("bot")
    options = RelayOptions(server=relay_peer.tcp, api=relay_peer.api, uid=bot.uid,
                           token=bot.token, people=("ana",))  # fmt: skip
    agent = build_agent(AgentConfig.for_relay(options))
    host = RelayHost()
    task = asyncio.create_task(agent.run(host=host))
    async with asyncio.timeout(30):
        await agent.serving()
    app = await TunnelApp.open(relay_peer.ws, ana.uid, ana.token, bot.uid)
    try:
        await app.find_workspace()
        yield relay_peer, host, app
    finally:
        await app.close()
        agent.stop()
        await task


async def _agent_online(app: TunnelApp) -> str:
    async def online() -> str | None:
        agents = (await app.ok("GET", app.ws("/agents")))["agents"]
        return next((a["id"] for a in agents if a["status"] == "online"), None)

    return await until_async(online, "the agent to be online", timeout=30)


async def test_a_task_with_progress_a_choice_and_an_approval_runs_through_the_tunnel(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    _, _, app = running
    agent_id = await _agent_online(app)
    asked = {"title": "Deploy the site", "targetAgentId": agent_id}
    created = await app.ok("POST", app.ws("/tasks"), asked, 201)
    task_id = created["task"]["id"]

    async def pending_call() -> Any:
        calls = (await app.ok("GET", app.ws("/tool-calls?status=pending")))["toolCalls"]
        return calls[0] if calls else None

    call = await until_async(pending_call, "the choice tool call", timeout=30)
    assert call["name"] == "choice" and call["arguments"]["options"] == ["test", "staging"]
    await app.ok("POST", app.ws(f"/tool-calls/{call['id']}/result"),
                 {"result": {"message": "staging"}})  # fmt: skip

    async def waiting() -> Any:
        detail = await app.ok("GET", app.ws(f"/tasks/{task_id}"))
        return detail if detail["task"]["status"] == "waiting_for_human" else None

    detail = await until_async(waiting, "the approval", timeout=30)
    assert detail["task"]["progress"] == 40
    (interaction,) = detail["interactions"]
    assert interaction["request"]["title"] == "Deploy to staging?"
    await app.ok("POST", app.ws(f"/interactions/{interaction['id']}/respond"),
                 {"response": {"optionId": "approve"}})  # fmt: skip

    async def succeeded() -> Any:
        detail = await app.ok("GET", app.ws(f"/tasks/{task_id}"))
        return detail if detail["task"]["status"] == "succeeded" else None

    done = await until_async(succeeded, "the task to succeed", timeout=30)
    assert done["task"]["summary"] == "Deployed to staging"
    assert max(app.answered.values()) == 1  # every request answered exactly once


async def test_the_realtime_socket_is_bridged_and_resumes_from_a_sequence(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    _, _, app = running
    await _agent_online(app)
    socket = await app.open_socket(f"/ws/client?workspaceId={app.workspace_id}")
    await app.socket_send(socket, {
        "id": "evt_subscribe_1", "type": "client.subscribe", "version": "0.1",
        "occurredAt": "2026-01-01T00:00:00Z", "workspaceId": app.workspace_id,
        "payload": {"lastSequence": 0}})  # fmt: skip
    types: list[str] = []
    async with asyncio.timeout(30):
        while "client.caught_up" not in types:
            types.append((await socket.frames.get())["type"])
    assert "workspace.created" in types and "agent.paired" in types
    await app.socket_close(socket)


async def test_a_host_that_starts_tells_the_app_its_old_sockets_are_gone(
    relay_peer: RelayPeer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEUP_HOME", str(tmp_path / "home"))
    ana, bot = relay_peer.add_user("ana", name="Ana"), relay_peer.add_user("bot")
    app = await TunnelApp.open(relay_peer.ws, ana.uid, ana.token, bot.uid)
    # a socket the app believes open, of a host that is gone (its open reached no one)
    old = await app.open_socket("/ws/client?workspaceId=ws_of_the_last_run")
    options = RelayOptions(server=relay_peer.tcp, api=relay_peer.api, uid=bot.uid,
                           token=bot.token, people=("ana",))  # fmt: skip
    agent = build_agent(AgentConfig.for_relay(options))
    task = asyncio.create_task(agent.run(host=RelayHost()))
    try:
        assert old.closed is not None
        async with asyncio.timeout(30):
            code, _ = await old.closed
        assert code == 1012  # the app reopens its socket and resumes from its last sequence
    finally:
        await app.close()
        agent.stop()
        await task


async def test_the_apps_tools_become_what_agents_see(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    _, _, app = running
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    stamp = {"name": "stamp", "type": "action", "description": "Stamp.", "inputSchema": schema}
    await app.register_tools([stamp])

    async def registered() -> Any:
        listed = await app.ok("GET", app.ws("/tools"))
        return listed if any(t["name"] == "stamp" for t in listed["tools"]) else None

    await until_async(registered, "the app's tools to be registered", timeout=30)


async def test_text_from_tsdd_reaches_the_agent_and_its_reply_comes_back_as_text(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    _, _, app = running
    await _agent_online(app)
    await app.send_text("the build is green")
    async with asyncio.timeout(30):
        reply = await app.texts.get()
    assert reply == "Noted: the build is green"
    conversations = (await app.ok("GET", app.ws("/conversations")))["conversations"]
    assert [c["title"] for c in conversations] == ["WuKongIM"]


async def test_a_uid_not_configured_is_ignored(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    peer, host, app = running
    mallory = peer.add_user("mallory")
    intruder = await TunnelApp.open(peer.ws, mallory.uid, mallory.token, "bot")
    try:
        rid = await intruder.send_request("GET", "/api/workspaces")
        await app.ok("GET", "/api/workspaces")  # handled after Mallory's, in order
        assert host.bridge is not None and host.bridge.counters.ignored == 1
        assert intruder.answered[rid] == 0
    finally:
        await intruder.close()


async def test_a_request_sent_again_is_answered_from_the_ledger_not_run_twice(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    _, host, app = running
    body = {"title": "Once only", "agentIds": []}
    first = await app.call("POST", app.ws("/conversations"), body, request_id="req-once")
    assert first.status == 201
    app._responses.pop("req-once")
    again = await app.call("POST", app.ws("/conversations"), body, request_id="req-once")
    assert again.body == first.body
    listed = (await app.ok("GET", app.ws("/conversations")))["conversations"]
    assert [c["title"] for c in listed].count("Once only") == 1
    assert host.bridge is not None and host.bridge.counters.replayed == 1


async def test_a_request_cut_short_by_a_crash_is_not_run_again_unless_it_is_safe(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    _, host, app = running
    assert host.bridge is not None
    # as the ledger is left when the process dies between starting a request and keeping
    # its answer
    host.bridge.ledger.start("req-cut-post", "ana", "POST")
    host.bridge.ledger.start("req-cut-get", "ana", "GET")
    body = {"title": "Maybe made", "agentIds": []}
    cut = await app.call("POST", app.ws("/conversations"), body, request_id="req-cut-post")
    assert cut.status == 500 and cut.json()["error"]["code"] == "unknown_result"
    titles = [c["title"] for c in (await app.ok("GET", app.ws("/conversations")))["conversations"]]
    assert "Maybe made" not in titles
    safe = await app.call("GET", "/api/workspaces", request_id="req-cut-get")
    assert safe.status == 200


# --- files -----------------------------------------------------------------------------------


async def _artifact(app: TunnelApp, name: str) -> dict[str, Any]:
    async def made() -> Any:
        listed = (await app.ok("GET", app.ws("/artifacts")))["artifacts"]
        return next((a for a in listed if a["name"] == name), None)

    return await until_async(made, f"the artifact {name!r}", timeout=30)  # type: ignore[no-any-return]


async def test_the_agents_artifact_goes_to_tsdd_once_as_a_file_message_and_opens_by_its_link(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    peer, _, app = running
    await _agent_online(app)
    await app.send_text("send me the report")
    async with asyncio.timeout(30):
        sent = await app.media.get()  # TSDD's apps see a file message, not text
    assert sent.kind == media.FILE and sent.name == "Weekly report" and sent.size == len(REPORT)
    (stored,) = peer.files()
    assert stored["path"] == sent.url and stored["uploader"] == "bot"
    assert stored["sha256"] == hashlib.sha256(REPORT).hexdigest()
    assert stored["type"] == "text/markdown"

    artifact = await _artifact(app, "Weekly report")
    link = await app.call("GET", artifact["url"], headers={"accept": tunnel.FILE_LINK})
    assert link.status == 200 and link.headers["content-type"] == tunnel.FILE_LINK
    opened = link.json()
    assert opened["path"] == sent.url and opened["size"] == len(REPORT)  # no second upload
    assert opened["name"] == "report.md" and opened["url"].endswith("?filename=report.md")
    async with httpx.AsyncClient(follow_redirects=True) as browser:  # no token, as a browser
        assert (await browser.get(opened["url"])).content == REPORT
    assert len(peer.files()) == 1

    # the plain GET still answers the bytes through the tunnel
    plain = await app.call("GET", artifact["url"], headers={"accept": "*/*"})
    assert plain.status == 200 and plain.body.encode() == REPORT


async def test_an_image_from_tsdds_app_reaches_the_agent_as_an_attachment_kept_in_the_hub(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    peer, _, app = running
    await _agent_online(app)
    async with httpx.AsyncClient() as http:  # as TSDD's app uploads before it sends
        path = await TsddFiles(peer.api, peer.users["ana"].token, http).upload(
            CHART, "chart.png", "image/png", upload_path("bot", "chart.png")
        )
    await app.send_content(media.encode(media.Media(media.IMAGE, path, width=3, height=2)))
    async with asyncio.timeout(30):
        reply = await app.texts.get()
    assert reply == f"Noted: {path.rsplit('/', 1)[1]} [{path.rsplit('/', 1)[1]} (image/png)]"
    messages = await _messages_of_wukongim(app)
    (attachment,) = messages[0]["attachments"]
    assert attachment["mimeType"] == "image/png"
    kept = await app.call("GET", attachment["url"], headers={"accept": "*/*"})
    assert base64.b64decode(kept.body) == CHART  # the hub's own copy, read as the person
    # the same bytes are known by their TSDD path: opening them uploads nothing
    link = await app.call("GET", attachment["url"], headers={"accept": tunnel.FILE_LINK})
    assert link.json()["path"] == path and len(peer.files()) == 1


async def test_an_upload_from_the_app_reaches_the_hub_as_the_bytes_it_stored_with_tsdd(
    running: tuple[RelayPeer, RelayHost, TunnelApp],
) -> None:
    peer, _, app = running
    archive = write_archive(package_files("notes"))  # unsigned: read, and shown with its fault
    async with httpx.AsyncClient() as http:
        path = await TsddFiles(peer.api, peer.users["ana"].token, http).upload(
            archive, "notes.lineup-provider", "application/octet-stream",
            upload_path("bot", "notes.lineup-provider"),
        )  # fmt: skip
    ref = tunnel.FileRef(path, len(archive), hashlib.sha256(archive).hexdigest())
    headers = {"content-type": "application/octet-stream"}
    sent = await app.call("POST", app.ws("/providers/packages"), headers=headers, file=ref)
    assert sent.status == 201, sent.body
    assert sent.json()["id"] == "notes" and sent.json()["refused"]["rule"] == "unsigned"

    changed = tunnel.FileRef(path, len(archive), "0" * 64)
    refused = await app.call("POST", app.ws("/providers/packages"), headers=headers, file=changed)
    assert refused.status == 400
    assert refused.json()["error"]["details"]["diagnostic"] == "LNP-RELAY-FILE-CHANGED"

    elsewhere = tunnel.FileRef("https://example.org/file/preview/chat/x", 3)
    refused = await app.call("POST", app.ws("/providers/packages"), headers=headers, file=elsewhere)
    assert refused.json()["error"]["details"]["diagnostic"] == "LNP-RELAY-FILE-URL"


async def _messages_of_wukongim(app: TunnelApp) -> list[dict[str, Any]]:
    conversations = (await app.ok("GET", app.ws("/conversations")))["conversations"]
    (wukongim,) = [c for c in conversations if c["title"] == "WuKongIM"]
    listed = await app.ok("GET", app.ws(f"/conversations/{wukongim['id']}/messages"))
    return [m for m in listed["messages"] if m["author"]["kind"] == "user"]
