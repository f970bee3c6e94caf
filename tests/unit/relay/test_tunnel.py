"""The tunnel's message format (docs/relay-mode.md): what an app in another language sends
and reads, parsed and written exactly."""

from __future__ import annotations

import json

import pytest

from lineup.relay import tunnel


def test_a_request_parses_with_its_headers_lowercased() -> None:
    raw = json.dumps({"type": 3101, "id": "r1", "method": "post", "path": "/api/x",
                      "headers": {"Content-Type": "application/json", "Idempotency-Key": "k"},
                      "body": "{}"}).encode()  # fmt: skip
    assert tunnel.parse(raw) == tunnel.Request(
        "r1", "POST", "/api/x", {"content-type": "application/json", "idempotency-key": "k"}, "{}"
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"type": 3101, "id": "r", "method": "TRACE", "path": "/api"},
        {"type": 3101, "id": "r", "method": "GET", "path": "//evil.example/api"},
        {"type": 3101, "id": "", "method": "GET", "path": "/api"},
        {"type": 3101, "id": "r", "method": "GET", "path": "/api", "body": {"no": "object"}},
        {"type": 3103, "socket": "s", "op": "jump"},
        {"type": 3104, "tools": "stamp"},
    ],
)
def test_a_tunnel_message_with_wrong_fields_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(tunnel.TunnelError):
        tunnel.parse(json.dumps(bad).encode())


def test_other_contents_are_not_the_tunnels() -> None:
    assert tunnel.parse(b'{"type": 3001, "frame": "x"}') is None
    assert tunnel.parse(b"not json") is None
    assert tunnel.parse(b'{"type": 1, "content": "hi"}') == tunnel.Text("hi")
    image = b'{"type": 2, "url": "file/preview/chat/a.png", "name": "a.png"}'
    assert tunnel.parse(image) == tunnel.Media(tunnel.IMAGE, "file/preview/chat/a.png", "a.png")


def test_a_large_response_goes_in_parts_cut_between_characters_and_reassembles() -> None:
    body = "é" * 40_000 + "end"  # 80 003 bytes of UTF-8
    parts = tunnel.response_parts(tunnel.Response("r9", 200, {"content-type": "x"}, body))
    decoded = [json.loads(p) for p in parts]
    assert [d["part"] for d in decoded] == [0, 1, 2] and {d["parts"] for d in decoded} == {3}
    assert all(len(d["body"].encode()) <= tunnel.PART_BYTES for d in decoded)
    assert all(d["type"] == 3102 and d["id"] == "r9" and d["status"] == 200 for d in decoded)
    whole = tunnel.Reassembly()
    pieces = [tunnel.parse(p) for p in reversed(parts)]
    results = [whole.add(p) for p in pieces if isinstance(p, tunnel.ResponsePart)]
    assert results[:2] == [None, None]
    assert results[2] == tunnel.Response("r9", 200, {"content-type": "x"}, body)


def test_socket_and_tools_messages_are_written_as_the_spec_says() -> None:
    assert json.loads(tunnel.socket_open("s1", "/ws/client?workspaceId=w")) == {
        "type": 3103, "socket": "s1", "op": "open", "path": "/ws/client?workspaceId=w"}  # fmt: skip
    assert json.loads(tunnel.socket_frame("s1", "{}")) == {
        "type": 3103, "socket": "s1", "op": "frame", "data": "{}"}  # fmt: skip
    assert json.loads(tunnel.socket_close("s1")) == {
        "type": 3103, "socket": "s1", "op": "close", "code": 1000, "reason": ""}  # fmt: skip
    assert tunnel.parse(tunnel.tools([{"name": "t"}])) == tunnel.Tools([{"name": "t"}])
