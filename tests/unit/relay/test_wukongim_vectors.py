"""The Python codec and cipher against the vectors the official JS SDK made (no Node needed)."""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

import pytest

from lineup.relay.wukongim import (
    KeyPair,
    MalformedPacket,
    MessageRejected,
    Send,
    decode,
    decode_varint,
    encode,
    encode_varint,
)
from lineup.relay.wukongim.codec import FrameReader
from tests.support.wukongim import client_packet, sdk_fields, session_cipher, vectors

V = vectors()
CLIENT = {spec["name"]: spec for spec in V["clientPackets"]}
SERVER = {spec["name"]: spec for spec in V["serverPackets"]}


def test_the_vectors_come_from_the_sdk_version_the_docs_name() -> None:
    assert V["sdk"] == {"name": "wukongimjssdk", "version": "1.0.4", "protoVersion": 2}


def test_the_key_exchange_derives_the_sdks_message_key_and_iv() -> None:
    session = V["session"]
    client = KeyPair(base64.b64decode(session["clientPrivateKey"]))
    connect = decode(bytes.fromhex(session["connectHex"]))
    assert connect.client_key == client.public_base64  # type: ignore[union-attr]
    server = KeyPair(base64.b64decode(session["serverPrivateKey"]))
    assert server.public_base64 == session["serverPublicKey"]
    cipher = client.cipher(session["serverPublicKey"], session["salt"])
    assert cipher._key == session["aesKey"].encode()
    assert cipher._iv == session["aesIV"].encode()
    # The server's side of the exchange reaches the same key.
    assert server.cipher(client.public_base64, session["salt"])._key == cipher._key


def test_the_sdks_connect_from_its_handshake_decodes_and_encodes_back() -> None:
    raw = bytes.fromhex(V["session"]["connectHex"])
    packet = decode(raw)
    assert packet.version == 2 and packet.device_flag == 1  # type: ignore[union-attr]
    assert packet.uid == "agent-7" and packet.token == "token-of-agent-7"  # type: ignore[union-attr]
    assert encode(packet) == raw


@pytest.mark.parametrize("case", V["varints"], ids=lambda c: str(c["length"]))
def test_remaining_lengths_are_the_sdks_varints(case: dict[str, Any]) -> None:
    assert case["decodedBySdk"] == case["length"]
    if case["length"] == 0:
        # The SDK writes no byte for zero; no packet with a length has an empty body.
        assert case["hex"] == "" and encode_varint(0) == b"\x00"
        return
    assert encode_varint(case["length"]).hex() == case["hex"]
    assert decode_varint(bytes.fromhex(case["hex"])) == (case["length"], len(case["hex"]) // 2)


def test_a_length_past_four_varint_bytes_is_refused() -> None:
    with pytest.raises(MalformedPacket):
        encode_varint(268435456)
    with pytest.raises(MalformedPacket):
        decode_varint(bytes.fromhex("ffffffff7f"))


@pytest.mark.parametrize("case", V["cipher"], ids=lambda c: str(len(c["plainText"])))
def test_the_cipher_matches_the_sdk_in_both_directions(case: dict[str, Any]) -> None:
    cipher = session_cipher()
    plain = case["plainText"].encode()
    assert cipher.encrypt(plain).decode() == case["cipherText"]
    assert cipher.decrypt(case["cipherText"].encode()) == plain
    assert cipher.msg_key(case["plainText"]) == case["msgKey"]


@pytest.mark.parametrize("name", sorted(CLIENT))
def test_client_packets_encode_byte_identical_to_the_sdk(name: str) -> None:
    spec = CLIENT[name]
    packet = client_packet(spec, session_cipher())
    assert encode(packet).hex() == spec["hex"]
    assert decode(bytes.fromhex(spec["hex"])) == packet


@pytest.mark.parametrize("name", sorted(SERVER))
def test_server_packets_decode_to_the_fields_the_sdk_reads(name: str) -> None:
    spec = SERVER[name]
    raw = bytes.fromhex(spec["hex"])
    packet = decode(raw)
    assert sdk_fields(packet, session_cipher()) == spec["decoded"]
    assert encode(packet) == raw


def test_a_recv_with_a_wrong_message_key_is_rejected() -> None:
    packet = decode(bytes.fromhex(SERVER["recv-text"]["hex"]))
    cipher = session_cipher()
    assert cipher.open_recv(packet) == b'{"type":1,"content":"hi"}'  # type: ignore[arg-type]
    forged = type(packet)(**{**{f: getattr(packet, f) for f in packet.__dataclass_fields__},
                              "channel_id": "someone-else"})  # fmt: skip
    with pytest.raises(MessageRejected):
        cipher.open_recv(forged)  # type: ignore[arg-type]


def test_a_stream_of_packets_is_cut_into_whole_packets_wherever_it_breaks() -> None:
    stream = b"".join(bytes.fromhex(s["hex"]) for s in V["serverPackets"])
    expected = [bytes.fromhex(s["hex"]) for s in V["serverPackets"]]
    for step in (1, 7, 4096, len(stream)):
        reader = FrameReader()
        got: list[bytes] = []
        for at in range(0, len(stream), step):
            got += reader.feed(stream[at : at + step])
        assert got == expected


@pytest.mark.parametrize(
    "raw",
    ["", "d0", "2005000000", "40", "4081", "400d" + "00" * 14, "400c" + "00" * 11],
    ids=["empty", "unknown-type", "short-body", "no-length", "cut-varint", "trailing", "short"],
)
def test_malformed_bytes_are_refused(raw: str) -> None:
    with pytest.raises(MalformedPacket):
        decode(bytes.fromhex(raw))


@pytest.mark.parametrize("name", sorted(n for n in CLIENT if n.startswith("send")))
def test_a_send_the_sdk_made_passes_the_servers_key_check_and_opens(name: str) -> None:
    packet = decode(bytes.fromhex(CLIENT[name]["hex"]))
    assert isinstance(packet, Send)
    assert session_cipher().open_send(packet) == CLIENT[name]["packet"]["payloadText"].encode()
    with pytest.raises(MessageRejected):
        session_cipher().open_send(replace(packet, client_seq=packet.client_seq ^ 1))
