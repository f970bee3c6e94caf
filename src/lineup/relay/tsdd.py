"""TangSengDaoDao's file API, as its server serves it (``modules/file/api.go``):

* ``POST /v1/file/upload?type=chat&path=/<path>`` with header ``token: <IM token>``, a
  ``multipart/form-data`` body whose part ``file`` is the file and whose field
  ``contenttype`` is the type the storage serves it with (``application/octet-stream`` when
  absent) → ``200 {"path": "file/preview/chat/<path>"}``; a refusal is
  ``400 {"status": 400, "msg": "…"}``, a missing or wrong token ``401``. (``GET
  /v1/file/upload?type=&path=`` only answers that same address as ``{"url": …}``; TSDD's
  apps call it first, nothing else needs to.)
* ``GET /v1/file/preview/<type>/<path>[?filename=<name>]``, **no token**: a ``302`` to the
  storage's own address of the file (MinIO, OSS, SeaweedFS…), served with its content type.
  Anyone with the path can read the file: paths are made unguessable (:func:`upload_path`).

The path a message carries (``url`` of an image or file content) is the upload's answer,
relative to the API's ``/v1/``; :func:`preview_url` makes it absolute. Pure helpers, then
:class:`TsddFiles`, the small HTTP client the relay host uses.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import httpx

UPLOAD_PATH = "/v1/file/upload"
PREVIEW = "file/preview/"
FILE_TYPE = "chat"
"""TSDD's upload type for a chat's files (``TypeChat``); others are for moments, stickers…"""

_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class TsddError(Exception):
    """TSDD refused or could not be reached; ``status`` 0 when no answer came."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def upload_path(channel_id: str, name: str, *, token: str | None = None) -> str:
    """Where an upload is kept, as TSDD's own apps choose it: ``/1/<channel>/<random><ext>``
    (channel type 1, the person channel; 128 random bits; the name's extension)."""
    ext = _EXTENSION.search(name)
    random = token or secrets.token_hex(16)
    channel = _UNSAFE.sub("_", channel_id)[:64] or "_"
    return f"/1/{channel}/{random}{ext.group(0).lower() if ext else ''}"


def api_base(api: str) -> str:
    return api.rstrip("/")


def preview_url(api: str, path: str, *, filename: str | None = None) -> str:
    """The absolute address of a TSDD file path (``file/preview/…``), with the name a browser
    saves it under."""
    url = f"{api_base(api)}/v1/{path.lstrip('/')}"
    return url if not filename else f"{url}?filename={quote(filename, safe='')}"


def file_path(api: str, url: str) -> str | None:
    """The TSDD file path (``file/preview/…``) ``url`` names — relative, as messages carry it,
    or absolute on this API — else None: a URL anywhere else is not fetched by the host."""
    if "\\" in url or any(ord(c) < 0x21 for c in url):
        return None
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        base = urlsplit(api_base(api))
        if (parts.scheme, parts.netloc) != (base.scheme, base.netloc):
            return None
        prefix = f"{base.path}/v1/"
        if not parts.path.startswith(prefix):
            return None
        path = parts.path[len(prefix) :]
    else:
        path = parts.path.lstrip("/").removeprefix("v1/")
    if not path.startswith(PREVIEW) or ".." in path.split("/") or path == PREVIEW:
        return None
    return path


def upload_answer(data: object) -> str:
    """The file path of an upload's ``200`` answer."""
    path = data.get("path") if isinstance(data, dict) else None
    if not isinstance(path, str) or not path.startswith(PREVIEW):
        raise TsddError("TSDD's upload answer had no file path.")
    return path


def _refusal(answer: httpx.Response) -> str:
    try:
        msg = answer.json().get("msg")
    except (ValueError, AttributeError):
        msg = None
    return msg if isinstance(msg, str) and msg else f"TSDD answered {answer.status_code}"


@dataclass(frozen=True, slots=True)
class Download:
    data: bytes
    content_type: str


class TsddFiles:
    """Uploads with the IM user's token; downloads (no token: previews are public)."""

    def __init__(self, api: str, token: str, http: httpx.AsyncClient) -> None:
        self.api = api_base(api)
        self._token = token
        self._http = http

    async def upload(self, data: bytes, name: str, content_type: str, path: str) -> str:
        """Store ``data``; answers its file path (``file/preview/chat/…``)."""
        try:
            answer = await self._http.post(
                self.api + UPLOAD_PATH,
                params={"type": FILE_TYPE, "path": path},
                headers={"token": self._token},
                files={"file": (name, data, content_type)},
                data={"contenttype": content_type},
            )
        except httpx.HTTPError as problem:
            raise TsddError(f"TSDD's file API could not be reached ({problem}).") from None
        if answer.status_code != 200:
            raise TsddError(_refusal(answer), answer.status_code)
        try:
            return upload_answer(answer.json())
        except ValueError:
            raise TsddError("TSDD's upload answer was not JSON.") from None

    async def download(self, path: str, *, limit: int) -> Download:
        """The file at a TSDD file path, following the redirect to its storage; refused past
        ``limit`` bytes."""
        try:
            async with self._http.stream("GET", preview_url(self.api, path),
                                         follow_redirects=True) as answer:  # fmt: skip
                if answer.status_code != 200:
                    await answer.aread()
                    raise TsddError(_refusal(answer), answer.status_code)
                declared = answer.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise TsddError(f"The file is larger than {limit:,} bytes.", 413)
                received = bytearray()
                async for chunk in answer.aiter_bytes():
                    received += chunk
                    if len(received) > limit:
                        raise TsddError(f"The file is larger than {limit:,} bytes.", 413)
                kind = answer.headers.get("content-type") or "application/octet-stream"
                return Download(bytes(received), kind)
        except httpx.HTTPError as problem:
            raise TsddError(f"TSDD's file could not be fetched ({problem}).") from None
