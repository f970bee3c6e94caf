"""The official WuKongIM JS SDK's vectors, and a way to run the SDK itself under Node.

Packets are compared as the SDK's JSON describes them (its field names, 64-bit numbers as
decimal strings): :func:`client_packet` turns a spec the SDK encoded into the Python packet,
:func:`sdk_fields` turns a Python server packet into the fields the SDK's decoder reports.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lineup.relay.wukongim import (
    Connack,
    Connect,
    Disconnect,
    Flags,
    MessageCipher,
    Packet,
    Ping,
    Pong,
    Recv,
    Recvack,
    Sendack,
    Setting,
    Sub,
    Suback,
)

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "data" / "wukongim" / "vectors.json"
SCRIPTS = ROOT / "scripts" / "wukongim-vectors"


@cache
def vectors() -> dict[str, Any]:
    return json.loads(VECTORS.read_text())  # type: ignore[no-any-return]


def session_cipher() -> MessageCipher:
    session = vectors()["session"]
    return MessageCipher(session["aesKey"].encode(), session["aesIV"].encode())


def flags_of(spec: dict[str, Any] | None) -> Flags:
    spec = spec or {}
    return Flags(
        dup=bool(spec.get("dup")),
        sync_once=bool(spec.get("syncOnce")),
        reddot=bool(spec.get("reddot")),
        no_persist=bool(spec.get("noPersist")),
    )


def flags_json(flags: Flags) -> dict[str, bool]:
    return {
        "noPersist": flags.no_persist,
        "reddot": flags.reddot,
        "syncOnce": flags.sync_once,
        "dup": flags.dup,
    }


def client_packet(spec: dict[str, Any], cipher: MessageCipher) -> Packet:
    """The Python packet for a client spec the SDK encoded."""
    p, flags = spec["packet"], flags_of(spec.get("flags"))
    match p["type"]:
        case "CONNECT":
            return Connect(p["version"], p["deviceFlag"], p["deviceID"], p["uid"], p["token"],
                           p["clientTimestamp"], p["clientKey"], flags)  # fmt: skip
        case "SEND":
            setting = Setting(
                receipt_enabled=bool(p["setting"].get("receiptEnabled")),
                topic=bool(p["setting"].get("topic")),
                stream=bool(p.get("streamNo")),
            )
            send = cipher.seal_send(
                p["payloadText"].encode(),
                client_seq=p["clientSeq"],
                client_msg_no=p["clientMsgNo"],
                channel_id=p["channelID"],
                channel_type=p["channelType"],
                setting=setting,
                topic=p.get("topic", ""),
                stream_no=p.get("streamNo", ""),
            )
            return type(send)(**{**_fields(send), "flags": flags})
        case "RECVACK":
            return Recvack(int(p["messageID"]), p["messageSeq"], flags)
        case "SUB":
            return Sub(p["setting"], p["clientMsgNo"], p["channelID"], p["channelType"],
                       p["action"], p.get("param", ""), flags)  # fmt: skip
        case "PING":
            return Ping()
    raise AssertionError(f"no client packet {p['type']}")


def _fields(packet: Any) -> dict[str, Any]:
    return {name: getattr(packet, name) for name in packet.__dataclass_fields__}


def sdk_fields(packet: Packet, cipher: MessageCipher) -> dict[str, Any]:
    """What the SDK's decoder (and, for RECV, its checks) should report for a server packet."""
    match packet:
        case Connack():
            # The SDK reads the lowest bit as no-persist; on a CONNACK it is the version's.
            bits = replace(packet.flags, no_persist=packet.server_version is not None)
            return {"type": "CONNACK", "flags": flags_json(bits),
                    "timeDiff": str(packet.time_diff % (1 << 64)),
                    "reasonCode": packet.reason_code, "serverKey": packet.server_key,
                    "salt": packet.salt}  # fmt: skip
        case Sendack():
            return {"type": "SENDACK", "flags": flags_json(packet.flags),
                    "messageID": str(packet.message_id), "clientSeq": packet.client_seq,
                    "messageSeq": packet.message_seq,
                    "reasonCode": packet.reason_code}  # fmt: skip
        case Recv():
            out: dict[str, Any] = {
                "type": "RECV",
                "flags": flags_json(packet.flags),
                "setting": {
                    "receiptEnabled": packet.setting.receipt_enabled,
                    "topic": packet.setting.topic,
                    "streamOn": packet.setting.stream,
                },
                "msgKey": packet.msg_key,
                "msgKeyValid": packet.msg_key == cipher.recv_msg_key(packet),
                "fromUID": packet.from_uid,
                "channelID": packet.channel_id,
                "channelType": packet.channel_type,
                "clientMsgNo": packet.client_msg_no,
                "messageID": str(packet.message_id),
                "messageSeq": packet.message_seq,
                "timestamp": packet.timestamp,
                "payloadHex": packet.payload.hex(),
            }
            if packet.setting.stream:
                out |= {"streamNo": packet.stream_no, "streamSeq": packet.stream_seq,
                        "streamFlag": packet.stream_flag}  # fmt: skip
            if packet.setting.topic:
                out["topic"] = packet.topic
            out["payloadText"] = cipher.decrypt(packet.payload).decode()
            return out
        case Disconnect():
            return {"type": "DISCONNECT", "flags": flags_json(packet.flags),
                    "reasonCode": packet.reason_code, "reason": packet.reason}  # fmt: skip
        case Suback():
            return {"type": "SUBACK", "flags": flags_json(packet.flags),
                    "clientMsgNo": packet.client_msg_no, "channelID": packet.channel_id,
                    "channelType": packet.channel_type, "action": packet.action,
                    "reasonCode": packet.reason_code}  # fmt: skip
        case Ping():
            return {"type": "PING"}
        case Pong():
            return {"type": "PONG"}
    raise AssertionError(f"not a server packet the SDK decodes: {packet!r}")


def require_sdk() -> Path:
    """The Node scripts, installed and built; skips only when Node itself is absent."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the official SDK runs under Node")
    if not (SCRIPTS / "dist" / "sdk.mjs").exists():
        pytest.fail(
            "the official SDK is not installed: run `make wukongim-sdk` "
            "(npm ci && npm run build in scripts/wukongim-vectors)"
        )
    return Path(node)


def run_sdk(request: dict[str, Any]) -> dict[str, Any]:
    """One call of the official SDK (scripts/wukongim-vectors/run.mjs) on a batch."""
    node = require_sdk()
    done = subprocess.run(
        [str(node), str(SCRIPTS / "run.mjs")],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def from_sdk_fields(fields: dict[str, Any]) -> Packet:
    """The Python server packet for what the SDK decoded: the inverse of :func:`sdk_fields`."""
    flags = flags_of(fields.get("flags"))
    match fields["type"]:
        case "CONNACK":
            time_diff = int(fields["timeDiff"])
            if time_diff >= 1 << 63:
                time_diff -= 1 << 64
            return Connack(time_diff, fields["reasonCode"], fields["serverKey"], fields["salt"],
                           flags=flags)  # fmt: skip
        case "SENDACK":
            return Sendack(int(fields["messageID"]), fields["clientSeq"], fields["messageSeq"],
                           fields["reasonCode"], flags)  # fmt: skip
        case "RECV":
            s = fields["setting"]
            return Recv(
                Setting(s["receiptEnabled"], s["topic"], s["streamOn"]),
                fields["msgKey"],
                fields["fromUID"],
                fields["channelID"],
                fields["channelType"],
                fields["clientMsgNo"],
                int(fields["messageID"]),
                fields["messageSeq"],
                fields["timestamp"],
                bytes.fromhex(fields["payloadHex"]),
                fields.get("streamNo", ""),
                fields.get("streamSeq", 0),
                fields.get("streamFlag", 0),
                fields.get("topic", ""),
                flags=flags,
            )
        case "DISCONNECT":
            return Disconnect(fields["reasonCode"], fields["reason"], flags)
        case "SUBACK":
            return Suback(fields["clientMsgNo"], fields["channelID"], fields["channelType"],
                          fields["action"], fields["reasonCode"], flags)  # fmt: skip
        case "PING":
            return Ping()
        case "PONG":
            return Pong()
    raise AssertionError(f"not a server packet: {fields!r}")
