"""A provider package is refused before any of its code runs when its files were changed
after signing, when a key the hub does not trust signed it, when nobody signed it, and when
its manifest claims more than its adapter handles (seed 003 §5, the supply-chain rule).

The proof that nothing ran: the test package's adapter writes a mark when it is imported. A
good package leaves the mark (so the tests can fail); a refused one does not.
"""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.cli import main
from lineup.core.package import (
    PackageError,
    new_signing_key,
    parse_trusted_keys,
    read_archive,
    read_manifest,
    sign,
    static_check,
    tree_digest,
    verify,
    write_archive,
)
from lineup.providers.packaging.authoring import trusted_key_line
from tests.support.packages import MARKER_ENV, marked_package, write_package


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "imported.txt"
    monkeypatch.setenv(MARKER_ENV, str(path))
    return path


@pytest.fixture
def signer(tmp_path: Path) -> tuple[bytes, Path]:
    """A signing key and a trusted-keys file trusting it."""
    private, public = new_signing_key()
    trusted = tmp_path / "trusted-keys"
    trusted.write_text(f"# the team's key\n{trusted_key_line(public)}\n")
    return private, trusted


def kit(
    capsys: pytest.CaptureFixture[str], package: Path, trusted: Path | None
) -> tuple[int, dict[str, object]]:
    args = ["provider", "test", "--json", str(package)]
    if trusted is not None:
        args += ["--trust", str(trusted)]
    code = main(args)
    return code, json.loads(capsys.readouterr().out)


def refused_rule(result: dict[str, object]) -> object:
    refused = result["refused"]
    assert isinstance(refused, dict)
    return refused["rule"]


def flip_one_byte(files: dict[str, bytes], path: str) -> dict[str, bytes]:
    content = bytearray(files[path])
    content[len(content) // 2] ^= 0x01
    return {**files, path: bytes(content)}


# -- the control: a good package runs -------------------------------------------------------


@pytest.mark.parametrize("form", ["directory", "archive"])
def test_a_signed_package_by_a_trusted_key_is_imported_and_passes(
    form: str,
    tmp_path: Path,
    marker: Path,
    signer: tuple[bytes, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, trusted = signer
    signed = sign(marked_package(), private)
    package = _as(form, signed, tmp_path)
    code, result = kit(capsys, package, trusted)
    assert code == 0, result
    assert marker.read_text().startswith("adapter imported")


# -- refused before import -------------------------------------------------------------------


@pytest.mark.parametrize("form", ["directory", "archive"])
@pytest.mark.parametrize("changed", ["adapter.py", "provider.json", "tests/contract.py"])
def test_one_byte_changed_after_signing_is_refused_before_import(
    form: str,
    changed: str,
    tmp_path: Path,
    marker: Path,
    signer: tuple[bytes, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, trusted = signer
    tampered = flip_one_byte(sign(marked_package(), private), changed)
    code, result = kit(capsys, _as(form, tampered, tmp_path), trusted)
    assert (code, refused_rule(result)) == (2, "digest")
    assert not marker.exists()


def test_a_tampered_package_is_refused_even_without_trusted_keys(
    tmp_path: Path, marker: Path, signer: tuple[bytes, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    private, _ = signer
    tampered = flip_one_byte(sign(marked_package(), private), "adapter.py")
    code, result = kit(capsys, _as("directory", tampered, tmp_path), None)
    assert (code, refused_rule(result)) == (2, "digest")
    assert not marker.exists()


def test_a_package_signed_by_a_key_the_hub_does_not_trust_is_refused_before_import(
    tmp_path: Path, marker: Path, signer: tuple[bytes, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, trusted = signer
    stranger, _ = new_signing_key()
    package = _as("archive", sign(marked_package(), stranger), tmp_path)
    code, result = kit(capsys, package, trusted)
    assert (code, refused_rule(result)) == (2, "signer")
    assert not marker.exists()


def test_an_unsigned_package_is_refused_before_import_when_keys_are_given(
    tmp_path: Path, marker: Path, signer: tuple[bytes, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, trusted = signer
    code, result = kit(capsys, _as("directory", marked_package(), tmp_path), trusted)
    assert (code, refused_rule(result)) == (2, "unsigned")
    assert not marker.exists()


def test_a_manifest_claiming_a_capability_its_adapter_does_not_handle_is_refused_before_import(
    tmp_path: Path, marker: Path, signer: tuple[bytes, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    private, trusted = signer
    overclaiming = sign(marked_package(claims=("marked.secrets.read",)), private)
    code, result = kit(capsys, _as("archive", overclaiming, tmp_path), trusted)
    assert (code, refused_rule(result)) == (2, "claims")
    assert result["static"] == {
        "passed": False,
        "capabilities": [],
        "rule": "claims",
        "message": "the manifest claims capabilities its adapter has no handler for: "
        "marked.secrets.read",
    }
    assert not marker.exists()


def test_a_refusal_prints_its_rule_and_message(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = _as("directory", marked_package(claims=("marked.secrets.read",)), tmp_path)
    assert main(["provider", "test", str(package)]) == 2
    out = capsys.readouterr().out
    assert "rule claims" in out
    assert "marked.secrets.read" in out
    assert not marker.exists()


# -- the package functions themselves ----------------------------------------------------------


def test_a_directory_and_its_archive_have_one_digest() -> None:
    files = marked_package()
    assert tree_digest(read_archive(write_archive(files))) == tree_digest(files)


def test_each_refusal_of_verify_names_its_rule() -> None:
    private, public = new_signing_key()
    trusted = parse_trusted_keys(trusted_key_line(public))
    signed = sign(marked_package(), private)
    assert verify(signed, trusted).manifest.id == "marked"
    for files, rule in [
        (marked_package(), "unsigned"),
        (flip_one_byte(signed, "adapter.py"), "digest"),
        ({**signed, "extra.txt": b"added"}, "digest"),
        (sign(marked_package(), new_signing_key()[0]), "signer"),
    ]:
        with pytest.raises(PackageError) as refused:
            verify(files, trusted)
        assert refused.value.rule == rule


def test_static_check_finds_an_overclaiming_manifest_by_reading_not_running() -> None:
    files = marked_package(claims=("marked.more.read",))
    with pytest.raises(PackageError) as refused:
        static_check(files, read_manifest(files), "0.1.0")
    assert refused.value.rule == "claims"


def test_trusted_keys_are_read_one_per_line_skipping_comments() -> None:
    _, first = new_signing_key()
    _, second = new_signing_key()
    text = f"# ops\n\n{trusted_key_line(first)}\ned25519 {trusted_key_line(second).split()[1]}\n"
    keys = parse_trusted_keys(text, development=True)
    assert [k.public_key for k in keys] == [first, second]
    assert all(k.development for k in keys)
    for bad in ["rsa AAAA", "ed25519", "ed25519 not-base64!", "ed25519 AAAA"]:
        with pytest.raises(PackageError) as refused:
            parse_trusted_keys(bad)
        assert refused.value.rule == "keys"


# -- archives -------------------------------------------------------------------------------


def _tar(*members: tarfile.TarInfo, content: bytes = b"x") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for member in members:
            if member.isfile():
                member.size = len(content)
                tar.addfile(member, io.BytesIO(content))
            else:
                tar.addfile(member)
    return out.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


@pytest.mark.parametrize(
    "member",
    [
        _member("../x"),
        _member("a/../../x"),
        _member("/etc/passwd"),
        _member("link", tarfile.SYMTYPE, "/etc/passwd"),
        _member("hard", tarfile.LNKTYPE, "provider.json"),
        _member("dev", tarfile.CHRTYPE),
        _member("fifo", tarfile.FIFOTYPE),
    ],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink", "hardlink", "device", "fifo"],
)
def test_an_archive_member_that_leaves_the_package_or_is_not_a_file_is_refused(
    member: tarfile.TarInfo,
) -> None:
    with pytest.raises(PackageError) as refused:
        read_archive(_tar(_member("provider.json"), member))
    assert refused.value.rule == "layout"


@given(st.binary(max_size=4096))
def test_reading_arbitrary_bytes_as_an_archive_raises_only_package_errors(data: bytes) -> None:
    with contextlib.suppress(PackageError):
        read_archive(data)


@given(st.binary(min_size=1, max_size=2048), st.integers(min_value=0), st.integers(min_value=0))
def test_a_damaged_or_cut_archive_raises_only_package_errors(
    content: bytes, where: int, cut: int
) -> None:
    data = bytearray(write_archive({"provider.json": content, "adapter.py": content[::-1]}))
    data[where % len(data)] ^= 0xFF
    for damaged in (bytes(data), bytes(data[: cut % len(data)])):
        with contextlib.suppress(PackageError):
            read_archive(damaged)


def _as(form: str, files: dict[str, bytes], tmp_path: Path) -> Path:
    if form == "directory":
        return write_package(files, tmp_path / "package")
    archive = tmp_path / "package.lineup-provider"
    archive.write_bytes(write_archive(files))
    return archive
