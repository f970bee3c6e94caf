"""The public surface of ``lineup.store`` and its configuration from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

import lineup.store
from lineup.protocol.errors import NotFound
from lineup.store import Reader, Store, database_url_from_env

from .factory import create_workspace


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
    assert url == f"sqlite:///{home}/lineup.db"
    assert home.is_dir()


def test_an_explicit_home_wins_over_lineup_home(tmp_path: Path) -> None:
    url = database_url_from_env(tmp_path / "a", environ={"LINEUP_HOME": str(tmp_path / "b")})
    assert url == f"sqlite:///{tmp_path / 'a'}/lineup.db"


def test_without_lineup_home_the_default_is_dot_lineup_in_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert database_url_from_env(environ={}) == f"sqlite:///{tmp_path}/.lineup/lineup.db"


@pytest.mark.parametrize("scheme", ["sqlite", "sqlite+pysqlite", "sqlite+aiosqlite"])
async def test_every_sqlite_url_spelling_opens_the_same_database_file(
    tmp_path: Path, scheme: str
) -> None:
    path = tmp_path / "lineup.db"
    store = await Store.open(f"{scheme}:///{path}")
    try:
        await store.migrate()
        ws = await create_workspace(store)
        assert store.dialect == "sqlite"
    finally:
        await store.close()
    reopened = await Store.open(f"sqlite:///{path}")
    try:
        assert await reopened.last_sequence(ws) == 1
    finally:
        await reopened.close()


async def test_a_read_runs_in_one_snapshot_and_raises_what_its_function_raised(
    store: Store,
) -> None:
    ws = await create_workspace(store)

    def read(r: Reader) -> tuple[int, int]:
        return r.last_sequence(ws), len(r.read_events(ws))

    assert await store.read(read) == (1, 1)
    with pytest.raises(NotFound):
        await store.read(lambda r: _missing(r.get_workspace("nope")))


def _missing(found: object) -> object:
    if found is None:
        raise NotFound("nothing there")
    return found
