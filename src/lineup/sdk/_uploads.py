"""Uploading a file to the hub so that people can open it (``POST /api/agent/artifacts``).

An upload is plain HTTP beside the agent's socket: the file's bytes are too big for a frame
and need no ordering with the agent's events. What makes it safe to retry is its
idempotency key: the hub answers a repeat with the same key with the file it already has,
so an upload cut off after the hub stored it (or a handler resumed after a restart) never
makes a second copy. Network failures, ``rate_limited`` and ``unavailable`` are retried
with backoff until the hub answers; any other refusal is raised as its taxonomy error.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import mimetypes
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from lineup import __version__
from lineup.protocol.errors import HTTP_STATUS, RETRYABLE, ErrorCode, LineupError, error_from_code
from lineup.sdk._backoff import Backoff
from lineup.sdk._hub_answers import refusal
from lineup.sdk._tls import TlsTrust

logger = logging.getLogger("lineup.sdk")

UPLOAD_PATH = "/api/agent/artifacts"
CHECKSUM_HEADER = "X-Content-SHA256"

FileContent = bytes | bytearray | memoryview | os.PathLike[str]
"""What can be uploaded: the bytes themselves, or the path of a file to read."""

_STATUS_CODES = {status: code for code, status in HTTP_STATUS.items()}
_GATEWAY_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """A file stored in the hub. ``url`` is its hub address: use it as an artifact's or an
    attachment's ``url``; members of the workspace open it from there."""

    file_id: str
    url: str
    name: str
    mime_type: str
    size: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "fileId": self.file_id,
            "url": self.url,
            "name": self.name,
            "mimeType": self.mime_type,
            "size": self.size,
            "sha256": self.sha256,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UploadedFile:
        return cls(
            file_id=str(data["fileId"]),
            url=str(data["url"]),
            name=str(data["name"]),
            mime_type=str(data["mimeType"]),
            size=int(data["size"]),
            sha256=str(data["sha256"]),
        )


def read_content(content: FileContent) -> bytes:
    """The bytes to upload; a path is read whole (the hub's limit is a few MiB)."""
    if isinstance(content, str):
        raise TypeError(
            "Pass the file's bytes (text.encode()) or a path (pathlib.Path(...)), not a str: "
            "a str could be either."
        )
    if isinstance(content, bytes | bytearray | memoryview):
        return bytes(content)
    return Path(content).read_bytes()


def guess_type(name: str) -> str:
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


@dataclass(frozen=True, slots=True)
class Uploader:
    """Uploads for one agent: its hub, its credential, its backoff."""

    hub_url: str
    credential: str
    backoff: Backoff
    transport: httpx.AsyncBaseTransport | None = None
    timeout: float = 60.0
    tls: TlsTrust | None = None

    async def upload(
        self,
        name: str,
        content: bytes,
        mime_type: str | None,
        idempotency_key: str,
        *,
        pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> UploadedFile:
        """Upload until the hub has the file; ``pause`` waits between attempts."""
        digest = hashlib.sha256(content).hexdigest()
        headers = {
            "Authorization": f"Bearer {self.credential}",
            "Content-Type": mime_type or guess_type(name),
            CHECKSUM_HEADER: digest,
            "Idempotency-Key": idempotency_key,
            "User-Agent": f"lineup-sdk/{__version__}",
        }
        url = self.hub_url.rstrip("/") + UPLOAD_PATH
        attempt = 0
        # a transport of the caller's own (tests' MockTransport) does its own I/O and checks
        real_network = self.tls is not None and self.transport is None
        verify = await self.tls.context(url) if self.tls is not None and real_network else None
        async with httpx.AsyncClient(
            transport=self.transport,
            timeout=self.timeout,
            verify=verify if verify is not None else True,
        ) as http:
            while True:
                try:
                    response = await http.post(
                        url, params={"name": name}, content=content, headers=headers
                    )
                except httpx.TransportError as exc:
                    problem: LineupError | None = None
                    reason = f"the hub could not be reached ({type(exc).__name__})"
                else:
                    if response.status_code in (200, 201):
                        return UploadedFile.from_json(response.json())
                    problem = _error(response)
                    if problem.code not in RETRYABLE:
                        raise problem
                    reason = problem.message
                delay = self.backoff.delay(attempt)
                if problem is not None:
                    retry_after = problem.details.get("retryAfterMs")
                    if isinstance(retry_after, int):
                        delay = max(delay, retry_after / 1000)
                logger.warning("upload of %s: %s; retrying in %.1f s", name, reason, delay)
                attempt += 1
                await pause(delay)


def _error(response: httpx.Response) -> LineupError:
    refused = refusal(response)
    if refused is not None:
        return error_from_code(
            refused.code,
            refused.message or f"The upload failed with HTTP {response.status_code}.",
            refused.details,
        )
    status = response.status_code
    if status in _GATEWAY_STATUSES:
        code = ErrorCode.UNAVAILABLE
    else:
        code = _STATUS_CODES.get(status, ErrorCode.UNKNOWN_RESULT)
    return error_from_code(code.value, f"The upload failed with HTTP {status}.")


__all__ = ["FileContent", "UploadedFile", "Uploader", "guess_type", "read_content"]
