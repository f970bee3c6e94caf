"""WuKongIM packets to bytes and back, with no I/O.

A packet is a fixed header byte — ``type << 4`` and four flags (dup, sync-once, red dot,
no-persist, high to low; on a CONNACK the lowest bit says instead that a server version
follows, and its ``flags.no_persist`` is never set) — then,
except for PING and PONG, the remaining length as a little-endian base-128 varint of at most
four bytes, then the body: big-endian integers, strings as a u16 byte length and UTF-8.

The layouts are the official JS SDK's (``wukongimjssdk`` 1.0.4, protocol version 2) and are
held byte for byte by its test vectors. What later protocol versions add — the server's
version and node id in CONNACK, an ``expire`` in SEND and RECV from version 3, the EVENT
packet — follows the SDK's newer source and is not checked against running code (see
docs/relay-mode.md).

The message fields of SEND and RECV are carried as they are on the wire (``payload`` is
ciphertext, ``msg_key`` its check); :mod:`lineup.relay.wukongim.crypto` makes and opens them.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field

MAX_REMAINING_LENGTH = 0x0FFF_FFFF  # four varint bytes
_U8, _U16, _U32, _U64 = 0xFF, 0xFFFF, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF

#: The version whose layouts the official SDK's vectors check.
VERIFIED_VERSION = 2
#: Where ``expire`` appears in SEND and RECV.
EXPIRE_SINCE_VERSION = 3
#: Where CONNACK ends with the node id.
NODE_ID_SINCE_VERSION = 4


class MalformedPacket(ValueError):
    """Bytes that are not a packet of this protocol, or a field out of its range."""


class PacketType(enum.IntEnum):
    CONNECT = 1
    CONNACK = 2
    SEND = 3
    SENDACK = 4
    RECV = 5
    RECVACK = 6
    PING = 7
    PONG = 8
    DISCONNECT = 9
    SUB = 10
    SUBACK = 11
    EVENT = 12


@dataclass(frozen=True, slots=True)
class Flags:
    """The header's four flags; their meaning is the server's (delivery hints)."""

    dup: bool = False
    sync_once: bool = False
    reddot: bool = False
    no_persist: bool = False

    def to_bits(self) -> int:
        return self.dup << 3 | self.sync_once << 2 | self.reddot << 1 | self.no_persist

    @classmethod
    def from_bits(cls, bits: int) -> Flags:
        return cls(bool(bits & 8), bool(bits & 4), bool(bits & 2), bool(bits & 1))


@dataclass(frozen=True, slots=True)
class Setting:
    """The message setting byte of SEND and RECV."""

    receipt_enabled: bool = False
    topic: bool = False
    stream: bool = False

    def to_byte(self) -> int:
        return self.receipt_enabled << 7 | self.topic << 3 | self.stream << 2

    @classmethod
    def from_byte(cls, value: int) -> Setting:
        return cls(bool(value >> 7 & 1), bool(value >> 3 & 1), bool(value >> 2 & 1))


@dataclass(frozen=True, slots=True)
class Connect:
    version: int
    device_flag: int
    device_id: str
    uid: str
    token: str
    client_timestamp: int
    client_key: str  # base64 of the client's X25519 public key
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Connack:
    time_diff: int
    reason_code: int
    server_key: str  # base64 of the server's X25519 public key
    salt: str
    server_version: int | None = None  # present when the server negotiates the version
    node_id: int = 0  # from version 4
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Send:
    setting: Setting
    client_seq: int
    client_msg_no: str
    channel_id: str
    channel_type: int
    msg_key: str
    payload: bytes
    stream_no: str = ""  # when ``setting.stream``
    topic: str = ""  # when ``setting.topic``
    expire: int = 0  # from version 3
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Sendack:
    message_id: int
    client_seq: int
    message_seq: int
    reason_code: int
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Recv:
    setting: Setting
    msg_key: str
    from_uid: str
    channel_id: str
    channel_type: int
    client_msg_no: str
    message_id: int
    message_seq: int
    timestamp: int
    payload: bytes
    stream_no: str = ""  # these three when ``setting.stream``
    stream_seq: int = 0
    stream_flag: int = 0
    topic: str = ""  # when ``setting.topic``
    expire: int = 0  # from version 3
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Recvack:
    message_id: int
    message_seq: int
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Ping:
    pass


@dataclass(frozen=True, slots=True)
class Pong:
    pass


@dataclass(frozen=True, slots=True)
class Disconnect:
    reason_code: int
    reason: str
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Sub:
    setting: int
    client_msg_no: str
    channel_id: str
    channel_type: int
    action: int  # 0 subscribe, 1 unsubscribe
    param: str = ""
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Suback:
    client_msg_no: str
    channel_id: str
    channel_type: int
    action: int
    reason_code: int
    flags: Flags = field(default_factory=Flags)


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    type: str
    timestamp: int
    data: bytes
    flags: Flags = field(default_factory=Flags)


Packet = (
    Connect
    | Connack
    | Send
    | Sendack
    | Recv
    | Recvack
    | Ping
    | Pong
    | Disconnect
    | Sub
    | Suback
    | Event
)

_TYPES: dict[type, PacketType] = {
    Connect: PacketType.CONNECT,
    Connack: PacketType.CONNACK,
    Send: PacketType.SEND,
    Sendack: PacketType.SENDACK,
    Recv: PacketType.RECV,
    Recvack: PacketType.RECVACK,
    Ping: PacketType.PING,
    Pong: PacketType.PONG,
    Disconnect: PacketType.DISCONNECT,
    Sub: PacketType.SUB,
    Suback: PacketType.SUBACK,
    Event: PacketType.EVENT,
}


def encode_varint(length: int) -> bytes:
    """The remaining length. Zero is one ``00`` byte (the SDK writes none; no packet with a
    length has an empty body, so the two never meet on the wire)."""
    if not 0 <= length <= MAX_REMAINING_LENGTH:
        raise MalformedPacket(f"remaining length {length} is outside 0..{MAX_REMAINING_LENGTH}")
    out = bytearray()
    while True:
        digit, length = length & 0x7F, length >> 7
        out.append(digit | (0x80 if length else 0))
        if not length:
            return bytes(out)


def decode_varint(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int] | None:
    """``(length, bytes used)``, or None when ``data`` ends inside the varint."""
    value = 0
    for i in range(4):
        if offset + i >= len(data):
            return None
        byte = data[offset + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value, i + 1
    raise MalformedPacket("remaining length longer than four bytes")


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray()

    def _int(self, value: int, limit: int, fmt: str, what: str) -> None:
        if not 0 <= value <= limit:
            raise MalformedPacket(f"{what} {value} is outside 0..{limit}")
        self.out += struct.pack(fmt, value)

    def u8(self, value: int, what: str) -> None:
        self._int(value, _U8, ">B", what)

    def u32(self, value: int, what: str) -> None:
        self._int(value, _U32, ">I", what)

    def u64(self, value: int, what: str) -> None:
        self._int(value, _U64, ">Q", what)

    def i64(self, value: int, what: str) -> None:
        if not -(1 << 63) <= value < 1 << 63:
            raise MalformedPacket(f"{what} {value} is outside the signed 64-bit range")
        self.out += struct.pack(">q", value)

    def string(self, value: str, what: str) -> None:
        raw = value.encode("utf-8")
        if len(raw) > _U16:
            raise MalformedPacket(f"{what} is {len(raw)} bytes of UTF-8; at most {_U16} fit")
        self.out += struct.pack(">H", len(raw)) + raw


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise MalformedPacket("the body ends inside a field")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack(">Q", self.take(8))[0])

    def i64(self) -> int:
        return int(struct.unpack(">q", self.take(8))[0])

    def string(self) -> str:
        raw = self.take(self.u16())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedPacket("a string is not UTF-8") from None

    def rest(self) -> bytes:
        chunk = self.data[self.at :]
        self.at = len(self.data)
        return chunk


def encode(packet: Packet, version: int = VERIFIED_VERSION) -> bytes:
    """One packet's bytes; ``version`` is the negotiated protocol version."""
    kind = _TYPES[type(packet)]
    if isinstance(packet, Ping | Pong):
        return bytes([kind << 4])
    w = _Writer()
    bits = packet.flags.to_bits()
    match packet:
        case Connect():
            w.u8(packet.version, "version")
            w.u8(packet.device_flag, "device flag")
            w.string(packet.device_id, "device id")
            w.string(packet.uid, "uid")
            w.string(packet.token, "token")
            w.u64(packet.client_timestamp, "client timestamp")
            w.string(packet.client_key, "client key")
        case Connack():
            bits &= ~1  # on a CONNACK the lowest bit says whether a server version follows
            if packet.server_version is not None:
                bits |= 1
                w.u8(packet.server_version, "server version")
            w.i64(packet.time_diff, "time diff")
            w.u8(packet.reason_code, "reason code")
            w.string(packet.server_key, "server key")
            w.string(packet.salt, "salt")
            if (packet.server_version or 0) >= NODE_ID_SINCE_VERSION:
                w.u64(packet.node_id, "node id")
        case Send():
            w.u8(packet.setting.to_byte(), "setting")
            w.u32(packet.client_seq, "client seq")
            w.string(packet.client_msg_no, "client message number")
            if packet.setting.stream:
                w.string(packet.stream_no, "stream number")
            w.string(packet.channel_id, "channel id")
            w.u8(packet.channel_type, "channel type")
            if version >= EXPIRE_SINCE_VERSION:
                w.u32(packet.expire, "expire")
            w.string(packet.msg_key, "message key")
            if packet.setting.topic:
                w.string(packet.topic, "topic")
            w.out += packet.payload
        case Sendack():
            w.u64(packet.message_id, "message id")
            w.u32(packet.client_seq, "client seq")
            w.u32(packet.message_seq, "message seq")
            w.u8(packet.reason_code, "reason code")
        case Recv():
            w.u8(packet.setting.to_byte(), "setting")
            w.string(packet.msg_key, "message key")
            w.string(packet.from_uid, "from uid")
            w.string(packet.channel_id, "channel id")
            w.u8(packet.channel_type, "channel type")
            if version >= EXPIRE_SINCE_VERSION:
                w.u32(packet.expire, "expire")
            w.string(packet.client_msg_no, "client message number")
            if packet.setting.stream:
                w.string(packet.stream_no, "stream number")
                w.u32(packet.stream_seq, "stream seq")
                w.u8(packet.stream_flag, "stream flag")
            w.u64(packet.message_id, "message id")
            w.u32(packet.message_seq, "message seq")
            w.u32(packet.timestamp, "timestamp")
            if packet.setting.topic:
                w.string(packet.topic, "topic")
            w.out += packet.payload
        case Recvack():
            w.u64(packet.message_id, "message id")
            w.u32(packet.message_seq, "message seq")
        case Disconnect():
            w.u8(packet.reason_code, "reason code")
            w.string(packet.reason, "reason")
        case Sub():
            w.u8(packet.setting, "setting")
            w.string(packet.client_msg_no, "client message number")
            w.string(packet.channel_id, "channel id")
            w.u8(packet.channel_type, "channel type")
            w.u8(packet.action, "action")
            w.string(packet.param, "param")
        case Suback():
            w.string(packet.client_msg_no, "client message number")
            w.string(packet.channel_id, "channel id")
            w.u8(packet.channel_type, "channel type")
            w.u8(packet.action, "action")
            w.u8(packet.reason_code, "reason code")
        case Event():
            w.string(packet.id, "event id")
            w.string(packet.type, "event type")
            w.u64(packet.timestamp, "timestamp")
            w.out += packet.data
    return bytes([kind << 4 | bits]) + encode_varint(len(w.out)) + bytes(w.out)


def frame_length(data: bytes | bytearray | memoryview) -> int | None:
    """How many bytes the packet at the start of ``data`` takes, or None if it is incomplete."""
    if not data:
        return None
    kind = data[0] >> 4
    if kind in (PacketType.PING, PacketType.PONG):
        return 1
    varint = decode_varint(data, 1)
    if varint is None:
        return None
    length, used = varint
    total = 1 + used + length
    return total if len(data) >= total else None


def decode(data: bytes, version: int = VERIFIED_VERSION) -> Packet:
    """One whole packet. A CONNACK's own server version, when it has one, decides its layout."""
    if not data:
        raise MalformedPacket("no bytes")
    header = data[0]
    try:
        kind = PacketType(header >> 4)
    except ValueError:
        raise MalformedPacket(f"unknown packet type {header >> 4}") from None
    if kind is PacketType.PING:
        return Ping()
    if kind is PacketType.PONG:
        return Pong()
    varint = decode_varint(data, 1)
    if varint is None:
        raise MalformedPacket("the packet ends inside its remaining length")
    length, used = varint
    body = data[1 + used :]
    if len(body) != length:
        raise MalformedPacket(f"remaining length says {length} bytes, the packet has {len(body)}")
    r = _Reader(bytes(body))
    flags = Flags.from_bits(header & 0x0F)
    packet: Packet
    match kind:
        case PacketType.CONNECT:
            packet = Connect(r.u8(), r.u8(), r.string(), r.string(), r.string(), r.u64(),
                             r.string(), flags)  # fmt: skip
        case PacketType.CONNACK:
            flags = Flags.from_bits(header & 0x0E)
            server_version = r.u8() if header & 1 else None
            time_diff, reason_code = r.i64(), r.u8()
            server_key, salt = r.string(), r.string()
            node_id = r.u64() if (server_version or 0) >= NODE_ID_SINCE_VERSION else 0
            packet = Connack(time_diff, reason_code, server_key, salt, server_version, node_id,
                             flags)  # fmt: skip
        case PacketType.SEND:
            setting = Setting.from_byte(r.u8())
            client_seq, client_msg_no = r.u32(), r.string()
            stream_no = r.string() if setting.stream else ""
            channel_id, channel_type = r.string(), r.u8()
            expire = r.u32() if version >= EXPIRE_SINCE_VERSION else 0
            msg_key = r.string()
            topic = r.string() if setting.topic else ""
            packet = Send(setting, client_seq, client_msg_no, channel_id, channel_type, msg_key,
                          r.rest(), stream_no, topic, expire, flags)  # fmt: skip
        case PacketType.SENDACK:
            packet = Sendack(r.u64(), r.u32(), r.u32(), r.u8(), flags)
        case PacketType.RECV:
            setting = Setting.from_byte(r.u8())
            msg_key, from_uid, channel_id, channel_type = r.string(), r.string(), r.string(), r.u8()
            expire = r.u32() if version >= EXPIRE_SINCE_VERSION else 0
            client_msg_no = r.string()
            stream = (r.string(), r.u32(), r.u8()) if setting.stream else ("", 0, 0)
            message_id, message_seq, timestamp = r.u64(), r.u32(), r.u32()
            topic = r.string() if setting.topic else ""
            packet = Recv(setting, msg_key, from_uid, channel_id, channel_type, client_msg_no,
                          message_id, message_seq, timestamp, r.rest(), *stream, topic, expire,
                          flags)  # fmt: skip
        case PacketType.RECVACK:
            packet = Recvack(r.u64(), r.u32(), flags)
        case PacketType.DISCONNECT:
            packet = Disconnect(r.u8(), r.string(), flags)
        case PacketType.SUB:
            packet = Sub(r.u8(), r.string(), r.string(), r.u8(), r.u8(), r.string(), flags)
        case PacketType.SUBACK:
            packet = Suback(r.string(), r.string(), r.u8(), r.u8(), r.u8(), flags)
        case PacketType.EVENT:
            packet = Event(r.string(), r.string(), r.u64(), r.rest(), flags)
    if r.at != len(r.data):
        raise MalformedPacket(f"{len(r.data) - r.at} bytes left after the {kind.name} body")
    return packet


class FrameReader:
    """Cuts a byte stream (TCP, or WebSocket frames that may hold several packets) into
    whole packets."""

    def __init__(self, max_length: int = MAX_REMAINING_LENGTH) -> None:
        self._buffer = bytearray()
        self._max_length = max_length

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        packets: list[bytes] = []
        while True:
            if len(self._buffer) >= 2 and self._buffer[0] >> 4 not in (7, 8):
                varint = decode_varint(self._buffer, 1)
                if varint is not None and varint[0] > self._max_length:
                    raise MalformedPacket(f"a packet of {varint[0]} bytes is over the limit")
            size = frame_length(self._buffer)
            if size is None:
                return packets
            packets.append(bytes(self._buffer[:size]))
            del self._buffer[:size]
