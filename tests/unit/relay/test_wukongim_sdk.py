"""The official JS SDK, running under Node, reads what the Python codec writes.

Each example is one Node process on a batch of packets that hypothesis draws. Shrinking is
off (each step would be another process): a failure names the packet it failed on.
"""

from __future__ import annotations

import base64
import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from lineup.relay.wukongim import (
    Connack,
    Connect,
    Disconnect,
    Flags,
    KeyPair,
    Packet,
    Pong,
    Recv,
    Recvack,
    Send,
    Sendack,
    Setting,
    Suback,
    decode,
    encode,
)
from tests.support.wukongim import (
    SCRIPTS,
    VECTORS,
    client_packet,
    from_sdk_fields,
    require_sdk,
    run_sdk,
    sdk_fields,
    session_cipher,
    vectors,
)

CIPHER = session_cipher()
SESSION = {"aesKey": vectors()["session"]["aesKey"], "aesIV": vectors()["session"]["aesIV"]}

u8 = st.integers(0, 0xFF)
u32 = st.integers(0, 0xFFFF_FFFF)
u64 = st.integers(0, (1 << 64) - 1)
text = st.text(max_size=40)
flags = st.builds(Flags, st.booleans(), st.booleans(), st.booleans(), st.booleans())


@st.composite
def recv(draw: st.DrawFn) -> Recv:
    setting = Setting(draw(st.booleans()), draw(st.booleans()), draw(st.booleans()))
    stream = (draw(text), draw(u32), draw(u8)) if setting.stream else ("", 0, 0)
    packet = Recv(setting, "", draw(text), draw(text), draw(u8), draw(text), draw(u64),
                  draw(u32), draw(u32), CIPHER.encrypt(draw(st.text(max_size=300)).encode()),
                  *stream, draw(text) if setting.topic else "", flags=draw(flags))  # fmt: skip
    return type(packet)(**{**_fields(packet), "msg_key": CIPHER.recv_msg_key(packet)})


def _fields(packet: Any) -> dict[str, Any]:
    return {name: getattr(packet, name) for name in packet.__dataclass_fields__}


BATCHES = settings(
    max_examples=6,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

server_packets: st.SearchStrategy[Packet] = st.one_of(
    st.builds(Connack, st.integers(-(1 << 63), (1 << 63) - 1), u8, text, text, flags=flags),
    st.builds(Sendack, u64, u32, u32, u8, flags),
    recv(),
    st.builds(Disconnect, u8, text, flags),
    st.builds(Suback, text, text, u8, u8, u8, flags),
    st.just(Pong()),
)


def test_every_server_packet_of_the_vectors_encoded_in_python_is_read_by_the_sdk_intact() -> None:
    specs = vectors()["serverPackets"]
    packets = [from_sdk_fields(spec["decoded"]) for spec in specs]
    answer = run_sdk({**SESSION, "decode": [encode(p).hex() for p in packets]})
    for spec, packet, decoded in zip(specs, packets, answer["decoded"], strict=True):
        assert decoded == spec["decoded"] == sdk_fields(packet, CIPHER), spec["name"]


@BATCHES
@given(st.lists(server_packets, min_size=1, max_size=150))
def test_encode_then_sdk_decode_then_encode_round_trips(packets: list[Packet]) -> None:
    answer = run_sdk({**SESSION, "decode": [encode(p).hex() for p in packets]})
    for packet, decoded in zip(packets, answer["decoded"], strict=True):
        assert decoded == sdk_fields(packet, CIPHER), packet
        assert decoded.get("msgKeyValid", True), packet
        assert encode(from_sdk_fields(decoded)) == encode(packet), packet


# The SDK writes 64-bit numbers through a decimal division that rounds above about 2^52
# (see docs/relay-mode.md); message ids drawn here stay where it is exact.
exact_u64 = st.integers(0, (1 << 52) - 1)
client_specs = st.one_of(
    st.fixed_dictionaries({"packet": st.fixed_dictionaries({
        "type": st.just("SEND"),
        "setting": st.fixed_dictionaries({"receiptEnabled": st.booleans(), "topic": st.booleans()}),
        "clientSeq": u32, "clientMsgNo": text.filter(bool), "channelID": text, "channelType": u8,
        "topic": text, "streamNo": text, "payloadText": st.text(max_size=300),
    }), "flags": st.fixed_dictionaries({"dup": st.booleans(), "reddot": st.booleans()})}),
    st.fixed_dictionaries({"packet": st.fixed_dictionaries({
        "type": st.just("RECVACK"), "messageID": exact_u64.map(str), "messageSeq": u32})}),
    st.fixed_dictionaries({"packet": st.fixed_dictionaries({
        "type": st.just("SUB"), "setting": u8, "clientMsgNo": text, "channelID": text,
        "channelType": u8, "action": st.integers(0, 1), "param": text})}),
    st.fixed_dictionaries({"packet": st.fixed_dictionaries({
        "type": st.just("CONNECT"), "version": u8, "deviceFlag": u8, "deviceID": text,
        "uid": text, "token": text, "clientTimestamp": exact_u64,
        "clientKey": st.just(KeyPair(bytes(32)).public_base64)})}),
)  # fmt: skip


@BATCHES
@given(st.lists(client_specs, min_size=1, max_size=150))
def test_client_packets_encode_as_the_sdk_encodes_them(specs: list[dict[str, Any]]) -> None:
    answer = run_sdk({**SESSION, "encode": specs})
    for spec, sdk_hex in zip(specs, answer["encoded"], strict=True):
        assert encode(client_packet(spec, CIPHER)).hex() == sdk_hex, spec


def test_the_sdk_misencodes_the_largest_message_ids_and_python_does_not() -> None:
    spec = {"packet": {"type": "RECVACK", "messageID": str((1 << 63) - 1), "messageSeq": 1}}
    (sdk_hex,) = run_sdk({**SESSION, "encode": [spec]})["encoded"]
    ours = encode(client_packet(spec, CIPHER)).hex()
    assert ours == "600c" + "7fffffffffffffff" + "00000001"
    assert sdk_hex != ours


def test_the_committed_vectors_are_what_the_sdk_makes(tmp_path: Path) -> None:
    node = require_sdk()
    made = tmp_path / "vectors.json"
    subprocess.run([str(node), str(SCRIPTS / "gen.mjs"), str(made)], check=True, timeout=60)
    assert made.read_text() == VECTORS.read_text(), "run `make wukongim-vectors` and commit"


def test_the_sdk_reads_one_packet_per_websocket_message_and_mangles_several() -> None:
    """What a peer talking to the SDK must do: one packet per WebSocket message (as the
    Python client does). The SDK's reassembly of several in one message loses some and
    repeats others — recorded here so that a peer never relies on it."""
    server = {spec["name"]: spec["hex"] for spec in vectors()["serverPackets"]}
    sendack, suback, disconnect, pong = (server[n] for n in
                                         ("sendack", "suback", "disconnect", "pong"))  # fmt: skip
    one_each = [[sendack], [suback], [pong], [disconnect], [server["recv-three-byte-length"]]]
    together = [[sendack, suback, disconnect]]
    answer = run_sdk({**SESSION, "unpack": [one_each, together]})
    assert answer["unpacked"][0] == [packets[0] for packets in one_each]
    assert answer["unpacked"][1] != [sendack, suback, disconnect]


def _sealed_recv(content: dict[str, Any], message_id: int) -> str:
    payload = CIPHER.encrypt(json.dumps(content).encode())
    unkeyed = Recv(Setting(), "", "person-1", "person-1", 1, f"c-{message_id}", message_id,
                   message_id, 1764806400, payload)  # fmt: skip
    return encode(replace(unkeyed, msg_key=CIPHER.recv_msg_key(unkeyed))).hex()


def test_the_sdk_as_an_app_uses_it_talks_with_the_python_server_side() -> None:
    """The SDK's own handshake, its chat manager's send, and its message listeners: what it
    sends opens with the server's key check, what Python sends reaches its listeners, and it
    acknowledges each message it was given."""
    session = vectors()["session"]
    chat = run_sdk({"chat": {
        "serverPublicKey": session["serverPublicKey"], "salt": session["salt"],
        "uid": "agent-7", "token": "token-of-agent-7",
        "sends": [{"channelID": "person-1", "channelType": 1, "text": "hello 🙂"}],
        "recvs": [_sealed_recv({"type": 1, "content": "from python 你好"}, 501),
                  _sealed_recv({"type": 3001, "frame": '{"type":"ack"}'}, 502)],
    }})["chat"]  # fmt: skip
    # Its key pair is the one its seeded randomness gave the vectors: the same session keys.
    assert (chat["aesKey"], chat["aesIV"]) == (session["aesKey"], session["aesIV"])
    client_key = decode(bytes.fromhex(chat["connect"]))
    assert isinstance(client_key, Connect)
    server = KeyPair(base64.b64decode(session["serverPrivateKey"]))
    assert server.cipher(client_key.client_key, session["salt"])._key == CIPHER._key

    send, *acks = (decode(bytes.fromhex(raw)) for raw in chat["written"])
    assert isinstance(send, Send) and (send.channel_id, send.channel_type) == ("person-1", 1)
    assert json.loads(CIPHER.open_send(send)) == {"type": 1, "content": "hello 🙂"}
    assert acks == [Recvack(501, 501), Recvack(502, 502)]
    text, custom = chat["received"]
    assert (text["fromUID"], text["messageID"], text["contentType"]) == ("person-1", "501", 1)
    assert text["text"] == "from python 你好"
    # A content type the app has not registered (WKSDK.register) arrives as unknown (0),
    # its JSON intact.
    assert custom["contentType"] == 0
    assert custom["contentObj"] == {"type": 3001, "frame": '{"type":"ack"}'}
