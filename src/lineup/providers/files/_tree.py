"""One instance's directory: paths confined to it, its files' versions, reading and atomic
writing. Everything here blocks (the provider runs it in a worker thread)."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lineup.core.provider import ProviderError
from lineup.protocol.errors import ErrorCode

ABSENT = "absent"
"""The version of a file that is not there (a write that creates it is made against it)."""

MAX_READ_BYTES = 1024 * 1024


def version_of(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


@dataclass(frozen=True, slots=True)
class Tree:
    """The directory an instance names; every path a call gives is relative to it."""

    root: Path

    def locate(self, path: str) -> tuple[str, Path]:
        """The normalized relative path and where it really is (symbolic links followed),
        refusing a path that is absolute or climbs (``invalid_argument``) and one that a link
        leads out of the directory (``forbidden``)."""
        if path.startswith("/") or "\\" in path or "\x00" in path:
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT, f"{path!r} is not a path relative to the directory."
            )
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT, f"{path!r} climbs out of the directory ('..')."
            )
        root = self.root.resolve()
        where = root.joinpath(*parts).resolve()
        if not where.is_relative_to(root):
            raise ProviderError(
                ErrorCode.FORBIDDEN, f"{path!r} leads outside the directory (a symbolic link)."
            )
        return "/".join(parts), where

    def listing(self, path: str) -> dict[str, Any]:
        name, where = self.locate(path)
        if not where.exists():
            raise ProviderError(ErrorCode.NOT_FOUND, f"There is no directory {name or '.'!r}.")
        if not where.is_dir():
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"{name!r} is not a directory.")
        entries = []
        for entry in sorted(os.scandir(where), key=lambda e: e.name):
            info = entry.stat(follow_symlinks=False)
            kind = (
                "directory"
                if stat.S_ISDIR(info.st_mode)
                else "file"
                if stat.S_ISREG(info.st_mode)
                else "other"
            )
            entries.append(
                {
                    "name": entry.name,
                    "path": f"{name}/{entry.name}" if name else entry.name,
                    "type": kind,
                    "size": info.st_size if kind == "file" else None,
                }
            )
        return {"path": name, "entries": entries}

    def content(self, path: str) -> tuple[str, bytes | None]:
        """The file's normalized path and bytes (None when it is not there)."""
        name, where = self.locate(path)
        if not name:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, "A file's path is needed.")
        if not where.exists():
            return name, None
        if not where.is_file():
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"{name!r} is not a file.")
        if where.stat().st_size > MAX_READ_BYTES:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"{name!r} is larger than 1 MiB.")
        return name, where.read_bytes()

    def read(self, path: str) -> dict[str, Any]:
        name, content = self.content(path)
        if content is None:
            raise ProviderError(ErrorCode.NOT_FOUND, f"There is no file {name!r}.")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT, f"{name!r} is not UTF-8 text."
            ) from None
        return {"path": name, "content": text, "version": version_of(content), "size": len(content)}

    def write(self, path: str, content: bytes) -> None:
        """Replace the file whole, atomically (a temporary file beside it, then a rename):
        a reader sees the old content or the new, never a part."""
        name, where = self.locate(path)
        if not where.parent.is_dir():
            raise ProviderError(ErrorCode.NOT_FOUND, f"There is no directory for {name!r}.")
        if where.exists() and not where.is_file():
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"{name!r} is not a file.")
        mode = where.stat().st_mode & 0o777 if where.exists() else 0o644
        fd, temporary = tempfile.mkstemp(prefix=f".{where.name}.", dir=where.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(content)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, where)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
