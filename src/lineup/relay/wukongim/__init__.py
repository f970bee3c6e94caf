"""WuKongIM's binary protocol, checked against the official JS SDK (see docs/relay-mode.md).

:mod:`.codec` (packets ⇄ bytes) and :mod:`.crypto` (the key exchange and the message cipher)
do no I/O; :mod:`.client` runs them over a socket.
"""

from lineup.relay.wukongim.codec import (
    Connack,
    Connect,
    Disconnect,
    Event,
    Flags,
    FrameReader,
    MalformedPacket,
    Packet,
    PacketType,
    Ping,
    Pong,
    Recv,
    Recvack,
    Send,
    Sendack,
    Setting,
    Sub,
    Suback,
    decode,
    decode_varint,
    encode,
    encode_varint,
)
from lineup.relay.wukongim.crypto import KeyPair, MessageCipher, MessageRejected

__all__ = [
    "Connack",
    "Connect",
    "Disconnect",
    "Event",
    "Flags",
    "FrameReader",
    "KeyPair",
    "MalformedPacket",
    "MessageCipher",
    "MessageRejected",
    "Packet",
    "PacketType",
    "Ping",
    "Pong",
    "Recv",
    "Recvack",
    "Send",
    "Sendack",
    "Setting",
    "Sub",
    "Suback",
    "decode",
    "decode_varint",
    "encode",
    "encode_varint",
]
