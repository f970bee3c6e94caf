"""How the agent checks the hub it talks to: plain text only to loopback, TLS verified.

Three ways to trust a hub's certificate, chosen by :class:`TlsOptions`:

* by default, the system's authorities (a hub with a certificate from Let's Encrypt, or
  behind a proxy that has one);
* ``ca_file``: the authorities in that PEM file instead (a company's own, or the hub's
  self-signed certificate itself);
* ``fingerprint``: exactly the certificate with that SHA-256 — a hub's self-signed one on a
  LAN. The agent first opens a TLS connection that sends nothing, reads the certificate the
  hub presents and compares its fingerprint; only when it matches does it connect for real,
  trusting that certificate alone (so the real connection, too, can only be completed by the
  holder of its private key). The host name is not checked then: the pin names the hub.

Every failure is an :class:`~lineup.sdk.InsecureConnection`, raised before the credential is
sent, and final: trying again cannot make a wrong certificate right.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from lineup.protocol.transport_security import (
    SECURE_SCHEMES,
    fingerprint_of,
    normalise_fingerprint,
    plain_text_verdict,
    same_fingerprint,
)
from lineup.sdk._errors import InsecureConnection

PROBE_TIMEOUT = 10.0
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """How the agent trusts its hub: a pinned ``fingerprint``, a ``ca_file``, or the system's
    authorities; ``allow_insecure`` permits plain ``ws://``/``http://`` to another machine."""

    fingerprint: str | None = None
    ca_file: str | None = None
    allow_insecure: bool = False

    def __post_init__(self) -> None:
        if self.fingerprint is not None:
            object.__setattr__(self, "fingerprint", normalise_fingerprint(self.fingerprint))
        if self.ca_file is not None and not str(self.ca_file).strip():
            object.__setattr__(self, "ca_file", None)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TlsOptions:
        """From ``LINEUP_TLS_FINGERPRINT``, ``LINEUP_TLS_CA_FILE`` and
        ``LINEUP_ALLOW_INSECURE``."""
        env = os.environ if environ is None else environ
        try:
            return cls(
                fingerprint=env.get("LINEUP_TLS_FINGERPRINT") or None,
                ca_file=env.get("LINEUP_TLS_CA_FILE") or None,
                allow_insecure=env.get("LINEUP_ALLOW_INSECURE", "").strip().lower() in _TRUE,
            )
        except ValueError as exc:
            raise ValueError(f"LINEUP_TLS_FINGERPRINT: {exc}") from None

    def over(self, saved: TlsOptions) -> TlsOptions:
        """These options where set, else ``saved``'s (the environment over the saved file)."""
        return TlsOptions(
            fingerprint=self.fingerprint or saved.fingerprint,
            ca_file=self.ca_file or saved.ca_file,
            allow_insecure=self.allow_insecure or saved.allow_insecure,
        )

    def pinning(self, fingerprint: str | None) -> TlsOptions:
        return replace(self, fingerprint=fingerprint) if fingerprint else self

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, source: str) -> TlsOptions:
        fingerprint, ca_file = data.get("tlsFingerprint"), data.get("caFile")
        allow = data.get("allowInsecure", False)
        if fingerprint is not None and not isinstance(fingerprint, str):
            raise ValueError(f'{source}: "tlsFingerprint" must be a string.')
        if ca_file is not None and not isinstance(ca_file, str):
            raise ValueError(f'{source}: "caFile" must be a string.')
        if not isinstance(allow, bool):
            raise ValueError(f'{source}: "allowInsecure" must be true or false.')
        try:
            return cls(fingerprint=fingerprint, ca_file=ca_file, allow_insecure=allow)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.fingerprint:
            data["tlsFingerprint"] = self.fingerprint
        if self.ca_file:
            data["caFile"] = self.ca_file
        if self.allow_insecure:
            data["allowInsecure"] = True
        return data


def check_plain_text(url: str, options: TlsOptions) -> None:
    """Raise :class:`InsecureConnection` when ``url`` may not be used (before any byte)."""
    verdict = plain_text_verdict(url, allow_insecure=options.allow_insecure)
    if not verdict.allowed:
        raise InsecureConnection(
            verdict.reason or "plain_text_to_remote_host",
            verdict.message,
            url=url,
            next_step="Use the hub's https:// address (LineUp shows it under Connect my agent).",
        )


class TlsTrust:
    """The TLS contexts for one agent's connections, made once and reused.

    ``await context(url)`` is None for a plain-text URL (after :func:`check_plain_text`), else
    an :class:`ssl.SSLContext` that verifies the hub as :class:`TlsOptions` say — for a pin,
    after checking the certificate the hub presents.
    """

    def __init__(self, options: TlsOptions | None = None) -> None:
        self.options = options or TlsOptions()
        self._pinned: ssl.SSLContext | None = None
        self._verified: ssl.SSLContext | None = None

    async def context(self, url: str) -> ssl.SSLContext | None:
        check_plain_text(url, self.options)
        if urlsplit(url).scheme.lower() not in SECURE_SCHEMES:
            return None
        if self.options.fingerprint is None:
            if self._verified is None:
                self._verified = self._authority_context()
            return self._verified
        if self._pinned is None:
            der = await presented_certificate(url)
            if not same_fingerprint(fingerprint_of(der), self.options.fingerprint):
                raise self.mismatch(url, fingerprint_of(der))
            self._pinned = pinned_context(der)
        return self._pinned

    def forget(self) -> None:
        """Check the pin again at the next connection (the hub's certificate changed)."""
        self._pinned = None

    def mismatch(self, url: str, presented: str | None) -> InsecureConnection:
        what = f"presented {presented}" if presented else "presented another certificate"
        return InsecureConnection(
            "fingerprint_mismatch",
            f"The hub at {_host(url)} {what}, not the pinned {self.options.fingerprint}: "
            "refusing to send the agent's credential. If the hub's certificate was replaced on "
            "purpose, pin the new fingerprint (LineUp shows it under Settings); otherwise "
            "something between this machine and the hub is pretending to be it.",
            url=url,
            next_step="Compare the fingerprints; pin the new one only if you trust the change.",
        )

    async def untrusted(self, url: str, problem: BaseException) -> InsecureConnection:
        """The error for a certificate the authorities did not vouch for, naming its
        fingerprint so a person can compare it and pin it."""
        try:
            presented: str | None = fingerprint_of(await presented_certificate(url))
        except (OSError, TimeoutError, InsecureConnection):
            presented = None
        if self.options.fingerprint is not None:
            self.forget()
            return self.mismatch(url, presented)
        shown = f" (SHA-256 {presented})" if presented else ""
        return InsecureConnection(
            "untrusted_certificate",
            f"The hub at {_host(url)} presented a certificate this machine does not trust"
            f"{shown}: {_reason(problem)}. A hub on a LAN usually serves a self-signed one.",
            url=url,
            next_step="Compare that fingerprint with the one LineUp shows (Settings → This hub) "
            "and pin it: tls_fingerprint=… or LINEUP_TLS_FINGERPRINT; or give its authority "
            "with ca_file / LINEUP_TLS_CA_FILE.",
        )

    def _authority_context(self) -> ssl.SSLContext:
        try:
            return ssl.create_default_context(cafile=self.options.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise InsecureConnection(
                "unreadable_ca_file",
                f"Cannot read the TLS authorities in {self.options.ca_file}: {exc}.",
                next_step="Give a PEM file of certificates (LINEUP_TLS_CA_FILE).",
            ) from None


def pinned_context(der: bytes) -> ssl.SSLContext:
    """A client context that trusts exactly the certificate ``der`` (no host name check)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # the pinned leaf is the anchor
    context.load_verify_locations(cadata=der)
    return context


async def presented_certificate(url: str) -> bytes:
    """The DER certificate the server at ``url`` presents, read by a TLS handshake that
    sends no application data."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or 443
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    probe.check_hostname = False
    probe.verify_mode = ssl.CERT_NONE  # nothing is sent; the fingerprint decides
    server_name = None if _is_address(host) else host
    async with asyncio.timeout(PROBE_TIMEOUT):
        _, writer = await asyncio.open_connection(
            host, port, ssl=probe, server_hostname=server_name or ""
        )
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.wait_closed()
    if not der:
        raise InsecureConnection(
            "no_certificate", f"The hub at {host} presented no certificate.", url=url
        )
    return bytes(der)


def is_verification_failure(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) is a certificate the context refused."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _is_address(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url


def _reason(problem: BaseException) -> str:
    if isinstance(problem, ssl.SSLCertVerificationError) and problem.verify_message:
        return str(problem.verify_message)
    return str(problem) or type(problem).__name__
