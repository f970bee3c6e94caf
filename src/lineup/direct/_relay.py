"""The relay host: the agent's own LineUp, reached through WuKongIM instead of a port.

Why here, in :mod:`lineup.direct`, and not in :mod:`lineup.relay`: the host *is* direct
mode's embedded hub (:class:`EmbeddedHub`, the hub's own application) with its data kept
under ``$LINEUP_HOME/relay/<uid>/``, plus a bridge; :mod:`lineup.relay` stays the part that
needs no hub (the WuKongIM client and the tunnel's message format, which an app or a test
speaks too), as its import contract says.

The embedded hub listens on ``127.0.0.1`` on a free port only: the agent connects to it as
in direct mode, and the bridge is its one other client. The bridge connects out to WuKongIM
as the agent's IM user and, for the people configured (a message's ``from_uid``, set by the
server; anyone else is ignored and counted):

* runs each tunnelled request (3101) against the hub over loopback, as the person's session
  (the host signs in with the embedded hub's pre-shared token; the app sends no cookie), and
  sends the response back (3102, cut in parts) — once: a request id it has answered is
  answered again from the ledger, never run twice (:mod:`._ledger`);
* bridges tunnelled sockets (3103) to the hub's ``/ws/client``, sending frames unpersisted;
  on each connection to WuKongIM it first tells each person's app that its old sockets are
  gone (socket ``*``, close 1012), so the app reopens them and resumes;
* registers the app's tools (3104) as the person's device ``relay-<uid>``, so the agent's
  ``tool.list`` sees them;
* turns WuKongIM text (1) into the person's messages in a conversation "WuKongIM", and
  images, voice and files (2, 4, 8) into such messages with the file attached; sends the
  agent's replies there back as text, and its files as image, voice or file messages;
* moves files through TangSengDaoDao's file API (:mod:`._relay_files`): a hub file's link for
  the app, a request body the app stored there.

On start it syncs each person's channel from the last message seq it handled (TSDD's
``/v1/message/channel/sync``), so a request sent while the agent was down is answered;
WuKongIM also redelivers what was never acknowledged, and the ledger drops the repeats.
A message is acknowledged (RECVACK) only once its effect is kept.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from lineup.direct._host import end_agent
from lineup.direct._ledger import Ledger
from lineup.direct._relay_files import FileRefused, RelayFiles, error
from lineup.direct._server import EmbeddedHub
from lineup.hub.api.direct import new_agent_credential
from lineup.hub.config import DirectMode, lineup_home
from lineup.protocol.ids import new_id
from lineup.relay import media, tunnel
from lineup.relay.media import Media
from lineup.relay.tsdd import TsddError, TsddFiles, file_path, preview_url
from lineup.relay.wukongim.client import (
    Client,
    ConnectionEnded,
    ConnectionRefused,
    Message,
    connect,
)
from lineup.relay.wukongim.codec import Flags
from lineup.sdk import (
    DirectEndpoint,
    DirectModeError,
    HostedAgent,
    HostedIdentity,
    RelayOptions,
)
from lineup.sdk._config import write_private_file

log = logging.getLogger("lineup.relay")

PERSON_CHANNEL = 1
SYNC_LIMIT = 100
BODY_ENCODING = "content-transfer-encoding"
"""A request or response header saying the body is base64 (a body that is not UTF-8)."""
_REQUEST_HEADERS = frozenset({"content-type", "accept", "accept-language", "idempotency-key",
                              "if-none-match", "if-match"})  # fmt: skip
_RESPONSE_HEADERS = frozenset({"content-type", "etag", "location", "retry-after", "cache-control",
                               "content-disposition", "x-request-id"})  # fmt: skip
NO_PERSIST = Flags(no_persist=True)
RESTARTED = "The agent's relay host started again; reopen and resume."


def relay_directory(uid: str) -> Path:
    """Where the relay host keeps one agent's LineUp: ``$LINEUP_HOME/relay/<uid>/``."""
    return lineup_home() / "relay" / quote(uid, safe="")


@dataclass(frozen=True)
class Identity:
    """The embedded hub's lasting ids and secrets, made once (``identity.json``, 0600)."""

    agent_id: str
    workspace_id: str
    user_id: str
    credential: str = field(repr=False)
    token: str = field(repr=False)

    @classmethod
    def load_or_create(cls, path: Path) -> Identity:
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(data["agentId"], data["workspaceId"], data["userId"],
                       data["credential"], data["token"])  # fmt: skip
        made = cls(new_id("agent"), new_id("ws"), new_id("user"), new_agent_credential(),
                   secrets.token_urlsafe(32))  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private_file(path, json.dumps({
            "agentId": made.agent_id, "workspaceId": made.workspace_id, "userId": made.user_id,
            "credential": made.credential, "token": made.token}, indent=2))  # fmt: skip
        return made


@dataclass
class Counters:
    """What the bridge did; ``ignored`` counts messages from people not configured."""

    ignored: int = 0
    duplicates: int = 0
    malformed: int = 0
    executed: int = 0
    replayed: int = 0
    synced: int = 0


class LoopbackSession:
    """The person's session on the embedded hub, over loopback (the host's only client)."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self._token = token
        self.http = httpx.AsyncClient(base_url=base, timeout=60.0, trust_env=False)

    async def sign_in(self) -> None:
        answer = await self.http.post("/api/direct/session", json={"token": self._token})
        if answer.status_code != 200:
            raise DirectModeError(f"The relay host could not sign in to its hub: {answer.text}")

    def _csrf(self) -> str:
        for cookie in self.http.cookies.jar:
            if cookie.name.endswith("_csrf"):
                return cookie.value or ""
        return ""

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.http.cookies.jar if c.value)

    async def raw(self, method: str, path: str, *, body: bytes | None = None,
                  headers: dict[str, str] | None = None) -> httpx.Response:  # fmt: skip
        """The hub's answer as the person; signs in again once if the session lapsed."""
        for attempt in (1, 2):
            answer = await self.http.request(
                method,
                path,
                content=body,
                headers={**(headers or {}), "X-CSRF-Token": self._csrf()},
            )
            if answer.status_code != 401 or attempt == 2 or path.startswith("/api/auth/"):
                break
            await self.sign_in()  # the session's access token lapsed: the request never ran
        return answer

    async def get(self, path: str) -> httpx.Response:
        return await self.raw("GET", path)

    async def request(self, req: tunnel.Request, *, body: bytes | None = None) -> tunnel.Response:
        """Run a tunnelled request; ``body`` is its bytes when they came as a TSDD file."""
        headers = {k: v for k, v in req.headers.items() if k in _REQUEST_HEADERS}
        if body is None and req.body is not None:
            encoded = req.headers.get(BODY_ENCODING, "").lower() == "base64"
            body = base64.b64decode(req.body) if encoded else req.body.encode("utf-8")
        answer = await self.raw(req.method, req.path, body=body, headers=headers)
        out_headers = {k: v for k, v in answer.headers.items() if k.lower() in _RESPONSE_HEADERS}
        try:
            text = answer.content.decode("utf-8")
        except UnicodeDecodeError:
            text = base64.b64encode(answer.content).decode("ascii")
            out_headers[BODY_ENCODING] = "base64"
        return tunnel.Response(req.id, answer.status_code, out_headers, text)

    async def close(self) -> None:
        await self.http.aclose()


def _unknown_result(request_id: str) -> tunnel.Response:
    body = {"error": {"code": "unknown_result", "message": (
        "The agent stopped while it ran this request; whether it took effect is unknown. "
        "Look before you try again."), "details": {}}}  # fmt: skip
    return tunnel.Response(request_id, 500, {"content-type": "application/json"}, json.dumps(body))


class Bridge:
    """Between WuKongIM and the embedded hub; :meth:`run` until cancelled."""

    def __init__(
        self,
        options: RelayOptions,
        ledger: Ledger,
        session: LoopbackSession,
        identity: Identity,
        *,
        files: RelayFiles | None = None,
        connect_client: Callable[..., Any] = connect,
        retry_seconds: float = 1.0,
    ) -> None:
        self.options = options
        self.files = files
        self.ledger = ledger
        self.session = session
        self.identity = identity
        self.counters = Counters()
        self.connected = asyncio.Event()
        self._connect = connect_client
        self._retry = retry_seconds
        self._client: Client | None = None
        self._people = frozenset(options.people)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._sockets: dict[str, tuple[str, Any, asyncio.Task[None]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watcher: asyncio.Task[None] | None = None

    # --- the connection ------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, sync, serve; reconnect after a lost connection. A refused token ends it
        (:class:`DirectModeError`)."""
        self._watcher = asyncio.create_task(self._watch_replies(), name="lineup-relay-replies")
        try:
            while True:
                try:
                    client = await self._connect(
                        self.options.server,
                        self.options.uid,
                        self.options.token,
                        allow_plaintext=self.options.allow_plaintext,
                    )
                except ConnectionRefused as refused:
                    raise DirectModeError(
                        f"The WuKongIM server refused the agent's uid {self.options.uid!r} and "
                        f"token (reason {refused.reason_code}). Check LINEUP_RELAY_TOKEN."
                    ) from None
                except (OSError, ConnectionEnded, TimeoutError) as problem:
                    log.warning("relay: cannot reach %s (%s); retrying", self.options.server,
                                problem)  # fmt: skip
                    await asyncio.sleep(self._retry)
                    continue
                self._client = client
                try:
                    self.connected.set()
                    await self._forget_old_sockets()
                    await self._sync()
                    while True:
                        item = await client.recv()
                        if isinstance(item, Message):
                            await self._on_message(item)
                except ConnectionEnded as ended:
                    log.warning("relay: connection ended (%s); reconnecting", ended)
                finally:
                    self.connected.clear()
                    self._client = None
                    await self._close_sockets()
                    await client.close()
                await asyncio.sleep(self._retry)
        finally:
            await self._close_sockets()
            for task in [*self._tasks, *([self._watcher] if self._watcher else [])]:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _forget_old_sockets(self) -> None:
        """Tell each person's app that no socket it had here exists any more (this process
        started, or its WuKongIM connection was lost and its sockets closed): the app reopens
        them and resumes from its last sequence. Unpersisted: an app offline now has closed
        its sockets itself."""
        for person in self.options.people:
            await self._send(person, tunnel.socket_close(tunnel.ALL_SOCKETS, 1012, RESTARTED),
                             persist=False)  # fmt: skip

    async def _send(self, person: str, content: bytes, *, persist: bool = True,
                    client_msg_no: str | None = None) -> None:  # fmt: skip
        """Send to a person; waits for a connection (a persisted answer is not dropped)."""
        while True:
            client = self._client
            if client is None:
                await self.connected.wait()
                continue
            try:
                ack = await client.send(person, PERSON_CHANNEL, content,
                                        client_msg_no=client_msg_no,
                                        flags=None if persist else NO_PERSIST)  # fmt: skip
            except (ConnectionEnded, TimeoutError, OSError):
                if not persist:
                    return
                await asyncio.sleep(self._retry)
                continue
            if ack.reason_code != 1:
                log.warning("relay: the server refused a message to %s (reason %s)", person,
                            ack.reason_code)  # fmt: skip
            return

    def _spawn(self, coroutine: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- incoming ------------------------------------------------------------------------

    async def _sync(self) -> None:
        """Fetch what each person sent after the last seq handled (TSDD's channel sync)."""
        async with httpx.AsyncClient(base_url=self.options.api, timeout=30.0,
                                     trust_env=False) as api:  # fmt: skip
            for person in self.options.people:
                start = self.ledger.last_seq(person) + 1
                while True:
                    try:
                        answer = await api.post(
                            "/v1/message/channel/sync",
                            headers={"token": self.options.token},
                            json={
                                "channel_id": person,
                                "channel_type": PERSON_CHANNEL,
                                "start_message_seq": start,
                                "end_message_seq": 0,
                                "limit": SYNC_LIMIT,
                                "pull_mode": 1,
                            },
                        )
                        answer.raise_for_status()
                        messages = answer.json().get("messages") or []
                    except (httpx.HTTPError, ValueError) as problem:
                        log.warning("relay: message sync for %s failed (%s)", person, problem)
                        break
                    for message in messages:
                        await self._on_synced(person, message)
                    if len(messages) < SYNC_LIMIT:
                        break
                    start = max(int(m.get("message_seq") or 0) for m in messages) + 1

    async def _on_synced(self, person: str, message: dict[str, Any]) -> None:
        message_id = str(message.get("message_idstr") or message.get("message_id") or "")
        seq = int(message.get("message_seq") or 0)
        if not message_id or message.get("from_uid") != person:
            if message_id:
                self.ledger.mark_handled(message_id, person, seq)
            return
        payload = message.get("payload")
        if isinstance(payload, str):  # WuKongIM's own sync: base64 of the content
            try:
                content = base64.b64decode(payload)
            except ValueError:
                return
        else:
            content = json.dumps(payload).encode("utf-8")
        self.counters.synced += 1
        await self._handle(person, message_id, seq, content, None)

    async def _on_message(self, message: Message) -> None:
        packet = message.packet
        person = packet.from_uid
        client = self._client
        if person not in self._people or packet.channel_type != PERSON_CHANNEL:
            self.counters.ignored += 1
            log.info("relay: ignored a message from %r (not one of the people)", person)
            if client is not None:
                await client.ack(message)
            return
        await self._handle(person, str(packet.message_id), packet.message_seq, message.content,
                           message)  # fmt: skip

    async def _handle(self, person: str, message_id: str, seq: int, content: bytes,
                      message: Message | None) -> None:  # fmt: skip
        async def done() -> None:
            if seq or message is None or not message.packet.flags.no_persist:
                self.ledger.mark_handled(message_id, person, seq)
            client = self._client
            if message is not None and client is not None:
                with contextlib.suppress(ConnectionEnded, OSError):
                    await client.ack(message)

        if self.ledger.handled(message_id):
            self.counters.duplicates += 1
            await done()
            return
        try:
            parsed = tunnel.parse(content)
        except tunnel.TunnelError as problem:
            self.counters.malformed += 1
            log.info("relay: a malformed tunnel message from %s: %s", person, problem)
            await done()
            return
        match parsed:
            case tunnel.Request():
                self._spawn(self._request(person, parsed, done), f"lineup-relay-{parsed.id}")
                return
            case tunnel.SocketOpen():
                await self._open_socket(person, parsed)
            case tunnel.SocketFrame():
                await self._socket_frame(person, parsed)
            case tunnel.SocketClose():
                await self._close_socket(person, parsed.socket, parsed.code, parsed.reason)
            case tunnel.Tools():
                self._spawn(self._register_tools(person, parsed, done), "lineup-relay-tools")
                return
            case tunnel.Text() | Media():
                self._spawn(self._text(person, message_id, parsed, done), "lineup-relay-text")
                return
        await done()

    # --- 3101 → 3102 ---------------------------------------------------------------------

    async def _request(self, person: str, req: tunnel.Request, done: Callable[[], Any]) -> None:
        key = f"{person}\n{req.id}"
        running = self._running.get(key)
        if running is not None:  # the same request again while it runs: one answer comes
            self.counters.duplicates += 1
            await done()
            return
        self._running[key] = asyncio.current_task()  # type: ignore[assignment]
        try:
            seen = self.ledger.seen(req.id, person)
            if seen is not None and seen.response is not None:
                self.counters.replayed += 1
                response = seen.response
            elif seen is not None and seen.method not in tunnel.SAFE_METHODS:
                response = _unknown_result(req.id)
                self.ledger.finish(person, response)
            else:
                self.ledger.start(req.id, person, req.method)
                try:
                    response = await self._run(person, req)
                except httpx.HTTPError as problem:
                    log.warning("relay: %s %s failed on the hub: %s", req.method, req.path,
                                problem)  # fmt: skip
                    response = _unknown_result(req.id)
                self.counters.executed += 1
                self.ledger.finish(person, response)
            # the same request asked again is answered again: a fresh client_msg_no, which a
            # server deduplicating sends by it would otherwise swallow
            again = "" if seen is None else f"-{uuid.uuid4().hex[:8]}"
            for n, part in enumerate(tunnel.response_parts(response)):
                await self._send(person, part, client_msg_no=f"r{n}{again}-{req.id}"[:64])
            await done()
        finally:
            self._running.pop(key, None)

    async def _run(self, person: str, req: tunnel.Request) -> tunnel.Response:
        """A request against the hub: a file link, a body fetched from TSDD, or as it came."""
        if req.wants_file_link or req.file is not None:
            if self.files is None:
                return error(req.id, 501, "unavailable", "This relay host has no file store.",
                             "LNP-RELAY-NO-FILES")  # fmt: skip
            if req.wants_file_link:
                return await self.files.link(person, req)
            assert req.file is not None
            try:
                body = await self.files.body(req.file)
            except FileRefused as refused:
                return refused.response(req.id)
            return await self.session.request(req, body=body)
        return await self.session.request(req)

    # --- 3104 ------------------------------------------------------------------------------

    async def _register_tools(self, person: str, listed: tunnel.Tools,
                              done: Callable[[], Any]) -> None:  # fmt: skip
        device = f"relay-{person}"[:64]
        body = json.dumps({"tools": listed.tools, "name": f"{person} (relay)"[:100]})
        req = tunnel.Request(
            uuid.uuid4().hex, "PUT",
            f"/api/workspaces/{self.identity.workspace_id}/devices/{quote(device, safe='')}/tools",
            {"content-type": "application/json"}, body,
        )  # fmt: skip
        answer = await self.session.request(req)
        if answer.status >= 400:
            log.warning("relay: %s's tools were refused: %s", person, answer.body[:500])
        await done()

    # --- 3103 ------------------------------------------------------------------------------

    async def _open_socket(self, person: str, opened: tunnel.SocketOpen) -> None:
        from websockets.asyncio.client import connect as ws_connect

        key = f"{person}\n{opened.socket}"
        if key in self._sockets:
            return
        path = urlsplit(opened.path)
        if path.path != "/ws/client":
            await self._send(person, tunnel.socket_close(opened.socket, 4404, "no such socket"),
                             persist=False)  # fmt: skip
            return
        url = self.session.base.replace("http", "ws", 1) + opened.path
        try:
            hub_socket = await ws_connect(
                url, additional_headers={"Cookie": self.session.cookie_header()},
                max_size=1 << 22, open_timeout=10,
            )  # fmt: skip
        except (OSError, TimeoutError, Exception) as problem:
            log.warning("relay: the hub refused a socket: %s", problem)
            await self._send(person, tunnel.socket_close(opened.socket, 1011, "refused"),
                             persist=False)  # fmt: skip
            return
        pump = self._spawn(self._pump(person, opened.socket, hub_socket), "lineup-relay-socket")
        self._sockets[key] = (person, hub_socket, pump)

    async def _pump(self, person: str, socket_id: str, hub_socket: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        code, reason = 1000, ""
        try:
            async for frame in hub_socket:
                text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
                await self._send(person, tunnel.socket_frame(socket_id, text), persist=False)
        except ConnectionClosed:
            pass
        finally:
            if hub_socket.close_code is not None:
                code, reason = hub_socket.close_code, hub_socket.close_reason or ""
            if self._sockets.pop(f"{person}\n{socket_id}", None) is not None:
                await self._send(person, tunnel.socket_close(socket_id, code, reason),
                                 persist=False)  # fmt: skip

    async def _socket_frame(self, person: str, frame: tunnel.SocketFrame) -> None:
        held = self._sockets.get(f"{person}\n{frame.socket}")
        if held is None:  # gone (the agent restarted): the app reopens and resumes
            await self._send(person, tunnel.socket_close(frame.socket, 4410, "gone"),
                             persist=False)  # fmt: skip
            return
        with contextlib.suppress(Exception):
            await held[1].send(frame.data)

    async def _close_socket(self, person: str, socket_id: str, code: int, reason: str) -> None:
        held = self._sockets.pop(f"{person}\n{socket_id}", None)
        if held is not None:
            with contextlib.suppress(Exception):
                await held[1].close(code if 1000 <= code < 5000 else 1000, reason[:120])

    async def _close_sockets(self) -> None:
        for key in list(self._sockets):
            _person, hub_socket, _ = self._sockets.pop(key)
            with contextlib.suppress(Exception):
                await hub_socket.close()

    # --- WuKongIM text ⇄ a conversation -----------------------------------------------------

    def _ws(self, path: str) -> str:
        return f"/api/workspaces/{self.identity.workspace_id}{path}"

    async def _conversation(self, person: str) -> str | None:
        key = f"conversation:{person}"
        known = self.ledger.get(key)
        if known:
            return known
        title = "WuKongIM" if len(self._people) == 1 else f"WuKongIM · {person}"
        made = await self.session.request(tunnel.Request(
            uuid.uuid4().hex, "POST", self._ws("/conversations"),
            {"content-type": "application/json", "idempotency-key": f"relay-conv-{person}"[:100]},
            json.dumps({"title": title, "agentIds": [self.identity.agent_id]}),
        ))  # fmt: skip
        if made.status >= 400:
            log.warning("relay: cannot make the WuKongIM conversation: %s", made.body[:500])
            return None
        conversation_id = str(json.loads(made.body)["id"])
        self.ledger.put(key, conversation_id)
        self.ledger.put(f"person-of:{conversation_id}", person)
        return conversation_id

    async def _text(self, person: str, message_id: str, item: tunnel.Text | Media,
                    done: Callable[[], Any]) -> None:  # fmt: skip
        """A text, or an image, voice or file (stored in the hub and attached), from a person
        in TSDD's app, as their message in the WuKongIM conversation."""
        conversation_id = await self._conversation(person)
        if conversation_id is not None:
            body: dict[str, Any] = {"targetAgentId": self.identity.agent_id}
            if isinstance(item, tunnel.Text):
                body["content"] = item.content
            else:
                body["content"] = item.default_name()
                attachment = await self._attachment(message_id, item)
                if attachment is not None:
                    body["attachments"] = [attachment]
            posted = await self.session.request(tunnel.Request(
                uuid.uuid4().hex, "POST", self._ws(f"/conversations/{conversation_id}/messages"),
                {"content-type": "application/json",
                 "idempotency-key": f"relay-msg-{message_id}"[:100]},
                json.dumps(body),
            ))  # fmt: skip
            if posted.status >= 400:
                log.warning("relay: a WuKongIM message was refused: %s", posted.body[:500])
        await done()

    async def _attachment(self, message_id: str, item: Media) -> dict[str, Any] | None:
        """Kept in the hub when it can be fetched; else a link to TSDD's address of it (the
        hub takes only http(s) links: anything else is left out)."""
        name = item.default_name()
        if self.files is not None:
            try:
                return await self.files.incoming(message_id, item)
            except FileRefused as refused:
                log.warning("relay: a person's file was not kept (%s)", refused)
        path = file_path(self.options.api, item.url)
        url = preview_url(self.options.api, path, filename=name) if path else item.url
        return {"name": name, "url": url} if url.startswith(("https://", "http://")) else None

    async def _watch_replies(self) -> None:
        """The agent's messages in the WuKongIM conversations go back as text (type 1)."""
        from websockets.asyncio.client import connect as ws_connect
        from websockets.exceptions import ConnectionClosed

        ws = self.identity.workspace_id
        url = self.session.base.replace("http", "ws", 1) + f"/ws/client?workspaceId={ws}"
        while True:
            try:
                async with ws_connect(
                    url, additional_headers={"Cookie": self.session.cookie_header()}
                ) as socket:
                    cursor = int(self.ledger.get("reply-cursor") or 0)
                    await socket.send(json.dumps({
                        "id": new_id("evt"), "type": "client.subscribe", "version": "0.1",
                        "occurredAt": "1970-01-01T00:00:00Z", "workspaceId": ws,
                        "payload": {"lastSequence": cursor}}))  # fmt: skip
                    async for raw in socket:
                        await self._on_hub_event(json.loads(raw))
            except (ConnectionClosed, OSError, ValueError) as problem:
                log.debug("relay: the reply watcher reconnects (%s)", problem)
            await asyncio.sleep(self._retry)

    async def _on_hub_event(self, frame: dict[str, Any]) -> None:
        sequence = frame.get("sequence")
        kind = frame.get("type")
        payload = frame.get("payload") or {}
        conversation = frame.get("conversationId") or payload.get("conversationId")
        person = self.ledger.get(f"person-of:{conversation}") if conversation else None
        if person and kind == "message.created":
            author = payload.get("author") or {}
            message_id = payload.get("messageId")
            if author.get("kind") == "agent" and payload.get("content"):
                await self._send(person, tunnel.text(str(payload["content"])),
                                 client_msg_no=f"t-{message_id}"[:64])  # fmt: skip
            if author.get("kind") == "agent":
                for n, attachment in enumerate(payload.get("attachments") or ()):
                    await self._send_file(person, attachment, f"m{n}-{message_id}")
        if person and kind == "artifact.created":
            await self._send_file(
                person, payload, f"a-{payload.get('artifactId') or frame.get('id')}"
            )
        if isinstance(sequence, int):
            self.ledger.put("reply-cursor", str(sequence))

    async def _send_file(self, person: str, item: dict[str, Any], key: str) -> None:
        """The agent's file as an image, voice or file message, so TSDD's apps show it; a
        web link (or a file that cannot be stored now) goes as text."""
        url, name = str(item.get("url") or ""), str(item.get("name") or "")
        content: bytes | None = None
        if self.files is not None:
            try:
                out = await self.files.outgoing(person, url, name)
            except (TsddError, httpx.HTTPError) as problem:
                log.warning("relay: the agent's file %s was not stored with TSDD (%s)", name,
                            problem)  # fmt: skip
                out = None
            if out is not None:
                content = media.encode(out)
        if content is None:
            content = tunnel.text(f"{name}: {url}" if name else url)
        await self._send(person, content, client_msg_no=key[:64])


class RelayHost:
    """Serves a relay-mode agent's LineUp through WuKongIM (an ``AgentHost``)."""

    def __init__(self, *, directory: Path | None = None) -> None:
        self._directory = directory
        self.bridge: Bridge | None = None

    async def serve(self, agent: HostedAgent) -> None:
        options = agent.config.relay
        if options is None:
            raise DirectModeError("This agent's configuration does not say relay mode.")
        directory = self._directory or relay_directory(options.uid)
        identity = Identity.load_or_create(directory / "identity.json")
        mode = DirectMode(
            token=identity.token,
            agent_credential=identity.credential,
            workspace_id=identity.workspace_id,
            user_id=identity.user_id,
            agent_id=identity.agent_id,
            agent_name=agent.name[:100] or "agent",
            person_name=(options.person_name or options.people[0])[:100],
        )
        hub = EmbeddedHub(mode, host="127.0.0.1", port=0, directory=directory)
        ledger = Ledger(directory / "tunnel.db")
        session: LoopbackSession | None = None
        tsdd_http = httpx.AsyncClient(timeout=120.0, trust_env=False)
        agent_http: httpx.AsyncClient | None = None
        try:
            hub.bind()
            base = f"http://127.0.0.1:{hub.port}"
            server = await hub.start()
            await hub.wait_serving()
            session = LoopbackSession(base, identity.token)
            await session.sign_in()
            agent_http = httpx.AsyncClient(base_url=base, timeout=120.0, trust_env=False)
            core = asyncio.create_task(
                agent.run(base, directory / "agent" / "state.db", None,
                          identity=HostedIdentity(identity.agent_id, identity.workspace_id,
                                                  identity.credential)),
                name="lineup-relay-agent",
            )  # fmt: skip
            files = RelayFiles(TsddFiles(options.api, options.token, tsdd_http), ledger,
                               session.get, agent_http, identity.credential)  # fmt: skip
            self.bridge = Bridge(options, ledger, session, identity, files=files)
            bridge = asyncio.create_task(self.bridge.run(), name="lineup-relay-bridge")
            connected = asyncio.create_task(self.bridge.connected.wait())
            try:
                done, _ = await asyncio.wait({core, bridge, connected},
                                             return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                if connected in done:
                    log.info("relay mode: %s answers %s through %s as %s", agent.name,
                             ", ".join(options.people), options.server, options.uid)  # fmt: skip
                    agent.serving(DirectEndpoint(options.uid, 0, (options.server,)))
                    done, _ = await asyncio.wait({core, bridge, server},
                                                 return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                if bridge in done and not core.done():
                    await end_agent(core, agent.stop)
                    bridge.result()  # its error says why
                    raise DirectModeError("The relay bridge stopped; the agent stopped with it.")
                if server in done and not core.done():
                    await end_agent(core, agent.stop)
                    raise DirectModeError("The relay host's hub stopped; the agent with it.")
                await core
            finally:
                connected.cancel()
                bridge.cancel()
                await asyncio.gather(bridge, return_exceptions=True)
                if not core.done():
                    await end_agent(core, agent.stop)
        finally:
            if session is not None:
                await session.close()
            if agent_http is not None:
                await agent_http.aclose()
            await tsdd_http.aclose()
            ledger.close()
            await hub.stop()
