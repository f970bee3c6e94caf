"""A conversation as a session file (docs/sessions.md): its download, and an upload that
becomes a new conversation.

* ``GET /api/workspaces/{ws}/conversations/{id}/session.jsonl`` — the file, for whoever may
  read the conversation (another workspace's, or a project's the person is not in, is
  ``not_found``).
* ``POST /api/workspaces/{ws}/conversations/import?projectId=`` — the file as the raw body
  (LineUp's, any version, or Pi's; at most ``MAX_FILE_BYTES``); answers the new conversation.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from lineup.hub import session_files
from lineup.hub.api import responses, views
from lineup.hub.api.deps import Hub, IdempotencyKey, Member
from lineup.hub.api.openapi import answers, errors
from lineup.protocol.session_file import MAX_FILE_BYTES

router = APIRouter(prefix="/api/workspaces/{workspace_id}", tags=["work"])

IMPORT_PATH = r"/api/workspaces/[^/]+/conversations/import"
"""The import route's path, as a pattern: its body may be larger than the hub's usual limit
(``lineup.hub.request_guard.LARGER_BODIES``)."""

_TEXT = {"schema": {"type": "string", "format": "binary"}}


@router.get(
    "/conversations/{conversation_id}/session.jsonl",
    response_model=None,
    response_class=Response,
    responses={
        200: {
            "content": {session_files.CONTENT_TYPE: _TEXT},
            "description": "The session file (docs/sessions.md), as a download.",
        },
        **errors(400, 401, 403, 404),
    },
)
async def download_session(conversation_id: str, hub: Hub, person: Member) -> Response:
    """The conversation as a session file: one JSON object per line, the header first."""
    exported = await session_files.export_conversation(
        hub, person.workspace_id, conversation_id, person
    )
    return Response(
        exported.content,
        media_type=session_files.CONTENT_TYPE,
        headers={
            "Content-Disposition": f'attachment; filename="{exported.filename}"',
            "Cache-Control": "no-store",
        },
    )


@router.post(
    "/conversations/import",
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": (f"A session file, LineUp's or Pi's, at most {MAX_FILE_BYTES:,} bytes."),
            "content": {session_files.CONTENT_TYPE: _TEXT, "application/octet-stream": _TEXT},
        }
    },
    **answers(responses.ImportedSession, 400, 401, 403, 404, 409, 413),
)
async def import_session(
    request: Request,
    hub: Hub,
    person: Member,
    key: IdempotencyKey,
    project_id: Annotated[
        str | None, Query(alias="projectId", min_length=1, max_length=128)
    ] = None,
) -> dict[str, Any]:
    """Make a new conversation of a session file. A file that cannot be read is
    ``invalid_argument`` naming its first bad line (``details.line``)."""
    data = await request.body()
    imported = await session_files.import_session(
        hub, person, data, project_id=project_id, event_id=key
    )
    row = await hub.store.read(
        lambda r: r.get_conversation(person.workspace_id, imported.conversation_id)
    )
    assert row is not None
    return {
        "conversation": views.conversation(row),
        "session": {
            "sessionId": imported.session_id,
            "sourceFormat": imported.source_format,
            "sourceVersion": imported.source_version,
            "entries": imported.entries,
            "messages": imported.messages,
            "branches": imported.branches,
        },
        "duplicate": imported.duplicate,
    }
