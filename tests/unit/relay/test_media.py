"""WuKongIM's image, voice and file contents as TangSengDaoDao's apps read them, and how the
agent's files are described in them — pure, from bytes."""

from __future__ import annotations

import json
import struct

import pytest

from lineup.relay import media, tunnel
from lineup.relay.media import Media
from tests.support.relay_agent import CHART


def test_each_kind_is_written_with_the_fields_tsdds_apps_read() -> None:
    image = Media(media.IMAGE, "file/preview/chat/1/ana/x.png", name="x.png", size=9,
                  width=640, height=480)  # fmt: skip
    voice = Media(media.VOICE, "file/preview/chat/1/ana/v.amr", seconds=4, waveform="AAE=")
    file = Media(media.FILE, "file/preview/chat/1/ana/r.md", name="report.md", size=20_000)
    assert json.loads(media.encode(image)) == {
        "type": 2, "url": image.url, "width": 640, "height": 480}  # fmt: skip
    assert json.loads(media.encode(voice)) == {
        "type": 4, "url": voice.url, "timeTrad": 4, "waveform": "AAE="}  # fmt: skip
    assert json.loads(media.encode(file)) == {
        "type": 8, "url": file.url, "name": "report.md", "size": 20_000}  # fmt: skip


def test_what_tsdds_apps_send_parses_back_and_fields_of_the_wrong_kind_are_ignored() -> None:
    sent = {"type": 8, "url": "file/preview/chat/1/bot/a.pdf", "name": "a.pdf", "size": 12,
            "localPath": "/sdcard/a.pdf", "extension": "pdf"}  # fmt: skip
    assert tunnel.parse(json.dumps(sent).encode()) == Media(media.FILE, sent["url"], "a.pdf", 12)
    odd = {"type": 2, "url": "file/preview/chat/x.png", "width": "wide", "height": -3}
    assert tunnel.parse(json.dumps(odd).encode()) == Media(media.IMAGE, odd["url"])
    assert tunnel.parse(b'{"type": 4, "timeTrad": 3}') is None  # nothing to fetch


@pytest.mark.parametrize(
    ("url", "kind", "name"),
    [
        ("file/preview/chat/1/bot/0a1b.png", media.IMAGE, "0a1b.png"),
        ("https://cdn.example/v/clip.amr?x=1", media.VOICE, "clip.amr"),
        ("file/preview/chat/", media.FILE, "chat"),
    ],
)
def test_a_message_with_no_name_is_named_after_its_address(url: str, kind: int, name: str) -> None:
    assert Media(kind, url).default_name() == name


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def _webp_lossless(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    body = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + struct.pack("<I", bits)
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (CHART, (3, 2)),
        (b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 20, (320, 200)),
        (_jpeg(1024, 768), (1024, 768)),
        (_webp_lossless(17, 9), (17, 9)),
        (b"not an image at all", None),
        (b"\xff\xd8\xff", None),
    ],
)
def test_an_images_size_is_read_from_its_first_bytes(
    data: bytes, size: tuple[int, int] | None
) -> None:
    assert media.image_size(data) == size


def test_an_amr_files_length_is_counted_in_its_frames() -> None:
    frame = bytes([0x3C]) + bytes(31)  # mode 7 (12.2 kbit/s): 32 bytes, 20 ms
    assert media.amr_seconds(b"#!AMR\n" + frame * 250) == 5
    assert media.amr_seconds(b"#!AMR\n" + frame) == 1  # never shown as zero seconds
    assert media.amr_seconds(b"ID3 an mp3") is None


def test_a_file_goes_out_as_an_image_voice_or_file_by_what_it_is() -> None:
    amr = b"#!AMR\n" + (bytes([0x3C]) + bytes(31)) * 100
    as_image = media.describe("p/c.png", "chart.png", "image/png", CHART)
    assert (as_image.kind, as_image.width, as_image.height) == (media.IMAGE, 3, 2)
    as_voice = media.describe("p/n.amr", "note.amr", "audio/amr", amr)
    assert (as_voice.kind, as_voice.seconds) == (media.VOICE, 2)
    # an image whose size cannot be read, other audio, anything else: a file with its size
    assert media.describe("p/x.png", "x.png", "image/png", b"broken").kind == media.FILE
    mp3 = media.describe("p/s.mp3", "s.mp3", "audio/mpeg", b"ID3" + bytes(40))
    assert (mp3.kind, mp3.name, mp3.size) == (media.FILE, "s.mp3", 43)
