"""Files agents upload for people to open: their bytes and what the hub vouches for (size,
SHA-256), kept per workspace.

Plain synchronous functions of a ``Connection``: :func:`insert_file` inside a writer job
(``await store.write(lambda tx: insert_file(tx.connection, f))``), the reads in a reader.
The listing reads leave ``content`` out so that checking a file never loads its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from lineup.store.schema import files


@dataclass(frozen=True, slots=True)
class FileInfo:
    """A stored file without its content."""

    id: str
    workspace_id: str
    agent_id: str
    name: str
    mime_type: str
    size: int
    sha256: str
    created_at: int


@dataclass(frozen=True, slots=True)
class StoredFile:
    info: FileInfo
    content: bytes


_INFO_COLUMNS = (
    files.c.id,
    files.c.workspace_id,
    files.c.agent_id,
    files.c.name,
    files.c.mime_type,
    files.c.size,
    files.c.sha256,
    files.c.created_at,
)


def insert_file(conn: Connection, info: FileInfo, content: bytes) -> None:
    conn.execute(
        insert(files).values(
            id=info.id,
            workspace_id=info.workspace_id,
            agent_id=info.agent_id,
            name=info.name,
            mime_type=info.mime_type,
            size=info.size,
            sha256=info.sha256,
            content=content,
            created_at=info.created_at,
        )
    )


def get_file_info(conn: Connection, workspace_id: str, file_id: str) -> FileInfo | None:
    """The file ``file_id`` if it belongs to ``workspace_id`` (another workspace's is None)."""
    row = conn.execute(
        select(*_INFO_COLUMNS).where(files.c.id == file_id, files.c.workspace_id == workspace_id)
    ).first()
    return None if row is None else FileInfo(*row)


def get_file(conn: Connection, workspace_id: str, file_id: str) -> StoredFile | None:
    """The file with its content, if it belongs to ``workspace_id``."""
    row = conn.execute(
        select(*_INFO_COLUMNS, files.c.content).where(
            files.c.id == file_id, files.c.workspace_id == workspace_id
        )
    ).first()
    if row is None:
        return None
    return StoredFile(FileInfo(*row[:-1]), bytes(row[-1]))


__all__ = ["FileInfo", "StoredFile", "get_file", "get_file_info", "insert_file"]
