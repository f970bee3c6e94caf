"""WuKongIM's own media contents — image (2), voice (4) and file (8) — as TangSengDaoDao's
apps write and read them, with no I/O.

The payload of each is a UTF-8 JSON object with its ``type``, as for every WuKongIM content.
The fields are the ones TSDD's clients encode (its web app's ``ImageContent`` and
``VoiceContent``, its Android app's ``WKFileContent``; the official JS SDK's newer
``MessageImage`` has the same three image fields):

* image, 2: ``{"type":2,"url","width","height"}`` — the pixel size, so a client sizes the
  bubble before the image arrives;
* voice, 4: ``{"type":4,"url","timeTrad","waveform"}`` — ``timeTrad`` whole seconds,
  ``waveform`` base64 of bar heights (may be empty). TSDD's clients play AMR (its web app
  uses an AMR decoder), so only ``audio/amr`` goes out as voice; other audio is a file;
* file, 8: ``{"type":8,"url","name","size"}`` — ``size`` in bytes.

``url`` is TSDD's file path as its upload answered it (``file/preview/chat/…``, relative to
the API's ``/v1/``) or an absolute URL: clients resolve a relative one against their API.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

IMAGE = 2
VOICE = 4
FILE = 8
KINDS = frozenset({IMAGE, VOICE, FILE})

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Images TSDD's apps show inline, and whose size :func:`image_size` reads."""

VOICE_TYPE = "audio/amr"


@dataclass(frozen=True, slots=True)
class Media:
    """One image, voice or file message: what the person's app shows."""

    kind: int
    url: str
    name: str = ""
    size: int = 0
    width: int = 0
    height: int = 0
    seconds: int = 0
    waveform: str = ""

    def default_name(self) -> str:
        """The name to store it under: its own, else the last part of its URL's path."""
        if self.name:
            return self.name
        tail = self.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        return tail or {IMAGE: "image", VOICE: "voice"}.get(self.kind, "file")


def _int(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value == value:  # NaN
        return max(int(value), 0)
    return 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def parse(data: dict[str, Any]) -> Media | None:
    """A decoded content of type 2, 4 or 8; None when it carries no URL (nothing to fetch)."""
    kind = data.get("type")
    url = data.get("url")
    if kind not in KINDS or not isinstance(url, str) or not url:
        return None
    assert isinstance(kind, int)
    return Media(
        kind,
        url,
        name=_text(data.get("name")),
        size=_int(data.get("size")),
        width=_int(data.get("width")),
        height=_int(data.get("height")),
        seconds=_int(data.get("timeTrad")),
        waveform=_text(data.get("waveform")),
    )


def encode(media: Media) -> bytes:
    """The content as TSDD's apps decode it."""
    body: dict[str, Any]
    if media.kind == IMAGE:
        body = {"type": IMAGE, "url": media.url, "width": media.width, "height": media.height}
    elif media.kind == VOICE:
        body = {"type": VOICE, "url": media.url, "timeTrad": media.seconds,
                "waveform": media.waveform}  # fmt: skip
    elif media.kind == FILE:
        body = {"type": FILE, "url": media.url, "name": media.name, "size": media.size}
    else:
        raise ValueError(f"{media.kind} is not an image, voice or file content")
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def describe(url: str, name: str, mime_type: str, data: bytes) -> Media:
    """The message a file goes out as: an image when it is one whose size can be read, voice
    for AMR with a readable length, a file otherwise."""
    essence = mime_type.split(";", 1)[0].strip().lower()
    if essence in IMAGE_TYPES:
        size = image_size(data)
        if size is not None:
            return Media(IMAGE, url, name=name, size=len(data), width=size[0], height=size[1])
    if essence == VOICE_TYPE:
        seconds = amr_seconds(data)
        if seconds is not None:
            return Media(VOICE, url, name=name, size=len(data), seconds=seconds)
    return Media(FILE, url, name=name, size=len(data))


# --- image sizes, from the first bytes ---------------------------------------------------


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP; None when the bytes are not one."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return width, height
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    return None


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _SOF:
            if at + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        if length < 2:
            return None
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
        return width, height
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


# --- AMR length -------------------------------------------------------------------------

_AMR_MAGIC = b"#!AMR\n"
_AMR_FRAME_BYTES = (13, 14, 16, 18, 20, 21, 27, 32, 6, 1, 1, 1, 1, 1, 1, 1)
"""Bytes per frame (header byte included) by frame type, AMR-NB (RFC 4867 §5.3); 20 ms each."""


def amr_seconds(data: bytes) -> int | None:
    """The length of an AMR-NB file in whole seconds (at least 1); None when it is not one."""
    if not data.startswith(_AMR_MAGIC):
        return None
    at, frames = len(_AMR_MAGIC), 0
    while at < len(data):
        at += _AMR_FRAME_BYTES[(data[at] >> 3) & 0x0F]
        frames += 1
    return max(1, round(frames * 0.02))
