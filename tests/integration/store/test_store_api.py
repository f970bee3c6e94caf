"""The public surface of ``lineup.store`` and its configuration from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

import lineup.store
from lineup.store import database_url_from_env


def test_the_public_surface_is_sorted_and_importable() -> None:
    assert lineup.store.__all__ == sorted(lineup.store.__all__)
    for name in lineup.store.__all__:
        assert getattr(lineup.store, name) is not None


def test_the_database_url_comes_from_lineup_database_url_first(tmp_path: Path) -> None:
    url = "postgresql+asyncpg://postgres@db:5432/lineup"
    env = {"LINEUP_DATABASE_URL": url, "LINEUP_HOME": str(tmp_path)}
    assert database_url_from_env(environ=env) == url


def test_the_default_database_is_sqlite_in_lineup_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = database_url_from_env(environ={"LINEUP_HOME": str(home)})
    assert url == f"sqlite+aiosqlite:///{home}/lineup.db"
    assert home.is_dir()


def test_an_explicit_home_wins_over_lineup_home(tmp_path: Path) -> None:
    url = database_url_from_env(tmp_path / "a", environ={"LINEUP_HOME": str(tmp_path / "b")})
    assert url == f"sqlite+aiosqlite:///{tmp_path / 'a'}/lineup.db"


def test_without_lineup_home_the_default_is_dot_lineup_in_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert database_url_from_env(environ={}) == f"sqlite+aiosqlite:///{tmp_path}/.lineup/lineup.db"
