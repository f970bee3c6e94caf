"""What every HTTP request must pass before any route sees it: a bounded body, and no NUL.

A body is refused with 413 before it is read when its ``Content-Length`` is over the limit,
and as soon as the bytes received go over it when it comes in chunks: an unauthenticated
endpoint must not let a stranger make the hub hold hundreds of megabytes. A JSON body (or
one without a length) is then handed to the route as one piece, small by construction;
any other body with a length streams on to the route as it arrives.

U+0000 is refused anywhere in a JSON body's strings (keys too), in the path and in the query:
PostgreSQL cannot store it and an agent's JSON decoder may not accept it, so a task titled
with one would be stored on SQLite and never delivered. Refusing it here gives both databases
the same answer and keeps it out of every frame the hub sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lineup.core.package import MAX_PACKAGE_BYTES
from lineup.hub.api.files import UPLOAD_PATH
from lineup.hub.api.session_files import IMPORT_PATH
from lineup.hub.config import Settings
from lineup.hub.errors import error_response
from lineup.protocol.errors import InvalidArgument, PayloadTooLarge
from lineup.protocol.session_file import MAX_FILE_BYTES

LARGER_BODIES: tuple[tuple[re.Pattern[str], Callable[[Settings], int]], ...] = (
    (re.compile(re.escape(UPLOAD_PATH)), lambda settings: settings.artifact_max_bytes),
    (
        re.compile(r"/api/workspaces/[^/]+/providers/packages"),
        lambda settings: max(settings.max_body_bytes, MAX_PACKAGE_BYTES),
    ),
    (re.compile(IMPORT_PATH), lambda settings: max(settings.max_body_bytes, MAX_FILE_BYTES)),
)
"""Routes (whole-path patterns) that take bodies over the hub's limit
(``LINEUP_MAX_BODY_BYTES``), each with its own limit, from the settings. Add an upload route
here."""

_NUL_ESCAPE = b"\\u0000"


def body_limit(path: str, settings: Settings) -> int:
    path = path.rstrip("/") or "/"
    for pattern, limit in LARGER_BODIES:
        if pattern.fullmatch(path):
            return limit(settings)
    return settings.max_body_bytes


def contains_nul(value: Any) -> bool:
    """True when a decoded JSON value holds U+0000 in any string, key or nested value."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(k) or contains_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_nul(v) for v in value)
    return False


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The request body is larger than this endpoint accepts ({limit:,} bytes).",
        details={"maxBytes": limit},
    )


def _nul(where: str) -> InvalidArgument:
    return InvalidArgument(
        f"The request's {where} contains a NUL character (U+0000), which the hub does not "
        "accept in any text.",
        details={"where": where},
    )


def nul_in_address(scope: Scope) -> str | None:
    if "\x00" in scope["path"]:
        return "path"
    query = scope.get("query_string", b"")
    if b"%00" in query and "\x00" in unquote(query.decode("latin-1")):
        return "query"
    return None


def _is_json(scope: Scope) -> bool:
    """JSON, or no type given (FastAPI reads an untyped body as JSON too)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            kind: bytes = value.split(b";", 1)[0].strip().lower()
            return kind == b"application/json" or kind.endswith(b"+json")
    return True


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RequestGuard:
    """ASGI middleware: the body limit and the NUL refusal for HTTP requests; the NUL refusal
    in the address of a WebSocket too."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        where = nul_in_address(scope)
        if where is not None:
            if scope["type"] == "websocket":  # refused before the handshake: HTTP 403
                await send({"type": "websocket.close", "code": 1008})
            else:
                await error_response(_nul(where))(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        limit = body_limit(scope["path"], self.settings)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse_too_large(limit, scope, receive, send)
            return
        json_body = _is_json(scope)
        if declared is not None and not json_body:
            # the server delivers no more than Content-Length: an upload streams on untouched
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _refuse_too_large(limit, scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if json_body and _NUL_ESCAPE in body and _json_with_nul(body):
            await error_response(_nul("body"))(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


async def _refuse_too_large(limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    """413, and the connection closed after it: the rest of the body is not worth reading."""
    response = error_response(_too_large(limit), {"Connection": "close"})
    await response(scope, receive, send)


def _json_with_nul(body: bytes) -> bool:
    try:
        value = json.loads(body)
    except ValueError:  # not JSON: the route answers that itself
        return False
    return contains_nul(value)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body as one message, then whatever the client sends next (its disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
