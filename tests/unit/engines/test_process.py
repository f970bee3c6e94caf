"""Engines are confined to allowed roots (symlinks resolved), and their logs are size-capped,
rotated and free of secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineup.engines.process import RotatingLog, confine, engine_environment, engine_roots
from lineup.protocol.errors import Forbidden, InvalidArgument


def test_a_directory_under_a_root_is_allowed_and_resolved(tmp_path: Path) -> None:
    (tmp_path / "root" / "project").mkdir(parents=True)
    (tmp_path / "root" / "link").symlink_to(tmp_path / "root" / "project")
    roots = (tmp_path / "root",)
    assert confine(str(tmp_path / "root" / "project"), roots) == str(tmp_path / "root" / "project")
    assert confine(str(tmp_path / "root" / "link"), roots) == str(tmp_path / "root" / "project")


def test_outside_the_roots_or_escaping_by_symlink_is_forbidden(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "root" / "escape").symlink_to(tmp_path / "elsewhere")
    roots = (tmp_path / "root",)
    for cwd in (tmp_path / "elsewhere", tmp_path / "root" / "escape", tmp_path / "root" / ".."):
        with pytest.raises(Forbidden):
            confine(str(cwd), roots)
    (tmp_path / "rootless").mkdir()
    with pytest.raises(Forbidden):  # a sibling sharing the prefix is not inside
        confine(str(tmp_path / "rootless"), roots)


def test_a_missing_or_relative_directory_is_invalid(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument):
        confine(str(tmp_path / "missing"), (tmp_path,))
    with pytest.raises(InvalidArgument):
        confine("relative", (tmp_path,))


def test_roots_come_from_the_environment() -> None:
    found = engine_roots({"LINEUP_ENGINE_ROOTS": "/srv/a:/srv/b"})
    assert found == (Path("/srv/a"), Path("/srv/b"))
    assert engine_roots({}) == (Path.home(),)


def test_the_engine_inherits_none_of_the_hubs_secrets() -> None:
    env = engine_environment(
        "/home/engine",
        {"LINEUP_MODEL_API_KEY": "k"},
        inherit={"PATH": "/bin", "LINEUP_SECRET_KEY": "hub-secret", "AWS_SECRET": "x"},
    )
    assert env == {"PATH": "/bin", "HOME": "/home/engine", "LINEUP_MODEL_API_KEY": "k"}


def test_the_log_rotates_at_its_cap_and_redacts_secrets(tmp_path: Path) -> None:
    log = RotatingLog(tmp_path / "engine.log", max_bytes=200, backups=2, secrets=["sk-abc123"])
    for index in range(40):
        log.write(f"line {index:02d} key=sk-abc123")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["engine.log", "engine.log.1", "engine.log.2"]
    for path in tmp_path.iterdir():
        text = path.read_text()
        assert len(text.encode()) <= 200
        assert "sk-abc123" not in text and "[redacted]" in text
    assert "line 39" in (tmp_path / "engine.log").read_text()
