"""Secrets the hub must read back (the VAPID private key, push subscriptions), sealed with
AES-256-GCM under a key kept outside the database: a copy of the database alone reveals none.

A sealed value is ``lus1.<key id>.<base64url(nonce | ciphertext | tag)>``. The key id names the
key it was sealed with, so a keyring of several keys opens values sealed with any of them and
seals with the first: that is how keys rotate. Each value is bound to where it is stored (the
``context``, e.g. ``push_subscriptions.endpoint:dev_…``), so a sealed value copied into another
row or column does not open.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

PREFIX = "lus1"
KEY_BYTES = 32
NONCE_BYTES = 12


class UnreadableSecret(Exception):
    """A stored secret that none of the hub's keys opens (a wrong or missing key)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def key_id(key: bytes) -> str:
    """A short public name for a key: a hash, so it tells nothing about the key."""
    return hashlib.sha256(b"lineup secret key id\x00" + key).hexdigest()[:8]


def new_key_text() -> str:
    """A fresh key in the form ``LINEUP_SECRET_KEY`` and the key file take."""
    return _b64(os.urandom(KEY_BYTES))


def parse_key(text: str) -> bytes:
    """A key from its text form (base64url of 32 bytes); ValueError with a reason if not."""
    try:
        key = _unb64(text.strip())
    except (binascii.Error, ValueError) as exc:
        raise ValueError("a secret key must be base64url text") from exc
    if len(key) != KEY_BYTES:
        raise ValueError(f"a secret key must be {KEY_BYTES} bytes (base64url), got {len(key)}")
    return key


def is_sealed(value: str) -> bool:
    return value.startswith(PREFIX + ".")


def sealed_key_id(value: str) -> str | None:
    """The id of the key ``value`` was sealed with (None for a value that is not sealed)."""
    if not is_sealed(value):
        return None
    parts = value.split(".")
    return parts[1] if len(parts) == 3 else None


class Keyring:
    """The hub's secret keys, current first. Seals with the current key; opens with any."""

    __slots__ = ("_keys", "current_id")

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("a keyring needs at least one key")
        for key in keys:
            if len(key) != KEY_BYTES:
                raise ValueError(f"a secret key must be {KEY_BYTES} bytes")
        self._keys = {key_id(k): AESGCM(k) for k in keys}
        self.current_id = key_id(keys[0])

    @classmethod
    def from_texts(cls, texts: Sequence[str]) -> Keyring:
        return cls([parse_key(t) for t in texts])

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def __repr__(self) -> str:
        return f"Keyring(current={self.current_id!r}, keys={len(self._keys)})"

    def seal(self, plaintext: str, context: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._keys[self.current_id].encrypt(nonce, plaintext.encode(), context.encode())
        return f"{PREFIX}.{self.current_id}.{_b64(nonce + sealed)}"

    def open(self, value: str, context: str) -> str:
        kid = sealed_key_id(value)
        if kid is None:
            raise UnreadableSecret(f"{context} is not sealed")
        cipher = self._keys.get(kid)
        if cipher is None:
            raise UnreadableSecret(
                f"{context} was sealed with key {kid}, which this hub does not have"
            )
        try:
            raw = _unb64(value.split(".")[2])
            plain = cipher.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], context.encode())
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise UnreadableSecret(f"{context} does not open with key {kid}") from exc
        return plain.decode()

    def needs_resealing(self, value: str) -> bool:
        """Plain text (from an older hub) or sealed with a key other than the current one."""
        return sealed_key_id(value) != self.current_id
