"""Files agents upload so that people can open them, and their download by members.

* ``POST /api/agent/artifacts`` — the agent's credential (``Authorization: Bearer``), the raw
  bytes as the body, their type as ``Content-Type``, ``?name=`` the file name. The size
  limit (``LINEUP_ARTIFACT_MAX_BYTES``) is enforced while the body arrives, so an oversized
  upload is refused without being held in memory; the SHA-256 is the hub's own, and an
  ``X-Content-SHA256`` sent by the agent must match it. Answers the hub address of the file,
  which ``artifact.created`` and attachments may then use.
* ``GET /api/workspaces/{ws}/files/{id}`` — for signed-in members of that workspace only;
  anyone else gets the same ``not_found`` as for a file that does not exist. The response
  can never run script in the hub's origin: ``nosniff``, a sandboxing CSP, and a download
  (``Content-Disposition: attachment``) for every type but a few images and plain text.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from lineup.hub.api import responses
from lineup.hub.api.deps import Hub, IdempotencyHeader, WorkspaceCaller
from lineup.hub.api.openapi import errors
from lineup.hub.commands import derived_id, unconfirmed
from lineup.hub.credentials import authenticate_agent
from lineup.protocol.errors import Conflict, InvalidArgument, NotFound, PayloadTooLarge
from lineup.protocol.ids import new_id
from lineup.protocol.links import hub_file_url
from lineup.store import Reader, WriteTx
from lineup.store.files import FileInfo, StoredFile, get_file, get_file_info, insert_file

router = APIRouter(prefix="/api", tags=["files"])

UPLOAD_PATH = "/api/agent/artifacts"
CHECKSUM_HEADER = "X-Content-SHA256"
DEFAULT_TYPE = "application/octet-stream"

_MEDIA_PART = r"[A-Za-z0-9!#$&^_.+-]{1,100}"
_MEDIA_TYPE = re.compile(rf"^({_MEDIA_PART})/({_MEDIA_PART})$")
_CHARSET = re.compile(r"^[A-Za-z0-9_.:-]{1,40}$")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"})
"""Types a browser shows without running anything; every other type is downloaded."""

FILE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
"""For the file response only: no script, no requests, a unique origin (``sandbox``)."""

FileName = Annotated[str, Query(min_length=1, max_length=255)]


_BYTES = {"schema": {"type": "string", "format": "binary"}}


@router.post(
    "/agent/artifacts",
    status_code=201,
    response_model=None,
    responses={
        201: {"model": responses.StoredFile, "description": "The stored file."},
        **errors(400, 401, 409, 413),
    },
    openapi_extra={
        "requestBody": {"required": True, "content": {"application/octet-stream": _BYTES}},
        "security": [{"agentCredential": []}],
    },
)
async def upload_artifact(
    request: Request, hub: Hub, key: IdempotencyHeader, name: FileName
) -> JSONResponse:
    """Store a file for the agent's workspace; answers ``{fileId, url, size, sha256, …}``."""
    agent = await authenticate_agent(hub, request.headers.get("authorization", ""))
    if not agent.confirmed:  # its files would be work people never agreed to
        raise unconfirmed(agent.agent_id, agent.name)
    clean_name = _file_name(name)
    mime_type = media_type(request.headers.get("content-type"))
    expected = _expected_checksum(request.headers.get(CHECKSUM_HEADER))
    limit = hub.settings.artifact_max_bytes
    content, digest = await _read_limited(request, limit)
    if expected is not None and expected != digest:
        raise InvalidArgument(
            f"The content does not match its {CHECKSUM_HEADER}: it was changed or cut short "
            "on the way. Send it again.",
            details={"header": CHECKSUM_HEADER, "expected": expected, "received": digest},
        )
    file_id = derived_id("file", agent.agent_id, key) if key is not None else new_id("file")
    info = FileInfo(
        id=file_id,
        workspace_id=agent.workspace_id,
        agent_id=agent.agent_id,
        name=clean_name,
        mime_type=mime_type,
        size=len(content),
        sha256=digest,
        created_at=hub.clock(),
    )

    def store(tx: WriteTx) -> FileInfo:
        earlier = get_file_info(tx.connection, agent.workspace_id, file_id)
        if earlier is None:
            insert_file(tx.connection, info, content)
            return info
        if earlier.sha256 != digest or earlier.agent_id != agent.agent_id:
            raise Conflict(
                "This Idempotency-Key was already used for a different file; use a new key "
                "for new content.",
                details={"header": "Idempotency-Key", "fileId": file_id},
            )
        return earlier

    stored = await hub.store.write(store)
    return JSONResponse(describe(stored), status_code=201)


@router.get(
    "/workspaces/{workspace_id}/files/{file_id}",
    response_model=None,
    response_class=Response,
    responses={
        200: {"content": {"application/octet-stream": _BYTES}, "description": "The bytes."},
        **errors(400, 401, 404),
    },
)
async def download_file(
    hub: Hub,
    signed: WorkspaceCaller,
    workspace_id: Annotated[str, Path(max_length=128)],
    file_id: Annotated[str, Path(max_length=128)],
) -> Response:
    """The file's bytes, for members of its workspace (others: ``not_found``)."""

    def read(r: Reader) -> StoredFile | None:
        if r.get_membership(workspace_id, signed.user.id) is None:
            return None
        if signed.token is not None and signed.token.workspace_id not in (None, workspace_id):
            return None
        return get_file(r.connection, workspace_id, file_id)

    found = await hub.store.read(read)
    if found is None:
        raise NotFound("There is no such file in this workspace.", details={"fileId": file_id})
    return Response(found.content, headers=file_headers(found.info))


def describe(info: FileInfo) -> dict[str, Any]:
    return {
        "fileId": info.id,
        "url": hub_file_url(info.workspace_id, info.id),
        "name": info.name,
        "mimeType": info.mime_type,
        "size": info.size,
        "sha256": info.sha256,
    }


def media_type(header: str | None) -> str:
    """The upload's type as stored: ``type/subtype`` in lower case, with its charset if any.

    A missing or malformed type is stored as ``application/octet-stream`` (a download)."""
    if not header:
        return DEFAULT_TYPE
    essence, *params = (part.strip() for part in header.split(";"))
    match = _MEDIA_TYPE.match(essence)
    if match is None:
        return DEFAULT_TYPE
    stored = essence.lower()
    for param in params:
        key, _, value = param.partition("=")
        value = value.strip().strip('"')
        if key.strip().lower() == "charset" and _CHARSET.match(value):
            return f"{stored}; charset={value.lower()}"
    return stored


def file_headers(info: FileInfo) -> dict[str, str]:
    essence = info.mime_type.split(";", 1)[0]
    inline = essence in INLINE_TYPES
    return {
        "Content-Type": info.mime_type if inline else _download_type(info.mime_type),
        "Content-Disposition": content_disposition(info.name, inline=inline),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": FILE_CSP,
        "Cross-Origin-Resource-Policy": "same-origin",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "private, no-cache",
        "ETag": f'"{info.sha256}"',
        "X-Content-SHA256": info.sha256,
    }


def _download_type(mime_type: str) -> str:
    """Markup is labelled as bytes too: a download needs no type a browser could render."""
    essence = mime_type.split(";", 1)[0]
    if essence in ("text/html", "application/xhtml+xml", "image/svg+xml", "text/xml"):
        return DEFAULT_TYPE
    return mime_type


def content_disposition(name: str, *, inline: bool) -> str:
    """RFC 6266: an ASCII fallback name and the exact name in UTF-8 (RFC 5987)."""
    fallback = re.sub(r"[^A-Za-z0-9._ -]", "_", name).strip() or "file"
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def _file_name(name: str) -> str:
    clean = name.strip()
    if not clean or _CONTROL.search(clean):
        raise InvalidArgument(
            "The file name (?name=) must not be empty or hold control characters.",
            details={"field": "name"},
        )
    return clean.replace("/", "_").replace("\\", "_")


def _expected_checksum(header: str | None) -> str | None:
    if header is None:
        return None
    value = header.strip()
    if not _SHA256.match(value):
        raise InvalidArgument(
            f"{CHECKSUM_HEADER} must be the content's SHA-256 as 64 hexadecimal digits.",
            details={"header": CHECKSUM_HEADER},
        )
    return value.lower()


async def _read_limited(request: Request, limit: int) -> tuple[bytes, str]:
    """The body and its SHA-256; refused as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    digest = hashlib.sha256()
    received = bytearray()
    async for chunk in request.stream():
        if len(received) + len(chunk) > limit:
            raise _too_large(limit)
        received += chunk
        digest.update(chunk)
    return bytes(received), digest.hexdigest()


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The file is larger than this hub accepts ({limit:,} bytes); "
        "share a link to it instead, or ask the hub's operator to raise "
        "LINEUP_ARTIFACT_MAX_BYTES.",
        details={"maxBytes": limit},
    )


__all__ = [
    "CHECKSUM_HEADER",
    "FILE_CSP",
    "INLINE_TYPES",
    "UPLOAD_PATH",
    "PayloadTooLarge",
    "content_disposition",
    "describe",
    "file_headers",
    "media_type",
    "router",
]
