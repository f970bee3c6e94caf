"""A provider package on disk, and its code imported — only after it was checked.

The order is the supply-chain rule of seed 003 §5: the hub reads a package's bytes
(:func:`read_package_dir`, or :func:`lineup.core.package.read_archive`), verifies its
signature and digest and runs :func:`lineup.core.package.static_check` on those bytes, and
only then writes them where they will run (:func:`materialize`) and imports them
(:func:`load_provider`, :func:`load_fixture`). Nothing here verifies: a caller that imports
a package it has not verified runs code nobody vouched for.

Each package is imported under a name of its own, ``lineup_pkg_<id>_<digest12>``, so two
versions of one provider (an upgrade installed beside the version it replaces) never share a
module, and relative imports inside a package resolve to its own files.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from lineup.core.contract import ContractFixture
from lineup.core.package import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_PACKAGE_BYTES,
    Manifest,
    PackageError,
    check_path,
    read_manifest,
    tree_digest,
)
from lineup.core.provider import Provider
from lineup.providers.adapter import AdapterContext

Fixture = Callable[[Path], Awaitable[ContractFixture]]

_SKIPPED_DIRS = frozenset({"__pycache__"})
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


def read_package_dir(path: Path) -> dict[str, bytes]:
    """The files of a package directory by relative POSIX path: regular files only (compiled
    bytecode and ``__pycache__`` left out, as the interpreter writes them there), refusing
    symbolic links and anything that is not a file, and packages larger than an archive may
    be."""
    root = Path(path)
    if root.is_symlink() or not root.is_dir():
        raise PackageError("layout", f"{root} is not a package directory")
    files: dict[str, bytes] = {}
    total = 0
    for directory, subdirs, names in os.walk(root, followlinks=False):
        here = Path(directory)
        for name in list(subdirs):
            if (here / name).is_symlink():
                raise PackageError(
                    "layout", f"{(here / name).relative_to(root)} is a symbolic link"
                )
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRS)
        for name in sorted(names):
            full = here / name
            relative = full.relative_to(root).as_posix()
            if full.is_symlink():
                raise PackageError("layout", f"{relative} is a symbolic link")
            if name.endswith(_SKIPPED_SUFFIXES):
                continue
            if not full.is_file():
                raise PackageError("layout", f"{relative} is not a regular file")
            check_path(relative)
            size = full.stat().st_size
            if size > MAX_FILE_BYTES:
                raise PackageError("layout", f"{relative} is larger than 5 MiB")
            total += size
            if total > MAX_PACKAGE_BYTES or len(files) >= MAX_FILES:
                raise PackageError("layout", "the package holds too much")
            files[relative] = full.read_bytes()
    return files


def package_dir(root: Path, package_id: str, version: str, digest: str) -> Path:
    """Where :func:`materialize` puts a package: ``root/<id>/<version>-<digest12>``."""
    return Path(root) / package_id / f"{version}-{_short(digest)}"


def materialize(files: Mapping[str, bytes], root: Path, digest: str) -> Path:
    """Write a verified package's ``files`` under ``root/<id>/<version>-<digest12>/`` and
    answer that directory. Atomic: the files go to a temporary directory beside it, renamed
    into place once complete; a directory already there with the same digest is reused, one
    with other contents replaced. ``digest`` must be the files' :func:`tree_digest`."""
    if tree_digest(files) != digest:
        raise PackageError("digest", "the files do not match the digest they were verified with")
    manifest = read_manifest(files)
    target = package_dir(root, manifest.id, manifest.version, digest)
    if target.is_dir() and _holds(target, digest):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for relative, content in files.items():
            destination = staging.joinpath(*check_path(relative).split("/"))
            if not destination.resolve().is_relative_to(staging.resolve()):
                raise PackageError("layout", f"{relative!r} leads outside the package")
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(content)
            destination.chmod(0o644)
        staging.chmod(0o755)
        _move_into_place(staging, target, digest)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _holds(directory: Path, digest: str) -> bool:
    try:
        return tree_digest(read_package_dir(directory)) == digest
    except PackageError:
        return False


def _move_into_place(staging: Path, target: Path, digest: str) -> None:
    try:
        staging.rename(target)
        return
    except OSError:
        if target.is_dir() and _holds(target, digest):
            return  # another process put the same package there first
    stale = target.with_name(f".{target.name}-stale-{os.getpid()}")
    target.rename(stale)
    staging.rename(target)
    shutil.rmtree(stale, ignore_errors=True)


def module_name(manifest: Manifest, path: Path) -> str:
    """The import name of the package at ``path``: unique per provider and directory (whose
    name carries the digest)."""
    where = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:12]
    return f"lineup_pkg_{manifest.id}_{where}"


def load_provider(path: Path, manifest: Manifest, context: AdapterContext) -> Provider:
    """Import the package's entry module, make its provider with ``factory(context)`` and
    check that it is the provider the manifest declares (``PackageError`` rule ``load`` when
    it cannot be made, ``claims`` when it describes other capabilities)."""
    factory = _entry(path, manifest, manifest.adapter.entry)
    try:
        provider = factory(context)
    except Exception as exc:
        raise PackageError(
            "load", f"{manifest.adapter.entry} failed: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(provider, Provider):
        raise PackageError("load", f"{manifest.adapter.entry} did not make a provider")
    try:
        provider_id = str(provider.id)
        described = [spec.id for spec in provider.describe()]
    except Exception as exc:
        raise PackageError(
            "load", f"the provider does not describe itself: {type(exc).__name__}: {exc}"
        ) from None
    if provider_id != manifest.id:
        raise PackageError("claims", f"the provider is {provider_id!r}, not {manifest.id!r}")
    declared = [spec.id for spec in manifest.specs()]
    if sorted(described) != sorted(declared):
        raise PackageError(
            "claims",
            f"the provider describes {sorted(described)}, the manifest declares {sorted(declared)}",
        )
    return provider


def load_fixture(path: Path, manifest: Manifest) -> Fixture:
    """The package's contract fixture (``adapter.contract``): an async function of a work
    directory that sets up a throwaway instance and answers a :class:`ContractFixture`."""
    if manifest.adapter.contract is None:
        raise PackageError(
            "contract", f"{manifest.id} names no contract fixture (adapter.contract)"
        )
    entry = manifest.adapter.contract
    function = _entry(path, manifest, entry)

    async def fixture(workdir: Path) -> ContractFixture:
        await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
        try:
            made = await function(workdir)
        except Exception as exc:
            raise PackageError("contract", f"{entry} failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(made, ContractFixture):
            raise PackageError("contract", f"{entry} did not answer a ContractFixture")
        return made

    return fixture


def forget(manifest: Manifest, path: Path) -> None:
    """Drop the package's modules from the interpreter's cache (after a contract run in a
    temporary directory, so nothing refers to files that are gone)."""
    name = module_name(manifest, path)
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]


def _entry(path: Path, manifest: Manifest, entry: str) -> Callable[..., Any]:
    module_path, _, attribute = entry.partition(":")
    package = _package(path, manifest)
    try:
        module = importlib.import_module(f"{package.__name__}.{module_path}")
    except Exception as exc:
        raise PackageError(
            "load", f"importing {module_path} failed: {type(exc).__name__}: {exc}"
        ) from None
    found = getattr(module, attribute, None)
    if not callable(found):
        raise PackageError("load", f"{entry}: {module_path} has no function {attribute}")
    return cast(Callable[..., Any], found)


def _package(path: Path, manifest: Manifest) -> ModuleType:
    """The package root as a module of its own name, importing its ``__init__.py`` if it
    has one, so its modules import each other relatively."""
    name = module_name(manifest, path)
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    root = Path(path).resolve()
    init = root / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(root)]
        )
    else:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(root)]
    if spec is None:
        raise PackageError("load", f"{root} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise PackageError(
            "load", f"importing the package failed: {type(exc).__name__}: {exc}"
        ) from None
    return module


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]
