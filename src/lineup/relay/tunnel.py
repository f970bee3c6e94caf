"""LineUp's tunnel over WuKongIM: the custom message contents 3101–3104, with no I/O.

In relay mode a person's app speaks to the agent's relay host exactly as it speaks to a hub —
its REST calls and its realtime socket (``/ws/client``) — carried as WuKongIM messages whose
contents are JSON objects with a ``type`` (docs/relay-mode.md is the protocol):

* 3101 **request** (app → agent): ``{"type":3101,"id","method","path","headers","body"}``
* 3102 **response** (agent → app): ``{"type":3102,"id","status","headers","body","part",
  "parts"}``; a body over :data:`PART_BYTES` goes in several messages with the same ``id``
* 3103 **socket** (both): ``op`` ``open`` (``path``), ``frame`` (``data``), ``close``
  (``code``, ``reason``); sent without persisting. A ``close`` from the agent for the socket
  :data:`ALL_SOCKETS` closes every socket the app had with it (the host started again)
* 3104 **tools** (app → agent): ``{"type":3104,"tools":[…]}``, the tools the app renders

A request's body may instead be a file the app stored with TangSengDaoDao (``"file":
{"url", "size", "sha256"}``, :class:`FileRef`): the host fetches it and sends its bytes. A
``GET`` of a hub file with ``accept`` :data:`FILE_LINK` is answered with where to open it
(:class:`FileLink`), not with its bytes.

WuKongIM's own contents are recognised too: text (1), and images (2), voice (4) and files (8)
(:mod:`lineup.relay.media`). Anything else parses to ``None`` (ignored).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from lineup.relay import media
from lineup.relay.media import FILE, IMAGE, VOICE, Media

REQUEST = 3101
RESPONSE = 3102
SOCKET = 3103
TOOLS = 3104

TEXT = 1

FILE_LINK = "application/vnd.lineup.file-link+json"
"""The ``accept`` of a hub file ``GET`` that asks where to open the file, and the type of the
answer: ``{"url", "path", "name", "mimeType", "size", "sha256"}``."""

ALL_SOCKETS = "*"
"""The socket id of a ``close`` that ends all of a person's sockets at once."""

PART_BYTES = 32 * 1024
"""The largest body piece of one 3102 message, in UTF-8 bytes."""

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
SAFE_METHODS = frozenset({"GET", "HEAD"})


class TunnelError(ValueError):
    """A tunnel message that does not follow the protocol (it is ignored and counted)."""


@dataclass(frozen=True, slots=True)
class FileRef:
    """A request body the app stored with TSDD: its file path (or URL on the TSDD API), its
    size, and its SHA-256 when the app could compute it."""

    url: str
    size: int
    sha256: str | None = None


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    file: FileRef | None = None

    @property
    def wants_file_link(self) -> bool:
        return self.method == "GET" and self.headers.get("accept", "").strip() == FILE_LINK


@dataclass(frozen=True, slots=True)
class FileLink:
    """Where a hub file opens: TSDD's address of the same bytes."""

    url: str
    path: str
    name: str
    mime_type: str
    size: int
    sha256: str

    def json(self) -> str:
        return json.dumps({"url": self.url, "path": self.path, "name": self.name,
                           "mimeType": self.mime_type, "size": self.size,
                           "sha256": self.sha256}, ensure_ascii=False)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Response:
    id: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""


@dataclass(frozen=True, slots=True)
class SocketOpen:
    socket: str
    path: str


@dataclass(frozen=True, slots=True)
class SocketFrame:
    socket: str
    data: str


@dataclass(frozen=True, slots=True)
class SocketClose:
    socket: str
    code: int = 1000
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Tools:
    tools: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Text:
    """A WuKongIM text (type 1)."""

    content: str


@dataclass(frozen=True, slots=True)
class ResponsePart:
    id: str
    status: int
    headers: dict[str, str]
    body: str
    part: int
    parts: int


Message = Request | ResponsePart | SocketOpen | SocketFrame | SocketClose | Tools | Text | Media

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _str(data: dict[str, Any], key: str, *, limit: int = 4096) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise TunnelError(f'"{key}" must be a non-empty string')
    return value


def _headers(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise TunnelError('"headers" must be an object of strings')
    return {k.lower(): v for k, v in value.items()}


def parse(content: bytes) -> Message | None:
    """One message's content; None for a content type the tunnel does not use. Raises
    :class:`TunnelError` for a tunnel type whose fields are wrong."""
    try:
        data = json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind == REQUEST:
        method = _str(data, "method").upper()
        if method not in METHODS:
            raise TunnelError(f"method {method!r} is not tunnelled")
        path = _str(data, "path", limit=8192)
        if not path.startswith("/") or path.startswith("//"):
            raise TunnelError('"path" must be an absolute path')
        body = data.get("body")
        if body is not None and not isinstance(body, str):
            raise TunnelError('"body" must be text or null')
        ref = _file_ref(data.get("file"))
        if ref is not None and body is not None:
            raise TunnelError('a request has a "body" or a "file", not both')
        return Request(
            _str(data, "id", limit=128), method, path, _headers(data.get("headers")), body, ref
        )
    if kind == RESPONSE:
        part, parts, status = data.get("part", 0), data.get("parts", 1), data.get("status")
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (part, parts, status)):
            raise TunnelError('"status", "part" and "parts" must be whole numbers')
        if not 0 <= part < parts:
            raise TunnelError('"part" must be in 0 .. "parts" - 1')
        assert isinstance(status, int)
        body = data.get("body") or ""
        if not isinstance(body, str):
            raise TunnelError('"body" must be text')
        return ResponsePart(
            _str(data, "id", limit=128), status, _headers(data.get("headers")), body, part, parts
        )
    if kind == SOCKET:
        socket, op = _str(data, "socket", limit=128), data.get("op")
        if op == "open":
            path = _str(data, "path", limit=8192)
            if not path.startswith("/"):
                raise TunnelError('"path" must be an absolute path')
            return SocketOpen(socket, path)
        if op == "frame":
            frame = data.get("data")
            if not isinstance(frame, str):
                raise TunnelError('a socket frame\'s "data" must be text')
            return SocketFrame(socket, frame)
        if op == "close":
            code, reason = data.get("code", 1000), data.get("reason", "")
            if not isinstance(code, int) or not isinstance(reason, str):
                raise TunnelError('"code" must be a number and "reason" text')
            return SocketClose(socket, code, reason)
        raise TunnelError(f"socket op {op!r} is not open, frame or close")
    if kind == TOOLS:
        tools = data.get("tools")
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise TunnelError('"tools" must be a list of tool objects')
        return Tools(tools)
    if kind == TEXT:
        text = data.get("content")
        return Text(text) if isinstance(text, str) and text else None
    if kind in (IMAGE, VOICE, FILE):
        return media.parse(data)
    return None


def _file_ref(value: Any) -> FileRef | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TunnelError('"file" must be an object')
    url, size, digest = value.get("url"), value.get("size"), value.get("sha256")
    if not isinstance(url, str) or not url or len(url) > 2048:
        raise TunnelError('"file.url" must be a TSDD file path')
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise TunnelError('"file.size" must be a whole number of bytes')
    if digest is not None and (not isinstance(digest, str) or not _SHA256.match(digest)):
        raise TunnelError('"file.sha256" must be 64 lower-case hexadecimal digits')
    return FileRef(url, size, digest)


def _dump(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request(req: Request) -> bytes:
    data: dict[str, Any] = {"type": REQUEST, "id": req.id, "method": req.method,
                            "path": req.path, "headers": req.headers, "body": req.body}  # fmt: skip
    if req.file is not None:
        data["file"] = {"url": req.file.url, "size": req.file.size}
        if req.file.sha256 is not None:
            data["file"]["sha256"] = req.file.sha256
    return _dump(data)


def response_parts(resp: Response, *, part_bytes: int = PART_BYTES) -> list[bytes]:
    """The response as one or more 3102 messages (part 0..parts-1), each body piece at most
    ``part_bytes`` of UTF-8, cut between characters."""
    pieces = _split_utf8(resp.body, part_bytes)
    return [
        _dump(
            {
                "type": RESPONSE,
                "id": resp.id,
                "status": resp.status,
                "headers": resp.headers,
                "body": piece,
                "part": n,
                "parts": len(pieces),
            }
        )
        for n, piece in enumerate(pieces)
    ]


def _split_utf8(text: str, limit: int) -> list[str]:
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(raw):
        end = min(start + limit, len(raw))
        while end < len(raw) and raw[end] & 0xC0 == 0x80:  # not inside a character
            end -= 1
        pieces.append(raw[start:end].decode("utf-8"))
        start = end
    return pieces


def socket_open(socket: str, path: str) -> bytes:
    return _dump({"type": SOCKET, "socket": socket, "op": "open", "path": path})


def socket_frame(socket: str, data: str) -> bytes:
    return _dump({"type": SOCKET, "socket": socket, "op": "frame", "data": data})


def socket_close(socket: str, code: int = 1000, reason: str = "") -> bytes:
    return _dump({"type": SOCKET, "socket": socket, "op": "close", "code": code, "reason": reason})


def tools(listed: list[dict[str, Any]]) -> bytes:
    return _dump({"type": TOOLS, "tools": listed})


def text(content: str) -> bytes:
    return _dump({"type": TEXT, "content": content})


class Reassembly:
    """Puts a response's parts back together (the app's side); parts may come in any order
    and more than once."""

    def __init__(self) -> None:
        self._parts: dict[str, dict[int, ResponsePart]] = {}

    def add(self, part: ResponsePart) -> Response | None:
        """The whole response once its last missing part arrives, else None."""
        have = self._parts.setdefault(part.id, {})
        have[part.part] = part
        if len(have) < part.parts:
            return None
        del self._parts[part.id]
        first = have[0]
        body = "".join(have[n].body for n in range(part.parts))
        return Response(part.id, first.status, first.headers, body)
