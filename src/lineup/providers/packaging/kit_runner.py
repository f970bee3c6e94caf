"""``lineup provider test``: a package checked the way the hub checks one before installing
it, then its contract kit run on a throwaway instance.

The steps, in this order, each able to refuse the package before the next: read its files
(a directory or a ``.lineup-provider`` archive); its signature (verified against trusted keys
when given; without them an unsigned package is reported, not refused — a developer tests
their own package before signing it — but a signed one whose files no longer match the digest
it was signed with is refused); the static check (manifest, platform, entry points, handlers
for every claimed capability) — all on bytes, before anything of the package is imported;
then, in a temporary directory, its entry point and its contract fixture imported and the kit
run (:func:`lineup.core.contract.check`).

The hub's install step runs ``python -m lineup provider test --json`` in a subprocess with a
wall timeout, so a package that blocks its process cannot block the hub; :meth:`KitResult.wire`
is what that prints.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from lineup import __version__
from lineup.core.contract import DEFAULT_TIMEOUT_S, RULES, ContractReport, check_fixture
from lineup.core.package import (
    Manifest,
    PackageError,
    TrustedKey,
    read_archive,
    read_manifest,
    read_signature,
    static_check,
    tree_digest,
    verify,
)
from lineup.providers.adapter import AdapterContext
from lineup.providers.packaging import loader

Stage = Literal["read", "signature", "static", "load", "fixture", "run"]

FIXTURE_TIMEOUT_S = 60.0
"""How long a package's contract fixture may take to set up its test instance."""

_STAGE_WORDS = {
    "read": "reading the package",
    "signature": "the signature",
    "static": "the static check",
    "load": "importing the adapter",
    "fixture": "the contract fixture",
    "run": "the contract run",
}


@dataclass(frozen=True, slots=True)
class SignatureState:
    state: Literal["verified", "unsigned", "unchecked"]
    """``verified`` by a trusted key; ``unsigned``; or signed, its digest matching, but not
    checked against trusted keys (none were given)."""
    digest: str
    key_id: str | None = None
    development: bool = False

    def wire(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "digest": self.digest,
            "keyId": self.key_id,
            "development": self.development,
        }


@dataclass(frozen=True, slots=True)
class Refusal:
    stage: Stage
    rule: str
    """The :class:`~lineup.core.package.PackageError` rule (``digest``, ``signer``,
    ``claims``…)."""
    message: str

    @property
    def before_running(self) -> bool:
        return self.stage != "run"


@dataclass(frozen=True, slots=True)
class KitResult:
    path: str
    provider: str | None = None
    version: str | None = None
    signature: SignatureState | None = None
    capabilities: tuple[str, ...] = ()
    """What the static check found declared (empty when it did not pass)."""
    report: ContractReport | None = None
    refusal: Refusal | None = None

    @property
    def passed(self) -> bool:
        return self.refusal is None and self.report is not None and self.report.passed

    @property
    def exit_code(self) -> int:
        """0 when everything passed; 2 when refused before the kit ran; 1 otherwise."""
        if self.refusal is not None and self.refusal.before_running:
            return 2
        return 0 if self.passed else 1

    def wire(self) -> dict[str, Any]:
        report = self.report.wire() if self.report is not None else {"checks": []}
        static_refused = self.refusal is not None and self.refusal.stage in (
            "read",
            "signature",
            "static",
        )
        return {
            **report,
            "passed": self.passed,
            "provider": self.provider,
            "version": self.version,
            "signature": self.signature.wire() if self.signature else None,
            "static": {
                "passed": bool(self.capabilities) and not static_refused,
                "capabilities": list(self.capabilities),
                "rule": self.refusal.rule if self.refusal and static_refused else None,
                "message": self.refusal.message if self.refusal and static_refused else "",
            },
            "refused": (
                {
                    "stage": self.refusal.stage,
                    "rule": self.refusal.rule,
                    "message": self.refusal.message,
                }
                if self.refusal
                else None
            ),
        }


def read_package(path: Path) -> dict[str, bytes]:
    """The files of a package directory or archive."""
    if path.is_dir():
        return loader.read_package_dir(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PackageError("layout", f"{path} cannot be read: {exc.strerror}") from None
    return read_archive(data)


def signature_state(
    files: dict[str, bytes], trusted: Sequence[TrustedKey] | None
) -> SignatureState:
    """Verify against ``trusted`` when given (every failure refuses); without it, say what
    the package carries, refusing only a signature over other files."""
    if trusted is not None:
        verified = verify(files, trusted)
        return SignatureState(
            "verified", verified.digest, verified.key.key_id, verified.key.development
        )
    digest = tree_digest(files)
    signature = read_signature(files)
    if signature is None:
        return SignatureState("unsigned", digest)
    if signature.digest != digest:
        raise PackageError(
            "digest", "the package's files do not match the digest it was signed with"
        )
    return SignatureState("unchecked", digest, signature.key_id)


async def run(
    path: Path,
    *,
    trusted: Sequence[TrustedKey] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    platform_version: str = __version__,
) -> KitResult:
    """Check the package at ``path`` and run its contract kit (see the module's docstring)."""
    result = KitResult(path=str(path))
    try:
        files = read_package(path)
    except PackageError as exc:
        return _refused(result, "read", exc)
    try:
        signature = signature_state(files, trusted)
    except PackageError as exc:
        return _refused(result, "signature", exc)
    result = _with(result, signature=signature)
    try:
        manifest = read_manifest(files)
        result = _with(result, provider=manifest.id, version=manifest.version)
        specs = static_check(files, manifest, platform_version)
    except PackageError as exc:
        return _refused(result, "static", exc)
    result = _with(result, capabilities=tuple(s.id for s in specs))
    with tempfile.TemporaryDirectory(prefix="lineup-provider-test-") as scratch:
        root = Path(scratch)
        where = loader.materialize(files, root / "packages", signature.digest)
        try:
            return await _load_and_check(result, where, manifest, root, timeout_s)
        finally:
            loader.forget(manifest, where)


async def _load_and_check(
    result: KitResult, where: Path, manifest: Manifest, root: Path, timeout_s: float
) -> KitResult:
    context = AdapterContext(manifest=manifest, data_dir=root / "data")
    try:
        loader.load_provider(where, manifest, context)
        fixture = loader.load_fixture(where, manifest)
    except PackageError as exc:
        return _refused(result, "load", exc)
    try:
        made = await asyncio.wait_for(fixture(root / "work"), FIXTURE_TIMEOUT_S)
    except PackageError as exc:
        return _refused(result, "fixture", exc)
    except TimeoutError:
        return _refused(
            result,
            "fixture",
            PackageError("contract", f"the fixture did not finish in {FIXTURE_TIMEOUT_S:g}s"),
        )
    try:
        report = await check_fixture(made, manifest=manifest, timeout_s=timeout_s)
    except Exception as exc:  # a sample function of the fixture that raised
        return _refused(result, "run", PackageError("contract", f"{type(exc).__name__}: {exc}"))
    return _with(result, report=report)


def _with(result: KitResult, **changes: Any) -> KitResult:
    return replace(result, **changes)


def _refused(result: KitResult, stage: Stage, exc: PackageError) -> KitResult:
    return _with(result, refusal=Refusal(stage, exc.rule, exc.message))


# -- for a person -------------------------------------------------------------------------


def render(result: KitResult) -> str:
    """The result as a person reads it: the signature, the static check, then per
    capability each rule that passed or failed, and why."""
    lines: list[str] = []
    title = f"{result.provider} {result.version}" if result.provider else result.path
    lines.append(title)
    if result.signature is not None:
        lines.append(f"  signature: {_signature_words(result.signature)}")
    refusal = result.refusal
    if refusal is not None and refusal.before_running:
        lines.append(
            f"REFUSED at {_STAGE_WORDS[refusal.stage]} (rule {refusal.rule}): {refusal.message}"
        )
        lines.append(
            "nothing of the package ran"
            if refusal.stage in ("read", "signature", "static")
            else "the kit did not run"
        )
        return "\n".join(lines)
    lines.append(f"  static check: passed ({len(result.capabilities)} capabilities)")
    report = result.report
    if refusal is not None:
        lines.append(
            f"FAILED at {_STAGE_WORDS[refusal.stage]} (rule {refusal.rule}): {refusal.message}"
        )
    if report is None:
        return "\n".join(lines)
    failed = len(report.failures)
    lines.append(
        f"  contract: {'passed' if report.passed else 'FAILED'}"
        f" ({len(report.checks) - failed}/{len(report.checks)} checks)"
    )
    subjects = [c.capability for c in report.checks]
    ordered = [s for i, s in enumerate(subjects) if s is not None and s not in subjects[:i]]
    for subject in [*ordered, None]:
        checks = [c for c in report.checks if c.capability == subject]
        if not checks:
            continue
        lines.append(f"  {subject or '(the provider as a whole)'}")
        for rule in RULES:
            of_rule = [c for c in checks if c.rule == rule]
            if not of_rule:
                continue
            bad = [c for c in of_rule if not c.passed]
            if not bad:
                notes = sorted({c.detail for c in of_rule if c.detail})
                lines.append(f"    ok      {rule}" + (f" ({'; '.join(notes)})" if notes else ""))
                continue
            lines.append(f"    FAILED  {rule}")
            for c in bad:
                lines.append(f"              {c.name}: {c.detail}")
    return "\n".join(lines)


def _signature_words(signature: SignatureState) -> str:
    if signature.state == "verified":
        kind = "a development key" if signature.development else "a trusted key"
        return f"verified, signed by {signature.key_id} ({kind})"
    if signature.state == "unchecked":
        return f"signed by {signature.key_id}, not checked (no --trust keys file given)"
    return "unsigned (fine for your own test; a hub installs signed packages only)"
