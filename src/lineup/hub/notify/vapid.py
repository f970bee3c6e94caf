"""The hub's Web Push identity (VAPID, RFC 8292): one P-256 key pair, made on first start and
kept in the database (the private key sealed) so every hub node signs with the same key."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from lineup.store import Store
from lineup.store import notifications as store
from lineup.store.sealed import Keyring


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_keys() -> store.VapidKeys:
    """A fresh pair: the private scalar (32 bytes) and the uncompressed public point (65 bytes),
    both base64url without padding — the forms ``py_vapid`` and ``PushManager`` take."""
    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_numbers().private_value.to_bytes(32, "big")
    public = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return store.VapidKeys(public_key=b64url(public), private_key=b64url(private))


async def load_or_create(db: Store, keyring: Keyring, now_ms: int) -> store.VapidKeys:
    """The stored pair, or a new one stored now. Two nodes starting at once agree: the writer
    transaction's write lock orders them, and the second finds the first one's pair."""
    existing = await db.read(lambda r: store.get_vapid(r.connection, keyring))
    if existing is not None:
        return existing
    made = new_keys()
    return await db.write(lambda tx: store.ensure_vapid(tx.connection, keyring, made, now_ms))
