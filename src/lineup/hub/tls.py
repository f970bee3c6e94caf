"""The hub terminating TLS itself: a certificate a person gives, or one it makes for a LAN.

``lineup serve --tls-cert PATH --tls-key PATH`` serves a certificate of the person's own (from
their authority, or Let's Encrypt); ``--tls-self-signed`` makes a key and a self-signed
certificate once, under ``$LINEUP_HOME/tls/``, for the names this machine answers to
(``localhost``, its host name, its LAN addresses), and reuses them on every start so their
fingerprint stays the same. No authority vouches for a self-signed certificate: agents trust it
by its fingerprint (printed at start, shown in the app, given to agents at pairing), which is
what :class:`ServedTls` carries. Behind a reverse proxy that terminates TLS, use neither.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lineup.protocol.transport_security import fingerprint_of

TlsMode = Literal["certificate", "self_signed"]

CERT_FILE = "cert.pem"
KEY_FILE = "key.pem"
SELF_SIGNED_DAYS = 3650
"""Ten years: a pinned certificate is trusted by its fingerprint, not by its dates, and
renewing it would mean pinning every agent again."""


class TlsSetupError(ValueError):
    """The TLS options cannot be used (missing file, a key without a certificate, …)."""


@dataclass(frozen=True, slots=True)
class ServedTls:
    """The certificate the hub serves: where its files are and its fingerprint."""

    mode: TlsMode
    cert_file: Path
    key_file: Path
    fingerprint: str

    @property
    def self_signed(self) -> bool:
        return self.mode == "self_signed"


def tls_from_options(
    *,
    cert: str | os.PathLike[str] | None,
    key: str | os.PathLike[str] | None,
    self_signed: bool,
    home: Path,
    hosts: tuple[str, ...] = (),
) -> ServedTls | None:
    """What to serve for the options of ``lineup serve`` (or direct mode); None: plain HTTP.

    ``hosts`` are extra names for a certificate made here (the address the hub listens on)."""
    if (cert is None) != (key is None):
        raise TlsSetupError(
            "--tls-cert and --tls-key go together: the certificate (PEM) and its private key."
        )
    if cert is not None and key is not None:
        if self_signed:
            raise TlsSetupError("Choose either your own certificate or --tls-self-signed.")
        cert_file, key_file = Path(cert).expanduser(), Path(key).expanduser()
        for what, path in (("certificate", cert_file), ("key", key_file)):
            if not path.is_file():
                raise TlsSetupError(f"The TLS {what} file {path} does not exist.")
        return ServedTls("certificate", cert_file, key_file, certificate_fingerprint(cert_file))
    if not self_signed:
        return None
    directory = home / "tls"
    cert_file, key_file = directory / CERT_FILE, directory / KEY_FILE
    if not (cert_file.is_file() and key_file.is_file()):
        make_self_signed(directory, names=machine_names(hosts))
    return ServedTls("self_signed", cert_file, key_file, certificate_fingerprint(cert_file))


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def certificate_fingerprint(cert_file: Path) -> str:
    """The fingerprint of the first certificate in a PEM file (the one a server presents)."""
    text = cert_file.read_text(encoding="ascii", errors="replace")
    begin, end = "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----"
    start = text.find(begin)
    stop = text.find(end, start)
    if start < 0 or stop < 0:
        raise TlsSetupError(f"{cert_file} holds no PEM certificate.")
    try:
        der = ssl.PEM_cert_to_DER_cert(text[start : stop + len(end)] + "\n")
    except ValueError as exc:
        raise TlsSetupError(f"{cert_file} holds no readable certificate: {exc}") from None
    return fingerprint_of(der)


def machine_names(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``localhost``, loopback, this machine's host names and LAN addresses, and ``extra``."""
    names: list[str] = ["localhost", "127.0.0.1", "::1"]
    hostname = socket.gethostname()
    names += [hostname, socket.getfqdn()]
    with contextlib.suppress(OSError):
        for *_, address in socket.getaddrinfo(hostname, None):
            names.append(str(address[0]))
    lan = lan_address()
    if lan:
        names.append(lan)
    names += [h for h in extra if h not in ("0.0.0.0", "::", "")]  # noqa: S104
    return tuple(dict.fromkeys(n.split("%")[0] for n in names if n))


def lan_address() -> str | None:
    """This machine's address on its default route (no packet is sent), if not loopback."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address  # noqa: S104


def make_self_signed(directory: Path, *, names: tuple[str, ...]) -> None:
    """Write a new P-256 key (mode 0600) and a self-signed certificate for ``names``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    alternatives: list[x509.GeneralName] = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"LineUp hub {names[0]}")])
    now = dt.datetime.now(dt.UTC)
    public = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    key_bytes = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _write(directory / KEY_FILE, key_bytes, 0o600)
    _write(directory / CERT_FILE, certificate.public_bytes(serialization.Encoding.PEM), 0o644)


def _write(target: Path, data: bytes, mode: int) -> None:
    temporary = target.with_name(f".{target.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), mode)
        handle.write(data)
    os.replace(temporary, target)


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tls-cert``, ``--tls-key`` and ``--tls-self-signed``, shared by ``lineup serve`` and
    ``lineup direct`` (defaults from ``LINEUP_TLS_CERT``, ``LINEUP_TLS_KEY``,
    ``LINEUP_TLS_SELF_SIGNED``)."""
    parser.add_argument(
        "--tls-cert",
        default=os.environ.get("LINEUP_TLS_CERT") or None,
        metavar="PATH",
        help="serve https with this certificate (PEM, with its chain) (LINEUP_TLS_CERT)",
    )
    parser.add_argument(
        "--tls-key",
        default=os.environ.get("LINEUP_TLS_KEY") or None,
        metavar="PATH",
        help="the certificate's private key (PEM) (LINEUP_TLS_KEY)",
    )
    parser.add_argument(
        "--tls-self-signed",
        action="store_true",
        default=env_flag("LINEUP_TLS_SELF_SIGNED"),
        help="serve https with a self-signed certificate made once under LINEUP_HOME/tls; "
        "agents pin its fingerprint (LINEUP_TLS_SELF_SIGNED)",
    )


def tls_from_arguments(args: argparse.Namespace, home: Path) -> ServedTls | None:
    return tls_from_options(
        cert=args.tls_cert,
        key=args.tls_key,
        self_signed=bool(args.tls_self_signed),
        home=home,
        hosts=(str(args.host),),
    )


def describe(tls: ServedTls) -> str:
    """What ``lineup serve`` prints about the certificate it serves."""
    if tls.self_signed:
        return (
            f"TLS: self-signed certificate {tls.cert_file}\n"
            f"  SHA-256 fingerprint (agents pin it): {tls.fingerprint}\n"
            "  Browsers warn once about this certificate: compare this fingerprint with the one "
            "they show."
        )
    return f"TLS: certificate {tls.cert_file}\n  SHA-256 fingerprint: {tls.fingerprint}"
