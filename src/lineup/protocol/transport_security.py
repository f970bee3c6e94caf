"""Which connections an agent may open, and how a pinned certificate is named. Pure.

An agent's credential travels in the first bytes it sends (the ``Authorization`` header of the
WebSocket upgrade, the pairing answer), so a connection in plain text to another machine gives
it to anyone on the path. The rule: ``ws://`` and ``http://`` only to this machine (loopback:
``127.0.0.0/8``, ``::1``, ``localhost``); anything else needs ``wss://`` / ``https://``, unless
the person explicitly allowed plain text (``allow_insecure``).

A hub on a LAN often serves a self-signed certificate that no authority vouches for; the agent
then trusts it by its *fingerprint*: the SHA-256 of the certificate's DER bytes, written as 32
upper-case hex pairs joined by colons (``AB:CD:…``), the form browsers and ``openssl x509
-fingerprint -sha256`` show. :func:`normalise_fingerprint` accepts it with or without colons,
in either case, with a ``sha256:`` or ``SHA256 Fingerprint=`` prefix, so a person can paste
what their tool printed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

SECURE_SCHEMES = frozenset({"wss", "https"})
PLAIN_SCHEMES = frozenset({"ws", "http"})

_PREFIX = re.compile(r"^\s*(sha-?256)?\s*(fingerprint)?\s*[:=]?\s*", re.IGNORECASE)
_HEX = re.compile(r"^[0-9a-f]{64}$")

InsecureReason = Literal["plain_text_to_remote_host", "unsupported_scheme"]


def fingerprint_of(der: bytes) -> str:
    """The fingerprint of a certificate given as DER bytes: ``AB:CD:…`` (SHA-256)."""
    return format_fingerprint(hashlib.sha256(der).hexdigest())


def format_fingerprint(hex_digits: str) -> str:
    """64 hex digits as upper-case pairs joined by colons."""
    digits = hex_digits.upper()
    return ":".join(digits[i : i + 2] for i in range(0, len(digits), 2))


def normalise_fingerprint(text: str) -> str:
    """``text`` as a canonical fingerprint; ``ValueError`` saying why when it is not one."""
    if not isinstance(text, str):
        raise ValueError("A TLS fingerprint is text: 32 hex pairs such as AB:CD:…")
    rest = _PREFIX.sub("", text, count=1)
    digits = re.sub(r"[\s:\-]", "", rest).lower()
    if not _HEX.match(digits):
        raise ValueError(
            "A TLS fingerprint is the certificate's SHA-256: 64 hex digits, usually written as "
            f"32 pairs separated by colons (AB:CD:…); {text.strip()[:80]!r} is not one."
        )
    return format_fingerprint(digits)


def same_fingerprint(a: str, b: str) -> bool:
    """True when both name the same certificate (either may be in any accepted spelling)."""
    try:
        left, right = normalise_fingerprint(a), normalise_fingerprint(b)
    except ValueError:
        return False
    return hmac.compare_digest(left, right)


def is_loopback_host(host: str) -> bool:
    """``localhost`` (and its subdomains), ``127.0.0.0/8`` and ``::1``: this machine."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


@dataclass(frozen=True, slots=True)
class PlainTextVerdict:
    """Whether a URL may be used; when not, ``reason`` is a code and ``message`` a sentence."""

    allowed: bool
    secure: bool
    reason: InsecureReason | None = None
    message: str = ""


def plain_text_verdict(url: str, *, allow_insecure: bool = False) -> PlainTextVerdict:
    """May an agent open ``url``? Secure schemes always; plain ones to loopback, or anywhere
    when ``allow_insecure``; other schemes never."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in SECURE_SCHEMES:
        return PlainTextVerdict(allowed=True, secure=True)
    if scheme not in PLAIN_SCHEMES:
        return PlainTextVerdict(
            allowed=False,
            secure=False,
            reason="unsupported_scheme",
            message=f"{url!r} is not an http(s) or ws(s) address.",
        )
    host = parts.hostname or ""
    if allow_insecure or is_loopback_host(host):
        return PlainTextVerdict(allowed=True, secure=False)
    secure = "wss" if scheme == "ws" else "https"
    return PlainTextVerdict(
        allowed=False,
        secure=False,
        reason="plain_text_to_remote_host",
        message=(
            f"Refusing to connect to {host or url} over plain {scheme}://: the agent's "
            f"credential would cross the network unencrypted. Use {secure}:// (the hub serves "
            "TLS with `lineup serve --tls-self-signed` or your own certificate), or allow plain "
            "text explicitly (allow_insecure=True, LINEUP_ALLOW_INSECURE=1) on a network you "
            "trust."
        ),
    )


def is_plain_text_allowed(url: str, *, allow_insecure: bool = False) -> bool:
    """Shorthand for ``plain_text_verdict(url, allow_insecure=…).allowed``."""
    return plain_text_verdict(url, allow_insecure=allow_insecure).allowed
