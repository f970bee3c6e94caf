"""A provider's life in a workspace (seed 003 §5, the lifecycle table): discover → install →
enable / disable → upgrade → rollback → uninstall, each a change a workspace owner requests
and an owner approves, each step a fact and an audit entry.

Nothing of a package runs before its signature and digest are checked and its manifest is
read against its adapter's source (:func:`lineup.core.package.static_check`). The contract
kit then runs it — in a child process with a deadline, in a temporary directory, so a
package that hangs or crashes costs the hub nothing — and only after an owner approves the
change the hub shows (capabilities added, removed or changed; the kit's results) is it
registered. Upgrades keep the previous version (its package stays in the registry), so a
rollback is one step.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import lineup
from lineup.core import lifecycle as rules
from lineup.core import package as pkg
from lineup.hub import audit
from lineup.hub.actors import Person
from lineup.hub.governance.catalogue import Loaded
from lineup.hub.recorder import Writing
from lineup.protocol import facts
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, LineupError, NotFound
from lineup.protocol.ids import new_id
from lineup.store import providers as provider_store

if TYPE_CHECKING:
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.governance")

Action = Literal["install", "upgrade", "enable", "disable", "rollback", "uninstall"]
UPLOADED = "sha256:"
DISCOVERED = "file:"


# --- trust and discovery -----------------------------------------------------------------


def trusted_keys(hub: HubState) -> list[pkg.TrustedKey]:
    keys: list[pkg.TrustedKey] = []
    settings = hub.settings
    for path, development in (
        (settings.provider_trusted_keys, False),
        (settings.provider_dev_keys, True),
    ):
        if path is not None and path.exists():
            keys += pkg.parse_trusted_keys(path.read_text(), development=development)
    return keys


@dataclass(frozen=True, slots=True)
class Candidate:
    """A package checked as far as can be without running it."""

    files: dict[str, bytes]
    verified: pkg.Verified
    specs: list[CapabilitySpec]

    @property
    def manifest(self) -> pkg.Manifest:
        return self.verified.manifest


def check(files: dict[str, bytes], keys: Sequence[pkg.TrustedKey]) -> Candidate:
    """Signature, digest, manifest, platform and claims: ``PackageError`` on any."""
    verified = pkg.verify(files, keys)
    specs = pkg.static_check(files, verified.manifest, lineup.__version__)
    return Candidate(files, verified, specs)


@dataclass(frozen=True, slots=True)
class Available:
    ref: str
    manifest: pkg.Manifest | None
    candidate: Candidate | None
    refused: pkg.PackageError | None
    file: str


def discovery_dir(hub: HubState) -> Path:
    return hub.settings.provider_dir or hub.settings.home / "providers" / "available"


def _read(path: Path) -> dict[str, bytes]:
    from lineup.providers.packaging import loader

    if path.is_dir():
        return loader.read_package_dir(path)
    return pkg.read_archive(path.read_bytes())


def discover(hub: HubState) -> list[Available]:
    """The packages in the operator's directory: manifests read and signatures checked,
    nothing imported or run."""
    root = discovery_dir(hub)
    if not root.is_dir():
        return []
    keys = trusted_keys(hub)  # read once for every package listed
    out: list[Available] = []
    for path in sorted(root.iterdir()):
        if not (path.name.endswith(pkg.ARCHIVE_SUFFIX) or (path / pkg.MANIFEST).is_file()):
            continue
        read = functools.partial(_read, path)
        out.append(_available(keys, f"{DISCOVERED}{path.name}", path.name, read))
    return out


def _available(
    keys: Sequence[pkg.TrustedKey], ref: str, file: str, read: Callable[[], dict[str, bytes]]
) -> Available:
    manifest = None
    try:
        files = read()
        with contextlib.suppress(pkg.PackageError):
            manifest = pkg.read_manifest(files)
        return Available(ref, manifest, check(files, keys), None, file)
    except pkg.PackageError as exc:
        return Available(ref, manifest, None, exc, file)
    except OSError as exc:
        return Available(ref, None, None, pkg.PackageError("layout", f"cannot read: {exc}"), file)


async def upload(hub: HubState, person: Person, data: bytes) -> Available:
    """A package sent by an owner: checked, and kept in the registry by its digest."""
    require_owner(person)
    available = _available(trusted_keys(hub), "", "upload", lambda: pkg.read_archive(data))
    if available.candidate is None:
        return available
    await _keep(hub, available.candidate)
    return Available(
        available.candidate.verified.digest, available.manifest, available.candidate, None, ""
    )


async def _keep(hub: HubState, candidate: Candidate) -> None:
    verified = candidate.verified
    archive = pkg.write_archive(candidate.files)
    now = hub.clock()
    await hub.store.write(
        lambda tx: provider_store.put_package(
            tx.connection,
            digest=verified.digest,
            provider_id=verified.manifest.id,
            version=verified.manifest.version,
            manifest=verified.manifest.model_dump(mode="json", by_alias=True),
            archive=archive,
            signer=verified.key.key_id,
            development=verified.key.development,
            now_ms=now,
        )
    )


async def _candidate(hub: HubState, ref: str) -> Candidate:
    """The package a change names: one in the discovery directory, or one uploaded."""
    if ref.startswith(DISCOVERED):
        name = ref.removeprefix(DISCOVERED)
        path = discovery_dir(hub) / name
        if "/" in name or name.startswith(".") or not path.exists():
            raise NotFound(f"No package {name!r} in the hub's provider directory.")
        found = _available(trusted_keys(hub), ref, name, lambda: _read(path))
    elif ref.startswith(UPLOADED):
        archive = await hub.store.read(lambda r: provider_store.archive(r.connection, ref))
        if archive is None:
            raise NotFound(f"No uploaded package {ref}.")
        found = _available(trusted_keys(hub), ref, "upload", lambda: pkg.read_archive(archive))
    else:
        raise InvalidArgument("package is a ref from GET …/providers/available.")
    if found.refused is not None:
        raise Forbidden(
            f"The package was refused: {found.refused.message}",
            details={"reason": "package_refused", "rule": found.refused.rule},
        )
    assert found.candidate is not None
    await _keep(hub, found.candidate)
    return found.candidate


# --- the contract kit, in a child process ------------------------------------------------


async def run_contract(hub: HubState, candidate: Candidate) -> dict[str, Any]:
    """The contract kit's report on ``candidate``, run by ``lineup provider test --json`` in
    a child process; a kit that does not finish in time is a failed rule, not a hung hub."""
    from lineup.providers.packaging import loader

    work = Path(tempfile.mkdtemp(prefix="lineup-contract-"))
    try:
        path = loader.materialize(candidate.files, work, candidate.verified.digest)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "lineup",
            "provider",
            "test",
            str(path),
            "--json",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=work,
        )
        try:
            async with asyncio.timeout(hub.settings.contract_timeout):
                out, err = await process.communicate()
        except TimeoutError:
            process.kill()
            await process.wait()
            return _failed_run(
                f"the contract kit did not finish within {hub.settings.contract_timeout:g} s"
            )
        try:
            report = json.loads(out)
        except ValueError:
            tail = err.decode(errors="replace").strip().splitlines()[-3:]
            return _failed_run("the contract kit gave no report: " + " / ".join(tail))
        if not isinstance(report, dict) or "checks" not in report:
            return _failed_run("the contract kit's report is malformed")
        report["passed"] = bool(report.get("passed")) and process.returncode == 0
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _failed_run(detail: str) -> dict[str, Any]:
    return {
        "passed": False,
        "checks": [
            {
                "capability": None,
                "rule": "timeout_unknown",
                "name": "the contract kit runs to its end",
                "passed": False,
                "detail": detail,
            }
        ],
    }


# --- changes -----------------------------------------------------------------------------


def require_owner(person: Person) -> None:
    if person.role != "owner":
        raise Forbidden(
            "Only a workspace owner can change the workspace's providers.",
            details={"reason": "role"},
        )


def surface(
    before: Sequence[CapabilitySpec], after: Sequence[CapabilitySpec]
) -> facts.ProviderSurface:
    old = {s.id: s for s in before}
    new = {s.id: s for s in after}

    def shape(spec: CapabilitySpec) -> dict[str, Any]:
        wire = spec.wire()
        wire.pop("instances", None)
        wire.pop("description", None)
        return wire

    return facts.ProviderSurface(
        added=sorted(set(new) - set(old)),
        removed=sorted(set(old) - set(new)),
        changed=sorted(k for k in set(old) & set(new) if shape(old[k]) != shape(new[k])),
    )


async def request(
    hub: HubState,
    person: Person,
    action: Action,
    *,
    provider_id: str | None,
    package_ref: str | None,
    reason: str | None,
) -> provider_store.Change:
    """Record a change for approval; install and upgrade run the contract kit first."""
    require_owner(person)
    ws = person.workspace_id
    view = await hub.governance.view(ws)
    installs = view.installs
    candidate: Candidate | None = None
    contract: dict[str, Any] | None = None
    if action in ("install", "upgrade"):
        if not package_ref:
            raise InvalidArgument(f"An {action} names the package (a ref from …/available).")
        candidate = await _candidate(hub, package_ref)
        provider_id = candidate.manifest.id
    if not provider_id:
        raise InvalidArgument(f"A {action} names its providerId.")
    current = view.active.get(provider_id)
    standing = standing_of(
        installs.get(provider_id), hub.governance.catalogue.bundled.get(provider_id)
    )
    problem = rules.refusal(action, standing)
    if problem is not None:
        reason, why = problem
        error = NotFound if reason == "not_installed" else Conflict
        raise error(f"{provider_id}: {why}.", details={"reason": reason})
    to_version = to_digest = None
    change_surface = facts.ProviderSurface()
    if action == "install":
        assert candidate is not None
        change_surface = surface([], candidate.specs)
    else:
        assert current is not None
    if action == "upgrade":
        assert candidate is not None and current is not None
        if pkg.version_key(candidate.manifest.version) <= pkg.version_key(current.version):
            raise Conflict(
                f"{candidate.manifest.version} is not newer than the running {current.version}; "
                "a step back is a rollback.",
                details={"reason": "not_newer"},
            )
        change_surface = surface(current.specs(), candidate.specs)
    elif action == "rollback":
        assert standing.previous is not None and current is not None
        previous = await _version(hub, provider_id, standing.previous.digest)
        to_version, to_digest = previous.version, previous.digest
        change_surface = surface(current.specs(), previous.specs())
    elif action == "uninstall":
        assert current is not None
        change_surface = surface(current.specs(), [])
    if candidate is not None:
        to_version, to_digest = candidate.manifest.version, candidate.verified.digest
        contract = await run_contract(hub, candidate)
        await hub.store.write(
            lambda tx: provider_store.set_contract(tx.connection, to_digest or "", contract or {})
        )
    change_id = new_id("pch")
    pid = provider_id

    def job(w: Writing) -> provider_store.Change:
        pending = provider_store.changes(w.read.connection, ws, provider_id=pid, pending_only=True)
        if pending:
            raise Conflict(
                f"{pid} already has a change waiting for approval; decide that one first.",
                details={"reason": "pending_change", "changeId": pending[0].id},
            )
        w.append(
            ws,
            facts.ProviderChangeRequestedPayload(
                change_id=change_id,
                provider_id=pid,
                action=action,
                from_version=None if current is None else current.version,
                from_digest=None if current is None else current.digest,
                to_version=to_version,
                to_digest=to_digest,
                surface=change_surface,
                contract_passed=None if contract is None else bool(contract.get("passed")),
                reason=reason,
            ),
            actor=person.actor,
        )
        audit.record(
            w,
            "provider.change_requested",
            workspace_id=ws,
            actor=person.actor,
            subject=f"provider:{pid}",
            data={
                "changeId": change_id,
                "action": action,
                "toDigest": to_digest,
                "contractPassed": None if contract is None else bool(contract.get("passed")),
            },
        )
        made = provider_store.change(w.read.connection, ws, change_id)
        assert made is not None
        return made

    return await hub.recorder.run(job)


async def blockers(hub: HubState, change: provider_store.Change) -> list[str]:
    """Why the change cannot be approved now."""
    out: list[str] = []
    if change.action in ("install", "upgrade") and change.contract_passed is not True:
        out.append("The package did not pass the contract kit.")
    if change.action == "uninstall":
        flying = await hub.store.read(
            lambda r: provider_store.executions_in_flight(
                r.connection, change.workspace_id, change.provider_id
            )
        )
        if flying:
            out.append(
                f"{flying} execution{'s' if flying != 1 else ''} of {change.provider_id} "
                "in flight; disable it and let them end first."
            )
    return out


async def decide(
    hub: HubState, person: Person, change_id: str, approve: bool, reason: str | None
) -> provider_store.Change:
    require_owner(person)
    ws = person.workspace_id
    change = await hub.store.read(lambda r: provider_store.change(r.connection, ws, change_id))
    if change is None:
        raise NotFound(f"No provider change {change_id!r} in this workspace.")
    if change.status != "pending":
        raise Conflict(
            f"The change was already {change.status}.", details={"status": change.status}
        )
    outcome: Literal["applied", "rejected", "failed"] = "rejected"
    target: Loaded | None = None
    detail = reason
    if approve:
        stopped = await blockers(hub, change)
        if stopped:
            raise Conflict(" ".join(stopped), details={"reason": "blocked", "blockers": stopped})
        outcome = "applied"
        try:
            target = await _target(hub, change)
        except (LineupError, pkg.PackageError, ValueError, ImportError) as exc:
            log.warning("provider change %s failed to load its version: %s", change_id, exc)
            outcome, detail = "failed", f"The version could not be loaded on the hub: {exc}"
    view = await hub.governance.view(ws)
    standing = standing_of(
        view.installs.get(change.provider_id),
        hub.governance.catalogue.bundled.get(change.provider_id),
    )

    def job(w: Writing) -> provider_store.Change:
        again = provider_store.change(w.read.connection, ws, change_id)
        if again is None or again.status != "pending":
            raise Conflict("The change was decided meanwhile.", details={"reason": "decided"})
        w.append(
            ws,
            facts.ProviderChangeDecidedPayload(
                change_id=change_id, provider_id=change.provider_id, outcome=outcome, reason=detail
            ),
            actor=person.actor,
        )
        audit.record(
            w,
            f"provider.change_{outcome}",
            workspace_id=ws,
            actor=person.actor,
            subject=f"provider:{change.provider_id}",
            data={"changeId": change_id, "action": change.action, "reason": detail},
        )
        if outcome == "applied":
            state = _state_fact(change, standing, target)
            w.append(ws, state, actor=person.actor)
            audit.record(
                w,
                f"provider.{change.action}",
                workspace_id=ws,
                actor=person.actor,
                subject=f"provider:{change.provider_id}",
                data={
                    "changeId": change_id,
                    "state": state.state,
                    "digest": state.digest,
                    "version": state.version,
                },
            )
        done = provider_store.change(w.read.connection, ws, change_id)
        assert done is not None
        return done

    decided = await hub.recorder.run(job)
    if decided.status == "applied" and change.action == "uninstall":
        await _after_uninstall(hub, person, change)
    return decided


async def _target(hub: HubState, change: provider_store.Change) -> Loaded | None:
    if change.to_digest is None:
        return None
    return await _version(hub, change.provider_id, change.to_digest)


def standing_of(row: provider_store.Install | None, bundled: Loaded | None) -> rules.Standing:
    """Where a provider stands in a workspace: its install row, else bundled and enabled."""

    def source(digest: str) -> rules.Source:
        return "bundled" if bundled is not None and digest == bundled.digest else "package"

    if row is not None:
        previous = (
            rules.Version(row.previous_version, row.previous_digest, source(row.previous_digest))
            if row.previous_version is not None and row.previous_digest is not None
            else None
        )
        current = rules.Version(
            row.version, row.digest, "bundled" if row.source == "bundled" else "package"
        )
        state: rules.State = (
            "enabled"
            if row.state == "enabled"
            else "disabled"
            if row.state == "disabled"
            else "removed"
        )
        return rules.Standing(state, current, previous)
    if bundled is not None:
        return rules.Standing("enabled", _version_of(bundled))
    return rules.NOT_INSTALLED


def _version_of(loaded: Loaded) -> rules.Version:
    return rules.Version(loaded.version, loaded.digest, loaded.source)


async def _version(hub: HubState, provider_id: str, digest: str) -> Loaded:
    bundled = hub.governance.catalogue.bundled.get(provider_id)
    if bundled is not None and bundled.digest == digest:
        return bundled
    return await hub.governance.registry.load(digest)


def _state_fact(
    change: provider_store.Change, standing: rules.Standing, target: Loaded | None
) -> facts.ProviderStateChangedPayload:
    action = change.action
    assert action in ("install", "upgrade", "enable", "disable", "rollback", "uninstall")
    after = rules.after(
        action,  # type: ignore[arg-type]
        standing,
        None if target is None or action == "rollback" else _version_of(target),
    )
    assert after.current is not None
    return facts.ProviderStateChangedPayload(
        provider_id=change.provider_id,
        state=after.state,
        version=after.current.version,
        digest=after.current.digest,
        source=after.current.source,
        previous_version=None if after.previous is None else after.previous.version,
        previous_digest=None if after.previous is None else after.previous.digest,
        change_id=change.id,
    )


async def _after_uninstall(hub: HubState, person: Person, change: provider_store.Change) -> None:
    """Unbind the workspace's accounts on the system and delete its unpacked files where no
    workspace runs them any more; history and audit stay."""
    from lineup.hub.governance import bindings

    await bindings.unbind_workspace(hub, change.workspace_id, change.provider_id)
    in_use = await hub.store.read(lambda r: provider_store.digests_in_use(r.connection))
    root = hub.governance.registry.packages_root / change.provider_id
    for digest in filter(None, (change.from_digest,)):
        shipped = hub.governance.catalogue.loaded.get(digest)
        if digest in in_use or (shipped is not None and shipped.source == "bundled"):
            continue
        for path in root.glob(f"*-{digest.removeprefix('sha256:')[:12]}"):
            shutil.rmtree(path, ignore_errors=True)


# --- health ------------------------------------------------------------------------------


async def probe(hub: HubState, loaded: Loaded) -> provider_store.Probe:
    """Ask the provider how it is (bounded), and keep the answer. Bounded with
    ``asyncio.timeout``, not ``wait_for``: on Python 3.11 ``wait_for`` can swallow a
    cancellation that arrives as the call ends, and the monitor's pass must stop when the hub
    does."""
    now = hub.clock()
    try:
        async with asyncio.timeout(10.0):
            health = await loaded.provider.health()
        ok, detail = bool(health.ok), str(health.detail or "")
    except TimeoutError:
        ok, detail = False, "no answer within 10 s"
    except Exception as exc:
        ok, detail = False, f"health() raised {type(exc).__name__}"
    await hub.store.write(
        lambda tx: provider_store.record_probe(
            tx.connection, new_id("phl"), loaded.id, loaded.digest, ok, detail, now
        )
    )
    return provider_store.Probe(loaded.id, loaded.digest, ok, detail, now)


async def probe_all(hub: HubState) -> None:
    """The scheduled pass: every version this node has loaded."""
    for loaded in list(hub.governance.catalogue.loaded.values()):
        try:
            await probe(hub, loaded)
        except LineupError:
            log.exception("could not record the health of %s", loaded.id)
