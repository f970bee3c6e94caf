"""People's apps' WebSocket: subscribe with the last sequence seen, get a snapshot-consistent
replay, then ``client.caught_up``, then live events in order — only from a workspace the
signed-in person belongs to. Commands go over HTTP; this socket only reads — except that an
app may register its tools (``tool.list``) and answer tool calls (``tool.result``) here too
(see ``lineup.hub.app_tools``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from urllib.parse import urlsplit

from starlette.websockets import WebSocket, WebSocketDisconnect

from lineup.domain.retention import behind
from lineup.hub import app_tools
from lineup.hub.accounts import person_in, session_live, session_user
from lineup.hub.api.deps import session_cookie
from lineup.hub.fanout import Ephemeral
from lineup.hub.follow import Follower, SendPage
from lineup.hub.sight import Sight
from lineup.hub.state import HubState
from lineup.protocol import events as ev
from lineup.protocol.codec import Decoded, Rejected, decode_frame, encode, refuse_binary
from lineup.protocol.envelope import PROTOCOL_VERSION, Envelope
from lineup.protocol.errors import Forbidden, InvalidArgument, LineupError, Unauthenticated
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id
from lineup.protocol.session import CloseCode
from lineup.protocol.times import iso, ms_to_datetime
from lineup.store import RawEvent, StoredEvent

log = logging.getLogger("lineup.hub.clients")


def origin_allowed(hub: HubState, socket: WebSocket) -> bool:
    """Browsers always send Origin; it must be this hub (or a configured origin)."""
    origin = socket.headers.get("origin")
    if origin is None:
        return True  # not a browser: the session cookie is still required
    allowed = set(hub.settings.allowed_origins)
    host = socket.headers.get("host", "")
    parts = urlsplit(origin)
    return origin in allowed or (parts.netloc == host and parts.scheme in ("http", "https"))


async def serve_client(hub: HubState, socket: WebSocket, workspace_id: str) -> None:
    if not origin_allowed(hub, socket):
        await socket.close(CloseCode.FORBIDDEN, "origin not allowed")
        return
    await socket.accept()
    try:
        signed = await session_user(hub, socket.cookies.get(session_cookie(hub.settings)))
        person = await person_in(hub, signed.user, workspace_id)
    except LineupError as exc:
        await socket.send_text(encode(ErrorFrame.from_error(exc)))
        code = CloseCode.UNAUTHENTICATED if exc.code == "unauthenticated" else CloseCode.FORBIDDEN
        await socket.close(code, exc.message[:120])
        return
    lock = asyncio.Lock()

    async def send(text: str) -> None:
        async with lock:
            await socket.send_text(text)

    ending: list[asyncio.Task[None]] = []

    async def end_session() -> None:
        ended = Unauthenticated(
            "Your session has ended; sign in again.", details={"reason": "session_ended"}
        )
        with contextlib.suppress(Exception):
            await send(encode(ErrorFrame.from_error(ended)))
            await socket.close(CloseCode.UNAUTHENTICATED, ended.message)

    def session_ended() -> None:
        forget()  # it leaves the registry now; the close handshake takes what it takes
        if not ending:
            ending.append(asyncio.create_task(end_session()))

    async def check_session() -> None:
        """Another node may end this session: look again now and then. The session, not its
        access token: a socket opened with a live access token stays open past the token's
        minutes for as long as the session holds (the app reconnects with a fresh token)."""
        while True:
            await asyncio.sleep(hub.settings.session_check_interval)
            try:
                live = await session_live(hub, signed.session.id)
            except Exception:  # the database unreachable for a moment: look again next time
                log.warning("could not check a live socket's session", exc_info=True)
                continue
            if not live:
                session_ended()
                return

    forget = hub.live_sessions.opened(signed.user.id, signed.session.id, session_ended)
    checking = asyncio.create_task(check_session())

    sight = await hub.store.read(lambda r: Sight.load(r, person))

    async def send_event(event: StoredEvent) -> None:
        if not sight.sees(event):  # another project's, which this person is not in
            return
        text = encode_event(event)  # a replay's hot path: no extra coroutine through send()
        async with lock:
            await socket.send_text(text)

    def page_sender(batched: bool) -> SendPage:
        async def send_page(page: list[RawEvent]) -> None:
            frames = [encode_raw(raw) for raw in page if sight.sees_raw(raw)]
            if batched:
                frames = batch_texts(frames, person.workspace_id, hub.clock())
            async with lock:
                for text in frames:
                    await socket.send_text(text)

        return send_page

    async def send_ephemeral(item: Ephemeral) -> None:
        frame = item.frame
        if not sight.sees_item(frame.get("conversationId"), frame.get("taskId")):
            return
        await send(_dumps(frame))

    follower: Follower | None = None
    live: asyncio.Task[None] | None = None
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                break
            raw = message.get("text")
            result = refuse_binary() if raw is None else decode_frame(raw, ev.Sender.USER)
            if isinstance(result, Rejected):
                await send(encode(result.error))
                continue
            if isinstance(result, Decoded) and result.envelope.type in app_tools.CLIENT_TYPES:
                # an app registers its tools or answers a tool call
                device = socket.query_params.get("deviceId")
                answer = await app_tools.handle_client_frame(hub, person, result, device)
                await send(encode(answer))
                continue
            if not isinstance(result, Decoded) or result.envelope.type != "client.subscribe":
                error = InvalidArgument("This socket accepts client.subscribe only.")
                envelope_id = getattr(getattr(result, "envelope", None), "id", None)
                await send(encode(ErrorFrame.from_error(error, envelope_id)))
                continue
            if result.envelope.workspace_id != person.workspace_id:
                refusal = Forbidden("Subscribe to the workspace this socket was opened for.")
                await send(encode(ErrorFrame.from_error(refusal, result.envelope.id)))
                continue
            if live is not None:
                live.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await live
            subscribe: ev.ClientSubscribe = result.payload
            await send(encode(Ack(id=result.envelope.id)))
            after = subscribe.last_sequence
            resync = await resync_frame(hub, person.workspace_id, after)
            if resync is not None:  # the app rebuilds from the views; live from the latest
                await send(encode(resync))
                after = int(resync.payload["latestSequence"])
            follower = Follower(
                hub.store,
                hub.broker,
                person.workspace_id,
                after,
                send_event,
                send_ephemeral,
                send_page=page_sender(subscribe.batch),
            )
            caught_up = await follower.replay()
            if resync is None:  # a compaction that overtook the replay left holes in it
                overtaken = await resync_frame(hub, person.workspace_id, after)
                if overtaken is not None:
                    await send(encode(overtaken))
            await send(encode(caught_up_frame(hub, person.workspace_id, caught_up)))
            live = asyncio.create_task(follower.live())
    except WebSocketDisconnect:
        pass
    finally:
        forget()
        for task in (live, checking, *ending):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if follower is not None:
            follower.close()


async def resync_frame(hub: HubState, workspace_id: str, after: int) -> Envelope | None:
    """``system.resync_required`` for an app whose cursor is behind the log's horizon: the
    replay would have holes, so the hub goes on after the latest sequence instead."""
    latest, horizon = await hub.store.read(
        lambda r: (r.last_sequence(workspace_id), r.log_horizon(workspace_id))
    )
    if not behind(after, horizon):
        return None
    payload = ev.SystemResyncRequired(
        reason="The log was compacted: rebuild from the HTTP views, then follow live.",
        earliest_sequence=horizon,
        latest_sequence=latest,
        resume_after=latest,
    )
    return Envelope(
        id=new_id("evt"),
        type="system.resync_required",
        occurred_at=ms_to_datetime(hub.clock()),
        workspace_id=workspace_id,
        payload=payload.wire(),
    )


def caught_up_frame(hub: HubState, workspace_id: str, sequence: int) -> Envelope:
    return Envelope(
        id=new_id("evt"),
        type="client.caught_up",
        occurred_at=ms_to_datetime(hub.clock()),
        workspace_id=workspace_id,
        payload=ev.ClientCaughtUp(sequence=sequence).wire(),
    )


def encode_event(event: StoredEvent) -> str:
    """The text of ``person_frame(event)``, written straight out and kept on the event: every
    app following the workspace on this node writes the same text, made once. A dict per
    frame through ``JSONEncoder.encode`` (which also formatted the time through a datetime)
    cost some 6 µs a frame; this takes about 2. Byte for byte the same text (tests pin it):
    the same string encoder, the same separators, the keys in the same order, the payload
    through the same C encoder."""
    cached = event.frame
    if cached is None:
        cached = _frame_text(event, _value(event.payload))
        object.__setattr__(event, "frame", cached)  # a cache: the event itself stays as it was
    return cached


def encode_raw(raw: RawEvent) -> str:
    """:func:`encode_event` of an event read back with its payload as text, which goes into
    the frame as stored: SQLite keeps the compact text the hub's encoder writes, so the frame
    is the same to the byte; PostgreSQL returns JSONB's own spelling (a space after each
    colon and comma), the same JSON."""
    return _frame_text(raw, raw.payload)


def _frame_text(event: StoredEvent | RawEvent, payload: str) -> str:
    conversation, task, correlation = event.conversation_id, event.task_id, event.correlation_id
    return (
        f'{{"id":{_string(event.id)},"type":{_string(event.type)},"version":"{PROTOCOL_VERSION}",'
        f'"occurredAt":"{iso(event.occurred_at)}","workspaceId":{_string(event.workspace_id)}'
        f"{'' if conversation is None else _CONVERSATION + _string(conversation)}"
        f"{'' if task is None else _TASK + _string(task)}"
        f',"sequence":{event.sequence:d}'
        f"{'' if correlation is None else _CORRELATION + _string(correlation)}"
        f',"payload":{payload},"actor":{_string(event.actor)}}}'
    )


BATCH_CHARS = 256 * 1024
"""A ``client.batch`` frame stops taking events once its events hold this many characters
(one event alone may exceed it): a batch stays well within what a WebSocket peer accepts."""


def batch_texts(frames: list[str], workspace_id: str, now_ms: int) -> list[str]:
    """``frames`` (event frames' texts, in order) as ``client.batch`` frames' texts."""
    head = (
        f'","type":"client.batch","version":"{PROTOCOL_VERSION}","occurredAt":"{iso(now_ms)}",'
        f'"workspaceId":{_string(workspace_id)},"payload":{{"events":['
    )
    texts: list[str] = []
    start, size = 0, 0
    for index, frame in enumerate(frames):
        if size and size + len(frame) > BATCH_CHARS:
            texts.append(_batch(head, frames[start:index]))
            start, size = index, 0
        size += len(frame)
    if start < len(frames):
        texts.append(_batch(head, frames[start:]))
    return texts


def _batch(head: str, frames: list[str]) -> str:
    return f'{{"id":"{new_id("evt")}{head}{",".join(frames)}]}}}}'


_CONVERSATION, _TASK, _CORRELATION = ',"conversationId":', ',"taskId":', ',"correlationId":'


def person_frame(event: StoredEvent) -> dict[str, object]:
    """``for_person(event)``, built directly: a replay sends 100,000 of these, and a model
    per event was a sixth of the hub's time there (a test pins the equality)."""
    frame: dict[str, object] = {
        "id": event.id,
        "type": event.type,
        "version": PROTOCOL_VERSION,
        "occurredAt": iso(event.occurred_at),
        "workspaceId": event.workspace_id,
    }
    if event.conversation_id is not None:
        frame["conversationId"] = event.conversation_id
    if event.task_id is not None:
        frame["taskId"] = event.task_id
    frame["sequence"] = event.sequence
    if event.correlation_id is not None:
        frame["correlationId"] = event.correlation_id
    frame["payload"] = event.payload
    frame["actor"] = event.actor
    return frame


def _dumps(frame: dict[str, object]) -> str:
    return _ENCODE(frame)


# one encoder, not one per frame (json.dumps with options builds a new one each call)
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

# What _ENCODE runs underneath, made once: JSONEncoder.encode makes this C encoder anew for
# every call, which cost more than the encoding of a small payload itself. No circular check
# (markers None): a payload decoded from JSON, or built by a command, has no cycles.
_string = json.encoder.encode_basestring  # ensure_ascii=False's string encoder, as _ENCODE's
_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _c_encoder(None, json.JSONEncoder().default, _string, None, ":", ",", False, False, True)
    if _c_encoder is not None
    else None
)


def _value(value: object) -> str:
    if _C_ENCODE is None:  # a Python without the C accelerator
        return _ENCODE(value)
    return "".join(_C_ENCODE(value, 0))
