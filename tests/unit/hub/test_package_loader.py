"""The loader: a verified package's files put where they will run (atomically, reused when
already there, never outside their directory), and imported under a name of their own so two
versions of one provider run side by side; a provider that describes other capabilities than
its manifest declares is refused when it is made."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lineup.core.package import PackageError, read_manifest, tree_digest
from lineup.core.provider import Completed, Invocation
from lineup.providers.adapter import AdapterContext
from lineup.providers.packaging.loader import (
    forget,
    load_fixture,
    load_provider,
    materialize,
    package_dir,
    read_package_dir,
)
from tests.support.packages import MARKER_ENV, marked_package, write_package


@pytest.fixture(autouse=True)
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "imported.txt"
    monkeypatch.setenv(MARKER_ENV, str(path))
    return path


def test_a_package_is_materialized_under_its_id_version_and_digest(tmp_path: Path) -> None:
    files = marked_package()
    digest = tree_digest(files)
    where = materialize(files, tmp_path / "pkgs", digest)
    assert where == tmp_path / "pkgs" / "marked" / f"1.0.0-{digest[7:19]}"
    assert where == package_dir(tmp_path / "pkgs", "marked", "1.0.0", digest)
    assert read_package_dir(where) == files
    assert [p.name for p in where.parent.iterdir()] == [where.name]  # no staging left


def test_materializing_the_same_package_again_reuses_it_and_a_changed_copy_is_replaced(
    tmp_path: Path,
) -> None:
    files = marked_package()
    digest = tree_digest(files)
    where = materialize(files, tmp_path, digest)
    (where / "__pycache__").mkdir()
    (where / "__pycache__" / "adapter.cpython-311.pyc").write_bytes(b"compiled")
    assert materialize(files, tmp_path, digest) == where
    assert (where / "__pycache__" / "adapter.cpython-311.pyc").exists()  # reused as it was

    (where / "adapter.py").write_text("# changed on disk\n")
    assert materialize(files, tmp_path, digest) == where
    assert read_package_dir(where) == files
    assert sorted(p.name for p in where.parent.iterdir()) == [where.name]


def test_materialize_refuses_files_that_are_not_the_digest_or_leave_the_package(
    tmp_path: Path,
) -> None:
    files = marked_package()
    with pytest.raises(PackageError) as refused:
        materialize(files, tmp_path, tree_digest({**files, "x.txt": b""}))
    assert refused.value.rule == "digest"
    for path in ("../escaped.py", "/abs.py", "a/../../b.py"):
        with pytest.raises(PackageError) as refused:
            materialize({**files, path: b""}, tmp_path, "sha256:" + "0" * 64)
        assert refused.value.rule == "layout"
    assert not (tmp_path / "escaped.py").exists()


def test_reading_a_package_directory_skips_bytecode_and_refuses_links(tmp_path: Path) -> None:
    root = write_package(marked_package(), tmp_path / "pkg")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "adapter.cpython-311.pyc").write_bytes(b"compiled")
    (root / "stale.pyc").write_bytes(b"compiled")
    assert read_package_dir(root) == marked_package()

    os.symlink("/etc/hostname", root / "link.txt")
    with pytest.raises(PackageError) as refused:
        read_package_dir(root)
    assert refused.value.rule == "layout"
    (root / "link.txt").unlink()
    os.symlink(tmp_path, root / "linked_dir")
    with pytest.raises(PackageError):
        read_package_dir(root)


def _versioned(version: str, word: str) -> dict[str, bytes]:
    """The marked package, its greeting word in a module it imports relatively."""
    files = marked_package()
    manifest = json.loads(files["provider.json"])
    manifest["version"] = version
    adapter = files["adapter.py"].decode()
    adapter = adapter.replace(
        'return Completed(output={"greeting": "Hello, " + call.params["name"]})',
        'return Completed(output={"greeting": WORD + ", " + call.params["name"]})',
    ).replace("\nwith open", "\nfrom ._words import WORD\n\nwith open", 1)
    return {
        **files,
        "provider.json": json.dumps(manifest).encode(),
        "adapter.py": adapter.encode(),
        "_words.py": f"WORD = {word!r}\n".encode(),
    }


async def test_two_versions_of_a_package_run_side_by_side_each_with_its_own_modules(
    tmp_path: Path,
) -> None:
    greetings = []
    for version, word in (("1.0.0", "Hello"), ("2.0.0", "Hi")):
        files = _versioned(version, word)
        manifest = read_manifest(files)
        where = materialize(files, tmp_path / "pkgs", tree_digest(files))
        provider = load_provider(
            where,
            manifest,
            AdapterContext(manifest, tmp_path / version, config={"instances": ["test"]}),
        )
        answer = await provider.invoke(Invocation("marked.greeting.read", "test", {"name": "Ada"}))
        assert isinstance(answer, Completed)
        greetings.append((type(provider).__module__, answer.output["greeting"]))
        fixture = await load_fixture(where, manifest)(tmp_path / f"work-{version}")
        assert fixture.instance == "test"
    assert [g for _, g in greetings] == ["Hello, Ada", "Hi, Ada"]
    assert greetings[0][0] != greetings[1][0]
    assert all(module.startswith("lineup_pkg_marked_") for module, _ in greetings)


def test_a_provider_describing_other_capabilities_than_its_manifest_is_refused_when_made(
    tmp_path: Path,
) -> None:
    files = marked_package(
        extra_handler="\n    def describe(self):\n        return []\n",
    )
    manifest = read_manifest(files)
    where = materialize(files, tmp_path, tree_digest(files))
    with pytest.raises(PackageError) as refused:
        load_provider(where, manifest, AdapterContext(manifest, tmp_path / "data"))
    assert refused.value.rule == "claims"
    forget(manifest, where)


def test_a_factory_that_fails_is_a_load_refusal(tmp_path: Path) -> None:
    files = marked_package(
        extra_handler="\n    def __init__(self, context):\n        raise RuntimeError('no')\n",
    )
    manifest = read_manifest(files)
    where = materialize(files, tmp_path, tree_digest(files))
    with pytest.raises(PackageError) as refused:
        load_provider(where, manifest, AdapterContext(manifest, tmp_path / "data"))
    assert refused.value.rule == "load"
    assert "RuntimeError" in refused.value.message
    forget(manifest, where)
