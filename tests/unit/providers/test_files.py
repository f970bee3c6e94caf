"""The files provider, against a real directory: reads, paths confined to the directory, a
write previewed as a diff and made against the version the person saw, and applied once per
idempotency key — checked on the file system itself, not on the provider's answers."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from lineup.core.provider import Completed, Invocation, Provider, ProviderError
from lineup.protocol.errors import ErrorCode
from lineup.providers.adapter import AdapterContext, manifest_at
from lineup.providers.files import ABSENT, FilesProvider, make
from lineup.providers.files._provider import _params_digest

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "lineup" / "providers" / "files"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "notes").mkdir(parents=True)
    (root / "readme.md").write_text("# Project\n\nHello.\n")
    (root / "notes" / "monday.txt").write_text("standup\n")
    return root


@pytest.fixture
def provider(tmp_path: Path, docs: Path) -> FilesProvider:
    return make(
        AdapterContext(
            manifest=manifest_at(PACKAGE),
            data_dir=tmp_path / "data",
            config={"instances": {"docs": str(docs)}},
        )
    )


def version(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


async def call(
    provider: FilesProvider,
    capability: str,
    key: str = "",
    expected_version: str | None = None,
    **params: Any,
) -> dict[str, Any]:
    answer = await provider.invoke(
        Invocation(
            f"files.{capability}",
            "docs",
            params,
            idempotency_key=key,
            expected_version=expected_version,
        )
    )
    assert isinstance(answer, Completed)
    return dict(answer.output)


async def refused(provider: FilesProvider, capability: str, **params: Any) -> ErrorCode:
    with pytest.raises(ProviderError) as caught:
        await call(provider, capability, key="k", **params)
    return caught.value.code


def test_it_is_a_provider_of_the_directories_it_was_given(provider: FilesProvider) -> None:
    assert isinstance(provider, Provider)
    assert provider.instances() == ["docs"]
    assert all(spec.instances == ["docs"] for spec in provider.describe())


async def test_list_and_read_answer_what_is_on_disk(provider: FilesProvider) -> None:
    listing = await call(provider, "list")
    assert [(e["path"], e["type"]) for e in listing["entries"]] == [
        ("notes", "directory"),
        ("readme.md", "file"),
    ]
    inner = await call(provider, "list", path="notes")
    assert [e["path"] for e in inner["entries"]] == ["notes/monday.txt"]
    read = await call(provider, "read", path="readme.md")
    assert read == {
        "path": "readme.md",
        "content": "# Project\n\nHello.\n",
        "version": version(b"# Project\n\nHello.\n"),
        "size": 18,
    }


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../outside.txt", ErrorCode.INVALID_ARGUMENT),
        ("notes/../../outside.txt", ErrorCode.INVALID_ARGUMENT),
        ("/etc/hostname", ErrorCode.INVALID_ARGUMENT),
        ("escape/secret.txt", ErrorCode.FORBIDDEN),
        ("missing.txt", ErrorCode.NOT_FOUND),
    ],
)
async def test_no_path_leaves_the_directory(
    provider: FilesProvider, docs: Path, tmp_path: Path, path: str, code: ErrorCode
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "outside", docs / "escape")
    assert await refused(provider, "read", path=path) is code
    if code is not ErrorCode.NOT_FOUND:
        assert await refused(provider, "write", path=path, content="x") is code
    assert (tmp_path / "outside" / "secret.txt").read_text() == "secret"
    assert not (tmp_path / "outside.txt").exists()


async def test_a_write_preview_shows_the_diff_against_the_current_version(
    provider: FilesProvider,
) -> None:
    draft = await provider.preview(
        Invocation(
            "files.write", "docs", {"path": "readme.md", "content": "# Project\n\nHi there.\n"}
        )
    )
    assert draft.resource_version == version(b"# Project\n\nHello.\n")
    assert "-Hello.\n+Hi there.\n" in draft.data["diff"]
    assert "1 line(s) added, 1 removed" in draft.impact
    created = await provider.preview(
        Invocation("files.write", "docs", {"path": "new.txt", "content": "a\nb\n"})
    )
    assert created.resource_version == ABSENT
    assert created.impact.startswith("Creates new.txt (2 line(s)")


async def test_a_write_made_against_an_old_version_is_a_conflict_and_changes_nothing(
    provider: FilesProvider, docs: Path
) -> None:
    seen = version((docs / "readme.md").read_bytes())
    (docs / "readme.md").write_text("someone else's edit\n")
    with pytest.raises(ProviderError) as caught:
        await call(provider, "write", "k1", seen, path="readme.md", content="mine\n")
    assert caught.value.code is ErrorCode.CONFLICT
    assert (docs / "readme.md").read_text() == "someone else's edit\n"
    with pytest.raises(ProviderError):  # created meanwhile: the card said it did not exist
        (docs / "late.txt").write_text("there first\n")
        await call(provider, "write", "k2", ABSENT, path="late.txt", content="mine\n")
    assert (docs / "late.txt").read_text() == "there first\n"


async def test_a_write_is_applied_once_per_idempotency_key(
    provider: FilesProvider, docs: Path
) -> None:
    first = await call(
        provider, "write", "k1", version(b"standup\n"), path="notes/monday.txt", content="retro\n"
    )
    assert first["previousVersion"] == version(b"standup\n")
    assert (docs / "notes" / "monday.txt").read_text() == "retro\n"
    (docs / "notes" / "monday.txt").write_text("edited after the write\n")

    again = await call(
        provider, "write", "k1", version(b"standup\n"), path="notes/monday.txt", content="retro\n"
    )
    assert again == first
    assert (docs / "notes" / "monday.txt").read_text() == "edited after the write\n"
    receipt = await provider.receipt("docs", "k1")
    assert receipt is not None
    assert isinstance(receipt.outcome, Completed)
    assert dict(receipt.outcome.output) == first
    assert await provider.receipt("docs", "never-used") is None


async def test_one_key_for_another_write_is_a_conflict(provider: FilesProvider) -> None:
    await call(provider, "write", "k1", path="a.txt", content="one\n")
    with pytest.raises(ProviderError) as caught:
        await call(provider, "write", "k1", path="b.txt", content="two\n")
    assert caught.value.code is ErrorCode.CONFLICT


async def test_a_write_cut_off_after_the_file_changed_is_settled_by_its_retry(
    provider: FilesProvider, docs: Path
) -> None:
    """The intent is recorded, the file renamed into place, and the process dies before the
    outcome is recorded: the same key again finds the file at the intended version and
    answers done, without a conflict and without writing again."""
    ledger = provider._ledger  # the provider's own record, as a crash would leave it
    before = version(b"standup\n")
    ledger.intend(
        "docs",
        "k1",
        _digest("notes/monday.txt", "retro\n"),
        "notes/monday.txt",
        before,
        version(b"retro\n"),
    )
    (docs / "notes" / "monday.txt").write_text("retro\n")
    assert await provider.receipt("docs", "k1") is None  # not settled yet: retry it

    answer = await call(provider, "write", "k1", before, path="notes/monday.txt", content="retro\n")
    assert answer["previousVersion"] == before
    assert answer["version"] == version(b"retro\n")
    assert await provider.receipt("docs", "k1") is not None


async def test_health_says_when_a_directory_is_gone(provider: FilesProvider, docs: Path) -> None:
    assert (await provider.health()).ok
    shutil.rmtree(docs)
    health = await provider.health()
    assert not health.ok
    assert "docs" in health.detail


def test_instances_must_be_absolute_directories(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="absolute"):
        make(
            AdapterContext(
                manifest=manifest_at(PACKAGE),
                data_dir=tmp_path,
                config={"instances": {"docs": "relative/docs"}},
            )
        )


def _digest(path: str, content: str) -> str:
    return _params_digest({"path": path, "content": content})
