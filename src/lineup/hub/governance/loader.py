"""Unpacking a verified package on this node and importing its adapter."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from lineup.core import package as pkg
from lineup.core.provider import Provider
from lineup.providers.adapter import AdapterContext


def read_package_dir(path: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for item in sorted(path.rglob("*")):
        rel = item.relative_to(path).as_posix()
        if "__pycache__" in rel.split("/") or rel.endswith(".pyc"):
            continue
        if item.is_symlink():
            raise pkg.PackageError("layout", f"{rel} is a symbolic link")
        if item.is_file():
            files[pkg.check_path(rel)] = item.read_bytes()
    return files


def materialize(files: Mapping[str, bytes], root: Path, digest: str) -> Path:
    manifest = pkg.read_manifest(files)
    target = root / manifest.id / f"{manifest.version}-{digest.removeprefix('sha256:')[:12]}"
    if target.is_dir() and pkg.tree_digest(read_package_dir(target)) == digest:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unpack-"))
    try:
        for path, data in files.items():
            out = temp / pkg.check_path(path)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        if target.exists():
            shutil.rmtree(target)
        os.replace(temp, target)
    finally:
        if temp.exists():
            shutil.rmtree(temp, ignore_errors=True)
    return target


def _module_name(manifest: pkg.Manifest, path: Path) -> str:
    return f"lineup_pkg_{manifest.id}_{path.name.replace('.', '_').replace('-', '_')}"


def _import(path: Path, manifest: pkg.Manifest, entry: str) -> object:
    package = _module_name(manifest, path)
    if package not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            package, path / "__init__.py", submodule_search_locations=[str(path)]
        )
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        if (path / "__init__.py").exists() and spec.loader is not None:
            spec.loader.exec_module(module)
    module_name, _, attr = entry.partition(":")
    return getattr(importlib.import_module(f"{package}.{module_name}"), attr)


def load_provider(path: Path, manifest: pkg.Manifest, context: AdapterContext) -> Provider:
    factory = _import(path, manifest, manifest.adapter.entry)
    provider = factory(context)  # type: ignore[operator]
    if not isinstance(provider, Provider):
        raise pkg.PackageError("adapter", f"{manifest.adapter.entry} did not make a provider")
    if sorted(s.id for s in provider.describe()) != sorted(s.id for s in manifest.specs()):
        raise pkg.PackageError(
            "claims", "the adapter describes other capabilities than its manifest"
        )
    return provider
