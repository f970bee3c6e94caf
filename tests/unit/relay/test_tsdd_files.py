"""TangSengDaoDao's file paths as the relay host makes and trusts them, the tunnel's file
fields, and the host's checksum cache of what it stored — no server needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lineup.direct._ledger import Ledger
from lineup.direct._relay_files import disposition_name
from lineup.relay import tunnel
from lineup.relay.tsdd import TsddError, file_path, preview_url, upload_answer, upload_path

API = "https://im.example.org/api"


def test_an_upload_path_is_random_and_keeps_only_a_safe_extension() -> None:
    made = upload_path("ana", "Report.Final.MD")
    assert re.fullmatch(r"/1/ana/[0-9a-f]{32}\.md", made)
    assert made != upload_path("ana", "Report.Final.MD")  # 128 random bits each time
    assert upload_path("a/b c", "x", token="t") == "/1/a_b_c/t"
    assert upload_path("ana", "archive.tar.gz;rm", token="t") == "/1/ana/t"


def test_a_file_path_opens_under_the_apis_v1_with_its_name() -> None:
    assert preview_url(API + "/", "file/preview/chat/1/ana/t.md", filename="my report.md") == (
        f"{API}/v1/file/preview/chat/1/ana/t.md?filename=my%20report.md"
    )


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("file/preview/chat/1/bot/x.png", "file/preview/chat/1/bot/x.png"),
        ("/v1/file/preview/chat/x.png", "file/preview/chat/x.png"),
        (f"{API}/v1/file/preview/chat/1/bot/x.png", "file/preview/chat/1/bot/x.png"),
        ("https://evil.example/api/v1/file/preview/chat/x.png", None),
        ("http://im.example.org/api/v1/file/preview/chat/x.png", None),  # not the API's scheme
        (f"{API}/v1/user/login", None),
        ("file/preview/chat/../../v1/user", None),
        ("file/preview/", None),
        ("http://127.0.0.1:9000/bucket/x", None),
        ("file/preview/chat/x y", None),
    ],
)
def test_the_host_fetches_only_file_paths_of_its_own_api(url: str, path: str | None) -> None:
    assert file_path(API, url) == path


def test_an_upload_answer_must_name_a_file_path() -> None:
    assert upload_answer({"path": "file/preview/chat/1/a/b"}) == "file/preview/chat/1/a/b"
    for bad in ({}, {"path": "/etc/passwd"}, ["file/preview/x"]):
        with pytest.raises(TsddError):
            upload_answer(bad)


def test_a_request_may_name_its_body_as_a_tsdd_file_but_not_both() -> None:
    ref = tunnel.FileRef("file/preview/chat/1/bot/p.zip", 1234, "a" * 64)
    req = tunnel.Request("r1", "POST", "/api/x", {"content-type": "application/zip"}, None, ref)
    assert tunnel.parse(tunnel.request(req)) == req
    sent = json.loads(tunnel.request(req))
    assert sent["body"] is None
    assert sent["file"] == {"url": ref.url, "size": 1234, "sha256": "a" * 64}
    for bad in (
        {"url": "file/preview/x", "size": -1},
        {"url": "", "size": 1},
        {"url": "file/preview/x", "size": 1, "sha256": "XYZ"},
        "file/preview/x",
    ):
        with pytest.raises(tunnel.TunnelError):
            tunnel.parse(json.dumps({"type": 3101, "id": "r", "method": "POST", "path": "/api",
                                     "body": None, "file": bad}).encode())  # fmt: skip
    both = {"type": 3101, "id": "r", "method": "POST", "path": "/api", "body": "x",
            "file": {"url": "u", "size": 1}}  # fmt: skip
    with pytest.raises(tunnel.TunnelError):
        tunnel.parse(json.dumps(both).encode())


def test_only_a_get_with_the_link_type_asks_for_a_file_link() -> None:
    link = {"accept": tunnel.FILE_LINK}
    assert tunnel.Request("r", "GET", "/api/workspaces/w/files/f", link).wants_file_link
    assert not tunnel.Request("r", "GET", "/api/workspaces/w/files/f", {}).wants_file_link
    assert not tunnel.Request("r", "POST", "/api/workspaces/w/files/f", link).wants_file_link


def test_the_same_bytes_are_stored_once_and_keep_their_first_path(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "tunnel.db")
    digest = "b" * 64
    assert ledger.uploaded(digest) is None
    ledger.remember_upload(digest, "file/preview/chat/1/ana/first.md")
    ledger.remember_upload(digest, "file/preview/chat/1/ana/second.md")
    ledger.close()
    again = Ledger(tmp_path / "tunnel.db")  # kept across runs of the host
    assert again.uploaded(digest) == "file/preview/chat/1/ana/first.md"
    again.close()


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("attachment; filename=\"r_sum_.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9.md", "résumé.md"),
        ('inline; filename="chart.png"', "chart.png"),
        ("attachment", None),
    ],
)
def test_the_hubs_file_name_is_read_from_its_content_disposition(
    header: str, name: str | None
) -> None:
    assert disposition_name(header) == name
