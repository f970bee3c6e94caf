"""What a provider's author does with a package besides testing it: make a signing key,
sign and pack the package, start a new one from the template.

A signing key file holds the raw Ed25519 private key in base64 (mode 0600, never
overwritten); its public half goes, as one line ``ed25519 <base64 public key> <key id>``,
into the trusted-keys file of every hub that should install the author's packages
(:func:`lineup.core.package.parse_trusted_keys` reads it).
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path

from lineup import __version__
from lineup.core.package import (
    ARCHIVE_SUFFIX,
    SIGNATURE,
    PackageError,
    key_id_of,
    new_signing_key,
    public_of,
    read_manifest,
    sign,
    static_check,
    tree_digest,
    write_archive,
)
from lineup.providers.packaging import template
from lineup.providers.packaging.loader import read_package_dir


def trusted_key_line(public_key: bytes) -> str:
    """The line of a trusted-keys file for ``public_key``."""
    return f"ed25519 {base64.b64encode(public_key).decode()} {key_id_of(public_key)}"


def keygen(out: Path) -> str:
    """Write a fresh private key to ``out`` (refusing to replace a file) and answer its
    public key's trusted-keys line."""
    private, public = new_signing_key()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(base64.b64encode(private).decode() + "\n")
    return trusted_key_line(public)


def read_private_key(path: Path) -> bytes:
    try:
        raw = base64.b64decode(path.read_text().strip(), validate=True)
    except (OSError, binascii.Error, ValueError, UnicodeDecodeError):
        raise PackageError("keys", f"{path} is not a signing key file (base64)") from None
    if len(raw) != 32:
        raise PackageError("keys", f"{path} does not hold a 32-byte Ed25519 private key")
    return raw


@dataclass(frozen=True, slots=True)
class Packed:
    archive: Path
    digest: str
    key_id: str


def pack(directory: Path, key_file: Path, out: Path | None = None) -> Packed:
    """Sign the package in ``directory`` and write it as a ``.lineup-provider`` archive
    (``<id>-<version>.lineup-provider`` in the working directory unless ``out`` says where).
    A package that fails the static check is refused: no hub would take it."""
    files = read_package_dir(directory)
    files.pop(SIGNATURE, None)
    manifest = read_manifest(files)
    static_check(files, manifest, __version__)
    private = read_private_key(key_file)
    signed = sign(files, private)
    target = out or Path(f"{manifest.id}-{manifest.version}{ARCHIVE_SUFFIX}")
    target.write_bytes(write_archive(signed))
    return Packed(target, tree_digest(signed), key_id_of(public_of(private)))


def new_package(provider_id: str, directory: Path) -> list[Path]:
    """Write the template package for ``provider_id`` into ``directory`` (which must not
    exist, or be empty); answer the files written."""
    files = template.files_for(provider_id)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise FileExistsError(f"{directory} exists and is not an empty directory")
    written = []
    for relative, content in files.items():
        target = directory.joinpath(*relative.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(target)
    return written
