"""The addresses an agent or a person may put in front of people: artifact URLs, attachment
URLs and links inside content blocks.

People open these with one click in the hub's own origin, so a ``javascript:`` or ``data:``
address would run or render something there, and a ``file:`` one points at a machine nobody
else can read. Only two shapes are accepted:

* an absolute ``http`` or ``https`` URL with a host;
* a file stored in the hub: ``/api/workspaces/{workspaceId}/files/{fileId}`` (what
  ``POST /api/agent/artifacts`` answers), served to members of that workspace only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

_SEGMENT = r"[A-Za-z0-9_-]{1,128}"
_HUB_FILE = re.compile(rf"^/api/workspaces/({_SEGMENT})/files/({_SEGMENT})$")
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")

HUB_FILE_PATTERN = rf"^/api/workspaces/{_SEGMENT}/files/{_SEGMENT}$"
LINK_PATTERN = rf"^(?:[Hh][Tt][Tt][Pp][Ss]?://[^\s\\/?#]+.*|{HUB_FILE_PATTERN[1:-1]})$"
"""The rule as a regular expression, for the JSON Schemas; :func:`check_link` is the rule."""

LINK_KEYS = frozenset({"url", "href", "src", "link"})
"""Keys inside a content block's ``data`` whose string values are addresses (any depth)."""


@dataclass(frozen=True, slots=True)
class HubFile:
    """A reference to a file stored in the hub."""

    workspace_id: str
    file_id: str

    @property
    def url(self) -> str:
        return hub_file_url(self.workspace_id, self.file_id)


def hub_file_url(workspace_id: str, file_id: str) -> str:
    """The hub-relative address a file is downloaded from (by members of its workspace)."""
    return f"/api/workspaces/{workspace_id}/files/{file_id}"


def hub_file(url: str) -> HubFile | None:
    """The file a hub address names, or None when ``url`` is not one."""
    match = _HUB_FILE.match(url)
    return None if match is None else HubFile(match.group(1), match.group(2))


def check_link(url: str) -> str:
    """``url`` if people may be shown it; ``ValueError`` (a person's sentence) if not.

    Whitespace, control characters and backslashes are refused anywhere: browsers drop or
    reinterpret them, which is how ``" javascript:…"`` or ``"https:\\\\evil"`` get past
    simpler checks.
    """
    if _FORBIDDEN_CHARS.search(url):
        raise ValueError("a URL must not contain spaces, control characters or backslashes")
    if url.startswith("/"):
        if hub_file(url) is None:
            raise ValueError(
                "a relative URL must be a file stored in the hub "
                "(/api/workspaces/{workspaceId}/files/{fileId})"
            )
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ValueError("this is not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        shown = f"{parts.scheme}:" if parts.scheme else "no scheme"
        raise ValueError(
            f"only http and https URLs or files stored in the hub are allowed, not {shown}"
        )
    if not parts.hostname:
        raise ValueError("an http(s) URL needs a host")
    return url


def _link_field(max_length: int) -> Any:
    return Field(
        min_length=1,
        max_length=max_length,
        json_schema_extra={"pattern": LINK_PATTERN, "format": "uri-reference"},
        description=(
            "An absolute http(s) URL, or a file stored in the hub: "
            "/api/workspaces/{workspaceId}/files/{fileId}."
        ),
    )


LinkUrl = Annotated[str, _link_field(2048), AfterValidator(check_link)]
"""An attachment's address."""

ArtifactUrl = Annotated[str, _link_field(4096), AfterValidator(check_link)]
"""An artifact's address."""


def links_in(data: Mapping[str, Any] | Sequence[Any] | Any) -> Iterator[str]:
    """String values under :data:`LINK_KEYS` anywhere inside a block's ``data``."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            if isinstance(value, str):
                if isinstance(key, str) and key.lower() in LINK_KEYS:
                    yield value
            else:
                yield from links_in(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from links_in(item)


def check_block_data(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """A content block's ``data`` if every address in it passes :func:`check_link`."""
    if data is not None:
        for url in links_in(data):
            try:
                check_link(url)
            except ValueError as problem:
                raise ValueError(f"{url[:80]!r}: {problem}") from None
    return data


__all__ = [
    "HUB_FILE_PATTERN",
    "LINK_KEYS",
    "LINK_PATTERN",
    "ArtifactUrl",
    "HubFile",
    "LinkUrl",
    "check_block_data",
    "check_link",
    "hub_file",
    "hub_file_url",
    "links_in",
]
