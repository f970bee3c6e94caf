"""The codec reads back what it writes, for every packet type in every protocol version —
including what the official SDK cannot check (EVENT, the version-3 and -4 fields)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from lineup.relay.wukongim import (
    Connack,
    Connect,
    Disconnect,
    Event,
    Flags,
    FrameReader,
    Packet,
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
    encode,
)

u8, u32 = st.integers(0, 0xFF), st.integers(0, 0xFFFF_FFFF)
u64 = st.integers(0, (1 << 64) - 1)
text, data = st.text(max_size=30), st.binary(max_size=300)
flags = st.builds(Flags, st.booleans(), st.booleans(), st.booleans(), st.booleans())
setting = st.builds(Setting, st.booleans(), st.booleans(), st.booleans())
versions = st.integers(2, 4)


def _consistent(packet: Packet, version: int) -> Packet:
    """Fields the layout leaves out read back as their defaults."""
    fields = {name: getattr(packet, name) for name in getattr(packet, "__dataclass_fields__", {})}
    if isinstance(packet, Send | Recv):
        if not packet.setting.stream:
            fields |= {"stream_no": ""} | (
                {"stream_seq": 0, "stream_flag": 0} if isinstance(packet, Recv) else {}
            )
        if not packet.setting.topic:
            fields["topic"] = ""
        if version < 3:
            fields["expire"] = 0
    if isinstance(packet, Connack):
        fields["flags"] = replace(packet.flags, no_persist=False)  # the bit is the version's
        if (packet.server_version or 0) < 4:
            fields["node_id"] = 0
    return type(packet)(**fields) if fields else packet


packets: st.SearchStrategy[Packet] = st.one_of(
    st.builds(Connect, u8, u8, text, text, text, u64, text, flags),
    st.builds(
        Connack, st.integers(-(1 << 63), (1 << 63) - 1), u8, text, text, st.none() | u8, u64, flags
    ),
    st.builds(Send, setting, u32, text, text, u8, text, data, text, text, u32, flags),
    st.builds(Sendack, u64, u32, u32, u8, flags),
    st.builds(
        Recv,
        setting,
        text,
        text,
        text,
        u8,
        text,
        u64,
        u32,
        u32,
        data,
        text,
        u32,
        u8,
        text,
        u32,
        flags,
    ),
    st.builds(Recvack, u64, u32, flags),
    st.builds(Disconnect, u8, text, flags),
    st.builds(Sub, u8, text, text, u8, u8, text, flags),
    st.builds(Suback, text, text, u8, u8, u8, flags),
    st.builds(Event, text, text, u64, data, flags),
    st.just(Ping()),
    st.just(Pong()),
)


@given(packets, versions)
def test_every_packet_reads_back_as_written_in_every_version(packet: Packet, version: int) -> None:
    packet = _consistent(packet, version)
    assert decode(encode(packet, version), version) == packet


@given(st.lists(packets, max_size=20), st.integers(1, 50))
def test_packets_written_back_to_back_are_cut_apart_however_the_bytes_arrive(
    batch: list[Packet], step: int
) -> None:
    wire = [encode(_consistent(p, 2)) for p in batch]
    stream, reader, got = b"".join(wire), FrameReader(), []
    for at in range(0, len(stream), step):
        got += reader.feed(stream[at : at + step])
    assert got == wire


def test_the_public_surface_is_sorted_and_importable() -> None:
    import lineup.relay.wukongim as surface

    assert surface.__all__ == sorted(surface.__all__)
    assert all(getattr(surface, name) is not None for name in surface.__all__)
