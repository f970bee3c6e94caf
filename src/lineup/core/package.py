"""What a provider package is, and the checks made before any of its code runs (seed 003 §5).

A package is a directory, or a gzipped tar of one (``.lineup-provider``), holding:

* ``provider.json`` — the :class:`Manifest`: id, version, vendor, capabilities (as the
  catalogue describes them), views, the auth kind, the platform versions it runs on, and the
  adapter's entry point;
* the adapter: Python modules whose handlers are declared with
  :func:`lineup.providers.adapter.capability` (and ``preview``);
* optionally ``ui/`` (view files) and ``tests/`` (its contract fixture);
* ``signature.json`` — an Ed25519 signature over the package's :func:`tree_digest`.

Everything here works on bytes the caller read: nothing is imported or executed. The digest
is over the file tree, not over an archive's bytes, so a directory and its archive have the
same digest and repacking cannot change it. :func:`static_check` reads the adapter's source
with :mod:`ast` (parsing is not running) to refuse a manifest that claims a capability its
adapter has no handler for — before the hub imports a line of it.
"""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import io
import json
import re
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from lineup.protocol.capabilities import CapabilitySpec

MANIFEST = "provider.json"
SIGNATURE = "signature.json"
ARCHIVE_SUFFIX = ".lineup-provider"
MAX_FILES = 500
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_PACKAGE_BYTES = 20 * 1024 * 1024

_VERSION = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:[-+][0-9A-Za-z.\-]+)?$")
_PROVIDER_ID = r"^[a-z][a-z0-9_]{0,63}$"
_ENTRY = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$"
_PLATFORM = re.compile(r"^\s*(>=|<=|==|>|<)\s*(\d+(?:\.\d+){0,2})\s*$")


class PackageError(Exception):
    """A package refused: ``rule`` names the check that failed, for a person and a test."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class OAuthEndpoints(_Model):
    """Where the system's authorization server is; the client id and secret are the
    operator's (``lineup credentials``), never in a package."""

    authorize_url: Annotated[str, Field(pattern=r"^https?://", max_length=2000)]
    token_url: Annotated[str, Field(pattern=r"^https?://", max_length=2000)]
    scopes: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list)


class Auth(_Model):
    """How a person binds their account on the system (ADR-0012): ``oauth`` (an
    authorization-code flow with PKCE), ``password-exchange`` (a username and password
    exchanged once for a token), ``apikey`` (a key the operator configures per instance), or
    ``none``."""

    kind: Literal["oauth", "password-exchange", "apikey", "none"]
    oauth: OAuthEndpoints | None = None

    @property
    def per_person(self) -> bool:
        """Each person binds their own account (``oauth``, ``password-exchange``); an
        ``apikey`` is the operator's, shared by everyone."""
        return self.kind in ("oauth", "password-exchange")


class View(_Model):
    """A view the package offers the workspace (seed 003 §4): a file under ``ui/``."""

    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_.\-]{0,63}$")]
    title: Annotated[str, Field(min_length=1, max_length=200)]
    file: Annotated[str, Field(pattern=r"^ui/[A-Za-z0-9_.\-/]+$", max_length=300)]
    capability: str | None = None


class Adapter(_Model):
    entry: Annotated[str, Field(pattern=_ENTRY, max_length=200)]
    """``module:factory`` inside the package; ``factory(context)`` makes the provider."""
    contract: Annotated[str | None, Field(pattern=_ENTRY, max_length=200)] = None
    """``module:fixture`` inside the package (usually under ``tests/``) that sets up a test
    instance for the contract kit."""


class Manifest(_Model):
    """``provider.json``."""

    id: Annotated[str, Field(pattern=_PROVIDER_ID)]
    version: Annotated[str, Field(max_length=64)]
    vendor: Annotated[str, Field(min_length=1, max_length=200)]
    name: Annotated[str, Field(min_length=1, max_length=200)]
    description: Annotated[str, Field(max_length=2000)] = ""
    platform: Annotated[str, Field(min_length=1, max_length=100)]
    """The LineUp versions it runs on: comma-separated bounds, e.g. ``>=0.1, <1``."""
    auth: Auth
    adapter: Adapter
    capabilities: list[dict[str, Any]]
    views: list[View] = Field(default_factory=list)

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not _VERSION.match(value):
            raise ValueError("version is MAJOR.MINOR.PATCH (semantic versioning)")
        return value

    @field_validator("platform")
    @classmethod
    def _bounds(cls, value: str) -> str:
        for part in value.split(","):
            if not _PLATFORM.match(part):
                raise ValueError(f"platform bound {part.strip()!r} is not like '>=0.1'")
        return value

    def specs(self) -> list[CapabilitySpec]:
        """The capabilities as the catalogue holds them (validated: ``PackageError``)."""
        out: list[CapabilitySpec] = []
        for raw in self.capabilities:
            try:
                spec = CapabilitySpec.model_validate({"provider": self.id, **raw})
            except ValidationError as exc:
                raise PackageError("manifest", f"capability {raw.get('id')!r}: {exc}") from None
            if spec.provider != self.id or not spec.id.startswith(self.id + "."):
                raise PackageError("manifest", f"{spec.id} is not under provider {self.id}")
            out.append(spec)
        ids = [s.id for s in out]
        if len(set(ids)) != len(ids):
            raise PackageError("manifest", "a capability is listed twice")
        if not out:
            raise PackageError("manifest", "the manifest lists no capabilities")
        return out

    def runs_on(self, platform_version: str) -> bool:
        have = _numbers(platform_version)
        for part in self.platform.split(","):
            match = _PLATFORM.match(part)
            assert match is not None  # checked by the validator
            op, bound = match.group(1), _numbers(match.group(2))
            if not {
                ">=": have >= bound,
                "<=": have <= bound,
                "==": have == bound,
                ">": have > bound,
                "<": have < bound,
            }[op]:
                return False
        return True


def version_key(version: str) -> tuple[int, int, int]:
    """A version's place in the order (pre-release tags are not ordered)."""
    return _numbers(version)


def _numbers(version: str) -> tuple[int, int, int]:
    core = re.split(r"[-+]", version, maxsplit=1)[0]
    parts = [int(p) for p in core.split(".") if p.isdigit()][:3]
    while len(parts) < 3:
        parts.append(0)
    return parts[0], parts[1], parts[2]


class Signature(_Model):
    algorithm: Literal["ed25519"] = "ed25519"
    key_id: Annotated[str, Field(min_length=1, max_length=100)]
    digest: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
    signature: Annotated[str, Field(max_length=200)]


# -- the file tree ------------------------------------------------------------------------


Files = Mapping[str, bytes]
"""A package's files by POSIX path relative to its root."""


def check_path(path: str) -> str:
    """A path inside a package: relative, no ``..``, no hidden tricks."""
    pure = PurePosixPath(path)
    if (
        not path
        or pure.is_absolute()
        or any(part in ("", ".", "..") for part in path.split("/"))
        or "\\" in path
        or "\x00" in path
        or len(path) > 300
    ):
        raise PackageError("layout", f"{path!r} is not a plain relative path inside the package")
    return path


def tree_digest(files: Files) -> str:
    """``sha256:`` over the sorted list of ``path NUL sha256(content) LF``, signature excluded:
    the same for a directory and any archive of it."""
    listing = hashlib.sha256()
    for path in sorted(files):
        if path == SIGNATURE:
            continue
        listing.update(check_path(path).encode() + b"\x00")
        listing.update(hashlib.sha256(files[path]).hexdigest().encode() + b"\n")
    return "sha256:" + listing.hexdigest()


def read_archive(data: bytes) -> dict[str, bytes]:
    """The files of a ``.lineup-provider`` archive, refusing links, devices and oversize."""
    if len(data) > MAX_PACKAGE_BYTES:
        raise PackageError("layout", "the package is larger than 20 MiB")
    files: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if member.isdir():
                    continue
                if not member.isfile():
                    raise PackageError("layout", f"{name!r} is not a regular file")
                check_path(name)
                if member.size > MAX_FILE_BYTES:
                    raise PackageError("layout", f"{name} is larger than 5 MiB")
                total += member.size
                if total > MAX_PACKAGE_BYTES or len(files) >= MAX_FILES:
                    raise PackageError("layout", "the package holds too much")
                handle = tar.extractfile(member)
                assert handle is not None
                files[name] = handle.read()
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        if isinstance(exc, PackageError):
            raise
        raise PackageError("layout", f"not a readable package archive: {exc}") from None
    return files


def write_archive(files: Files) -> bytes:
    """A reproducible archive of ``files`` (sorted, no owners, no times)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            info = tarfile.TarInfo(check_path(path))
            info.size = len(files[path])
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(files[path]))
    return out.getvalue()


def read_manifest(files: Files) -> Manifest:
    raw = files.get(MANIFEST)
    if raw is None:
        raise PackageError("manifest", "the package has no provider.json")
    try:
        return Manifest.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise PackageError("manifest", f"provider.json is not a valid manifest: {exc}") from None


# -- signatures ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrustedKey:
    key_id: str
    public_key: bytes
    """The raw 32-byte Ed25519 public key."""
    development: bool = False
    """A development key the operator allowed: its packages install, marked as such."""


def parse_trusted_keys(text: str, development: bool = False) -> list[TrustedKey]:
    """The keys of a trusted-keys file: one per line, ``ed25519 <base64 raw public key>
    [comment]``; blank lines and lines starting with ``#`` are skipped. ``development`` marks
    every key of the file as a development key."""
    keys: list[TrustedKey] = []
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] != "ed25519" or len(words) < 2:
            raise PackageError(
                "keys", f"line {number}: a trusted key is 'ed25519 <base64 public key> [comment]'"
            )
        try:
            public_key = base64.b64decode(words[1], validate=True)
        except (binascii.Error, ValueError):
            raise PackageError("keys", f"line {number}: the key is not base64") from None
        if len(public_key) != 32:
            raise PackageError("keys", f"line {number}: an Ed25519 public key is 32 bytes")
        keys.append(TrustedKey(key_id_of(public_key), public_key, development))
    return keys


def key_id_of(public_key: bytes) -> str:
    return "ed25519:" + hashlib.sha256(public_key).hexdigest()[:16]


def new_signing_key() -> tuple[bytes, bytes]:
    """A fresh (private, public) pair as raw bytes."""
    private = Ed25519PrivateKey.generate()
    return private.private_bytes_raw(), private.public_key().public_bytes_raw()


def public_of(private_key: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(private_key).public_key().public_bytes_raw()


def sign(files: Files, private_key: bytes) -> dict[str, bytes]:
    """``files`` with a ``signature.json`` over their digest."""
    private = Ed25519PrivateKey.from_private_bytes(private_key)
    digest = tree_digest(files)
    signature = Signature(
        key_id=key_id_of(private.public_key().public_bytes_raw()),
        digest=digest,
        signature=base64.b64encode(private.sign(digest.encode())).decode(),
    )
    signed = {p: b for p, b in files.items() if p != SIGNATURE}
    signed[SIGNATURE] = json.dumps(signature.model_dump(by_alias=True), indent=2).encode() + b"\n"
    return signed


def read_signature(files: Files) -> Signature | None:
    """The package's ``signature.json``, or None when it has none."""
    raw = files.get(SIGNATURE)
    if raw is None:
        return None
    try:
        return Signature.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise PackageError("signature", f"signature.json is malformed: {exc}") from None


@dataclass(frozen=True, slots=True)
class Verified:
    """A package whose files match their signature by a trusted key."""

    manifest: Manifest
    digest: str
    key: TrustedKey


def verify(files: Files, trusted: Iterable[TrustedKey]) -> Verified:
    """Digest, then signature, then manifest: each refusal a :class:`PackageError` naming its
    rule (``layout``, ``unsigned``, ``digest``, ``signer``, ``signature``, ``manifest``)."""
    for path in files:
        check_path(path)
    signature = read_signature(files)
    if signature is None:
        raise PackageError("unsigned", "the package is not signed (no signature.json)")
    try:
        signed_bytes = base64.b64decode(signature.signature, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise PackageError("signature", f"signature.json is malformed: {exc}") from None
    digest = tree_digest(files)
    if digest != signature.digest:
        raise PackageError(
            "digest", "the package's files do not match the digest it was signed with"
        )
    keys = {k.key_id: k for k in trusted}
    key = keys.get(signature.key_id)
    if key is None:
        raise PackageError(
            "signer", f"the package is signed by {signature.key_id}, which this hub does not trust"
        )
    try:
        Ed25519PublicKey.from_public_bytes(key.public_key).verify(signed_bytes, digest.encode())
    except (InvalidSignature, ValueError):
        raise PackageError("signature", "the signature does not verify with its key") from None
    return Verified(read_manifest(files), digest, key)


# -- what the adapter's source declares ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Declared:
    """The handlers an adapter's source declares, found by reading it (never running it)."""

    capabilities: frozenset[str]
    previews: frozenset[str]


def declared_handlers(files: Files) -> Declared:
    """Capability ids named by ``@capability("…")`` and ``@preview("…")`` decorators (plain or
    as an attribute, e.g. ``@adapter.capability``) in the package's Python files outside
    ``tests/``."""
    handled: set[str] = set()
    previews: set[str] = set()
    for path, source in files.items():
        if not path.endswith(".py") or path.startswith("tests/"):
            continue
        try:
            tree = ast.parse(source, filename=path)
        except (SyntaxError, ValueError) as exc:
            raise PackageError("adapter", f"{path} is not valid Python: {exc}") from None
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for decorator in node.decorator_list:
                name, capability_id = _decorator(decorator)
                if capability_id is None:
                    continue
                if name == "capability":
                    handled.add(capability_id)
                elif name == "preview":
                    previews.add(capability_id)
    return Declared(frozenset(handled), frozenset(previews))


def _decorator(node: ast.expr) -> tuple[str | None, str | None]:
    if not isinstance(node, ast.Call) or not node.args:
        return None, None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return name, first.value
    return name, None


def static_check(files: Files, manifest: Manifest, platform_version: str) -> list[CapabilitySpec]:
    """What can be known without running the package: its manifest is well formed, it runs on
    this platform, its entry modules exist, and its adapter declares a handler for every
    capability (and a preview for every capability that promises one) — and no more."""
    specs = manifest.specs()
    if not manifest.runs_on(platform_version):
        raise PackageError(
            "platform",
            f"{manifest.id} {manifest.version} runs on LineUp {manifest.platform}, "
            f"not {platform_version}",
        )
    for entry in filter(None, (manifest.adapter.entry, manifest.adapter.contract)):
        module = entry.partition(":")[0].replace(".", "/")
        if f"{module}.py" not in files and f"{module}/__init__.py" not in files:
            raise PackageError("adapter", f"the entry point {entry} names no file in the package")
    for view in manifest.views:
        if view.file not in files:
            raise PackageError("manifest", f"view {view.id} names {view.file}, not in the package")
    if manifest.auth.kind == "oauth" and manifest.auth.oauth is None:
        raise PackageError("manifest", "auth kind oauth needs its authorizeUrl and tokenUrl")
    declared = declared_handlers(files)
    claimed = {s.id for s in specs}
    missing = sorted(claimed - declared.capabilities)
    if missing:
        raise PackageError(
            "claims",
            "the manifest claims capabilities its adapter has no handler for: "
            + ", ".join(missing),
        )
    extra = sorted(declared.capabilities - claimed)
    if extra:
        raise PackageError(
            "claims",
            "the adapter handles capabilities its manifest does not list: " + ", ".join(extra),
        )
    no_preview = sorted(s.id for s in specs if s.preview and s.id not in declared.previews)
    if no_preview:
        raise PackageError(
            "claims",
            "the manifest promises a preview the adapter has none for: " + ", ".join(no_preview),
        )
    return specs
