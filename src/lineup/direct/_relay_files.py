"""The relay host's files, which travel through TangSengDaoDao's file API, never as tunnel
messages (docs/relay-mode.md, "Files"):

* **a hub file the app opens** (a ``GET`` of ``/api/workspaces/{ws}/files/{id}`` with
  ``accept`` :data:`~lineup.relay.tunnel.FILE_LINK`): read from the embedded hub as the
  person (so the hub's membership rule holds), stored with TSDD once per SHA-256, and answered
  as its TSDD address;
* **the agent's files for TSDD's own apps** (an artifact, an attachment of its message in a
  WuKongIM conversation): stored the same way and sent as an image, voice or file message;
* **a request body the app stored with TSDD** (``"file"`` in a 3101): fetched, checked
  against its size and SHA-256, and sent to the hub as the body it would have had;
* **an image, voice or file a person sends** from TSDD's app: fetched and stored in the
  embedded hub as the agent's upload (``POST /api/agent/artifacts``, the one way a file
  enters a hub), then attached to the person's message there.

The host fetches only TSDD file paths of its own API (``file/preview/…``): a URL elsewhere is
never fetched, so a message cannot make the host reach another address.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import httpx

from lineup.direct._ledger import Ledger
from lineup.relay import media, tunnel
from lineup.relay.media import Media
from lineup.relay.tsdd import TsddError, TsddFiles, file_path, preview_url, upload_path

FILE_LIMIT = 32 * 1024 * 1024
"""The largest file the host fetches from TSDD or the hub (the hub's own limits still apply:
an artifact 10 MiB by default, a provider package 20 MiB)."""

HUB_FILE = re.compile(r"^/api/workspaces/[A-Za-z0-9_-]{1,128}/files/[A-Za-z0-9_-]{1,128}$")
_FILENAME_STAR = re.compile(r"filename\*=UTF-8''([^;]+)", re.IGNORECASE)
_FILENAME = re.compile(r'filename="([^"]*)"', re.IGNORECASE)


def disposition_name(header: str) -> str | None:
    """The file name of a ``Content-Disposition`` (RFC 6266: the UTF-8 one when given)."""
    star = _FILENAME_STAR.search(header)
    if star:
        return unquote(star.group(1).strip())
    plain = _FILENAME.search(header)
    return plain.group(1) if plain else None


def error(
    request_id: str, status: int, code: str, message: str, diagnostic: str
) -> tunnel.Response:
    """A response in the hub's error envelope, for what the host itself refuses."""
    body = {"error": {"code": code, "message": message, "details": {"diagnostic": diagnostic}}}
    return tunnel.Response(request_id, status, {"content-type": "application/json"},
                           json.dumps(body))  # fmt: skip


class FileRefused(Exception):
    """A file the host cannot fetch or take, as the response the app gets."""

    def __init__(self, status: int, code: str, message: str, diagnostic: str) -> None:
        super().__init__(message)
        self.status, self.code, self.diagnostic = status, code, diagnostic

    def response(self, request_id: str) -> tunnel.Response:
        return error(request_id, self.status, self.code, str(self), self.diagnostic)


@dataclass(frozen=True, slots=True)
class HubFile:
    data: bytes
    name: str
    mime_type: str
    sha256: str


class RelayFiles:
    """Moves files between the embedded hub and TSDD for one relay host."""

    def __init__(
        self,
        tsdd: TsddFiles,
        ledger: Ledger,
        read: Callable[[str], Awaitable[httpx.Response]],
        agent_http: httpx.AsyncClient,
        agent_credential: str,
        *,
        limit: int = FILE_LIMIT,
    ) -> None:
        self.tsdd = tsdd
        self._ledger = ledger
        self._read = read
        self._agent = agent_http
        self._credential = agent_credential
        self._limit = limit

    # --- hub → TSDD ---------------------------------------------------------------------

    async def hub_file(self, path: str) -> HubFile | httpx.Response:
        """The hub file at ``path`` as the person reads it; the hub's answer when it refuses."""
        answer = await self._read(path)
        if answer.status_code != 200:
            return answer
        data = answer.content
        digest = hashlib.sha256(data).hexdigest()
        name = disposition_name(answer.headers.get("content-disposition", "")) or "file"
        kind = answer.headers.get("content-type") or "application/octet-stream"
        return HubFile(data, name, kind, digest)

    async def store(self, person: str, file: HubFile) -> str:
        """The TSDD path of the file's bytes: stored now, or the path they already have."""
        known = self._ledger.uploaded(file.sha256)
        if known is not None:
            return known
        stored = await self.tsdd.upload(file.data, file.name, file.mime_type,
                                        upload_path(person, file.name))  # fmt: skip
        self._ledger.remember_upload(file.sha256, stored)
        return stored

    async def link(self, person: str, req: tunnel.Request) -> tunnel.Response:
        """Answer a file-link request: where the app opens the hub file ``req.path``."""
        if not HUB_FILE.match(req.path):
            return error(req.id, 400, "invalid_argument",
                         "Only a hub file (/api/workspaces/{id}/files/{id}) has a link.",
                         "LNP-RELAY-FILE-LINK")  # fmt: skip
        found = await self.hub_file(req.path)
        if isinstance(found, httpx.Response):
            headers = {k: v for k, v in found.headers.items() if k.lower() == "content-type"}
            return tunnel.Response(req.id, found.status_code, headers, found.text)
        try:
            path = await self.store(person, found)
        except TsddError as problem:
            return error(req.id, 503, "unavailable",
                         f"The file could not be stored with the IM server: {problem}",
                         "LNP-RELAY-FILE-STORE")  # fmt: skip
        url = preview_url(self.tsdd.api, path, filename=found.name)
        link = tunnel.FileLink(url, path, found.name, found.mime_type, len(found.data),
                               found.sha256)  # fmt: skip
        return tunnel.Response(req.id, 200, {"content-type": tunnel.FILE_LINK}, link.json())

    async def outgoing(self, person: str, url: str, name: str) -> Media | None:
        """The agent's hub file as a WuKongIM media content for TSDD's apps; None when it
        is not a hub file or cannot be read."""
        if not HUB_FILE.match(url):
            return None
        found = await self.hub_file(url)
        if isinstance(found, httpx.Response):
            return None
        path = await self.store(person, found)
        return media.describe(path, name or found.name, found.mime_type, found.data)

    # --- TSDD → hub ---------------------------------------------------------------------

    async def fetch(self, url: str) -> tuple[str, bytes, str]:
        """(path, bytes, content type) of a TSDD file of this host's API."""
        path = file_path(self.tsdd.api, url)
        if path is None:
            raise FileRefused(400, "invalid_argument",
                              "The file must be one stored with this agent's IM server "
                              "(a file/preview/… path of its API).",
                              "LNP-RELAY-FILE-URL")  # fmt: skip
        try:
            got = await self.tsdd.download(path, limit=self._limit)
        except TsddError as problem:
            if problem.status == 413:
                raise FileRefused(413, "invalid_argument", str(problem),
                                  "LNP-RELAY-FILE-SIZE") from None  # fmt: skip
            raise FileRefused(503, "unavailable",
                              f"The file could not be fetched from the IM server: {problem}",
                              "LNP-RELAY-FILE-FETCH") from None  # fmt: skip
        return path, got.data, got.content_type

    async def body(self, ref: tunnel.FileRef) -> bytes:
        """A request body the app stored with TSDD, exactly as the app sent it."""
        if ref.size > self._limit:
            raise FileRefused(413, "invalid_argument",
                              f"The file is larger than {self._limit:,} bytes.",
                              "LNP-RELAY-FILE-SIZE")  # fmt: skip
        path, data, _ = await self.fetch(ref.url)
        digest = hashlib.sha256(data).hexdigest()
        if len(data) != ref.size or (ref.sha256 is not None and ref.sha256 != digest):
            raise FileRefused(400, "invalid_argument",
                              "The file fetched from the IM server is not the one the app "
                              "sent (its size or SHA-256 differs). Send it again.",
                              "LNP-RELAY-FILE-CHANGED")  # fmt: skip
        self._ledger.remember_upload(digest, path)
        return data

    async def incoming(self, message_id: str, item: Media) -> dict[str, Any]:
        """A person's image, voice or file as an attachment of their hub message, stored in
        the embedded hub (:class:`FileRefused` when it cannot be fetched or kept)."""
        name = item.default_name()
        path, data, content_type = await self.fetch(item.url)
        kind = _stored_type(content_type, name)
        answer = await self._agent.post(
            f"/api/agent/artifacts?name={quote(name, safe='')}",
            content=data,
            headers={
                "authorization": f"Bearer {self._credential}",
                "content-type": kind,
                "idempotency-key": f"relay-in-{message_id}"[:100],
                "x-content-sha256": hashlib.sha256(data).hexdigest(),
            },
        )
        if answer.status_code != 201:
            raise FileRefused(answer.status_code, "invalid_argument",
                              f"The hub did not keep the file: {answer.text[:300]}",
                              "LNP-RELAY-FILE-KEEP")  # fmt: skip
        stored = answer.json()
        self._ledger.remember_upload(str(stored["sha256"]), path)
        return {"name": name, "url": stored["url"], "mimeType": kind.split(";", 1)[0]}


def _stored_type(content_type: str, name: str) -> str:
    """The type to keep a fetched file under: the storage's, unless it only says bytes."""
    essence = content_type.split(";", 1)[0].strip().lower()
    if essence and essence != "application/octet-stream":
        return content_type
    guessed, _ = mimetypes.guess_type(name)
    return guessed or "application/octet-stream"
