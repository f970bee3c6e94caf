"""Logs: plain text by default, JSON lines with ``LINEUP_LOG_FORMAT=json``.

Every record carries the node, and — when it was written while serving one — the request id
(``X-Request-ID`` if the caller sent one, else a new ULID, echoed in the response) or the
WebSocket connection id. Code adds what it knows with ``extra=``: ``event_id``,
``agent_id``, ``workspace_id``, ``sequence``, ``task_id``; the JSON formatter writes every
such field. uvicorn's access lines become JSON too (method, path, status, client).
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lineup.protocol.ids import new_ulid

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lineup_request_id", default=None
)

_RESERVED = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "color_message"}


class JsonFormatter(logging.Formatter):
    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "node": self.node_id,
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            args = record.args
            if len(args) == 5:
                client, method, path, _version, status = args
                entry.update(
                    msg=f"{method} {path} {status}",
                    method=method,
                    path=path,
                    status=status,
                    client=client,
                )
        if "msg" not in entry:
            entry["msg"] = record.getMessage()
        rid = getattr(record, "request_id", None) or request_id.get()
        if rid:
            entry["request_id"] = rid
        for key, value in vars(record).items():
            if key not in _RESERVED and key not in entry and not key.startswith("_"):
                entry[key] = value if _plain(value) else repr(value)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def _plain(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | list | dict)


class _ContextFilter(logging.Filter):
    """Text logs: append ``[request id]`` when there is one."""

    def filter(self, record: logging.LogRecord) -> bool:
        rid = request_id.get()
        record.rid = f" [{rid}]" if rid else ""
        return True


def configure(level: str, fmt: str, node_id: str) -> dict[str, Any]:
    """Set up the root logger; returns a uvicorn ``log_config`` that defers to it."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler()
    if fmt == "json":
        handler.setFormatter(JsonFormatter(node_id))
    else:
        handler.addFilter(_ContextFilter())
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s %(levelname)s {node_id} %(name)s%(rid)s %(message)s")
        )
    root.addHandler(handler)
    root.setLevel(level.upper())
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {
            name: {"handlers": [], "propagate": True, "level": level.upper()}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }


class RequestContext:
    """ASGI middleware: a request id per HTTP request (echoed as ``X-Request-ID``) and per
    WebSocket connection, for the logs; ``on_status`` sees each HTTP response status."""

    def __init__(self, app: ASGIApp, on_status: Callable[[Scope, int], None] | None = None):
        self.app = app
        self.on_status = on_status

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        rid = request_id_of(scope)
        token = request_id.set(rid)
        try:
            if kind == "websocket":
                await self.app(scope, receive, send)
                return
            on_status = self.on_status

            async def send_with_id(message: Message) -> None:
                if message["type"] == "http.response.start":
                    headers = list(message.get("headers", []))
                    headers.append((b"x-request-id", rid.encode()))
                    message["headers"] = headers
                    if on_status is not None:
                        on_status(scope, int(message["status"]))
                await send(message)

            await self.app(scope, receive, send_with_id)
        finally:
            request_id.reset(token)


def request_id_of(scope: Scope) -> str:
    """The caller's ``X-Request-Id`` when it sent a usable one, else a new id."""
    given = _header(scope, b"x-request-id")
    return given if given and len(given) <= 128 else new_ulid()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            text: str = value.decode("latin-1")
            return text
    return None
