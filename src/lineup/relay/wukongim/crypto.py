"""WuKongIM's key exchange and message cipher, as the official SDK does them; no I/O.

The client sends an X25519 public key in CONNECT; the server answers with its own and a salt
in CONNACK. The message key is the first 16 characters of the hex MD5 of the base64 of the
shared secret, used as its ASCII bytes; the IV is the salt's first 16 characters. Payloads go
as base64 text of AES-128-CBC with PKCS#7 padding; a message's ``msg_key`` is the hex MD5 of
the same cipher applied to a string of its fields, and a receiver drops a message whose key
does not match.

MD5 and a fixed IV are the protocol's, not choices made here: this cipher gives the
transport's confidentiality against a passive observer of a plain connection, nothing more;
relay mode runs it inside TLS (``wss://``) when the server is not on loopback.
The SDK reads plaintexts as UTF-8 text, so payloads must be UTF-8 (JSON is).
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass, replace

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from lineup.relay.wukongim.codec import Recv, Send, Setting


class MessageRejected(ValueError):
    """A received message whose key does not match its content, or that does not decrypt."""


def _md5_hex(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class KeyPair:
    """The client's X25519 key pair; ``private`` is injectable so tests are reproducible."""

    private: bytes

    @classmethod
    def generate(cls) -> KeyPair:
        return cls(os.urandom(32))

    @property
    def public_base64(self) -> str:
        public = X25519PrivateKey.from_private_bytes(self.private).public_key()
        return base64.b64encode(public.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()

    def cipher(self, server_key: str, salt: str) -> MessageCipher:
        """The session's cipher from the CONNACK's ``server_key`` (base64) and ``salt``."""
        try:
            server = X25519PublicKey.from_public_bytes(base64.b64decode(server_key))
        except ValueError as exc:
            raise MessageRejected(f"the server key is not an X25519 public key: {exc}") from None
        secret = X25519PrivateKey.from_private_bytes(self.private).exchange(server)
        key = _md5_hex(base64.b64encode(secret))[:16]
        return MessageCipher(key.encode(), salt[:16].encode("utf-8"))


class MessageCipher:
    """One session's AES key and IV (16 bytes each)."""

    def __init__(self, key: bytes, iv: bytes) -> None:
        if len(key) != 16 or len(iv) != 16:
            raise MessageRejected("the message key and the salt must give 16 bytes each")
        self._key = key
        self._iv = iv

    def encrypt(self, plain: bytes) -> bytes:
        """Base64 text (as bytes) of the ciphertext: what goes on the wire."""
        padder = padding.PKCS7(128).padder()
        padded = padder.update(plain) + padder.finalize()
        encryptor = Cipher(algorithms.AES(self._key), modes.CBC(self._iv)).encryptor()
        return base64.b64encode(encryptor.update(padded) + encryptor.finalize())

    def decrypt(self, wire: bytes) -> bytes:
        try:
            raw = base64.b64decode(wire, validate=True)
            decryptor = Cipher(algorithms.AES(self._key), modes.CBC(self._iv)).decryptor()
            padded = decryptor.update(raw) + decryptor.finalize()
            unpadder = padding.PKCS7(128).unpadder()
            return unpadder.update(padded) + unpadder.finalize()
        except ValueError:
            raise MessageRejected("the payload does not decrypt with this session's key") from None

    def msg_key(self, verify: str) -> str:
        return _md5_hex(self.encrypt(verify.encode("utf-8")))

    def seal_send(
        self,
        plain: bytes,
        *,
        client_seq: int,
        client_msg_no: str,
        channel_id: str,
        channel_type: int,
        setting: Setting | None = None,
        topic: str = "",
        stream_no: str = "",
        expire: int = 0,
    ) -> Send:
        """A SEND carrying ``plain``, encrypted and keyed as the server checks it."""
        unkeyed = Send(
            setting or Setting(stream=bool(stream_no)),
            client_seq,
            client_msg_no,
            channel_id,
            channel_type,
            "",
            self.encrypt(plain),
            stream_no=stream_no,
            topic=topic,
            expire=expire,
        )
        return replace(unkeyed, msg_key=self.send_msg_key(unkeyed))

    def send_msg_key(self, packet: Send) -> str:
        """The key a SEND must carry; the server's check of what a client sent."""
        verify = (
            f"{packet.client_seq}{packet.client_msg_no}{packet.channel_id}"
            f"{packet.channel_type}{packet.payload.decode('latin-1')}"
        )
        return self.msg_key(verify)

    def open_send(self, packet: Send) -> bytes:
        """The plaintext of a SEND, after the check a server makes (the peer's side)."""
        if self.send_msg_key(packet) != packet.msg_key:
            raise MessageRejected("the message key does not match the message")
        return self.decrypt(packet.payload)

    def recv_msg_key(self, packet: Recv) -> str:
        """The key a RECV must carry, over the fields the SDK checks."""
        verify = (
            f"{packet.message_id}{packet.message_seq}{packet.client_msg_no}{packet.timestamp}"
            f"{packet.from_uid}{packet.channel_id}{packet.channel_type}"
            f"{packet.payload.decode('latin-1')}"
        )
        return self.msg_key(verify)

    def open_recv(self, packet: Recv) -> bytes:
        """The plaintext of a RECV, after the check its receiver makes."""
        if self.recv_msg_key(packet) != packet.msg_key:
            raise MessageRejected("the message key does not match the message")
        return self.decrypt(packet.payload)
