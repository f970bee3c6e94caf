"""Migrations build exactly the schema that ``lineup.store.schema`` declares, on both databases."""

from __future__ import annotations

from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from lineup.store import Reader, Store
from lineup.store.migrations import alembic_config, schema_diff


def _revisions(connection: object) -> str | None:
    """The database's revision heads ("0001", or "0002_tools+0003_…" once several issues each
    added a revision on top of it; migrations run ``upgrade heads``)."""
    heads = MigrationContext.configure(connection).get_current_heads()  # type: ignore[arg-type]
    return "+".join(sorted(heads)) or None


def _script_heads() -> str:
    return "+".join(sorted(ScriptDirectory.from_config(alembic_config()).get_heads()))


async def _inspect(database_url: str) -> tuple[list[object], str | None]:
    """Through a separate store (its own connections), without migrating."""

    def read(r: Reader) -> tuple[list[object], str | None]:
        return schema_diff(r.connection), _revisions(r.connection)

    store = await Store.open(database_url)
    try:
        return await store.read(read)
    finally:
        await store.close()


async def test_the_migrated_schema_matches_the_metadata(store: Store, database_url: str) -> None:
    diff, revision = await _inspect(database_url)
    assert diff == []
    assert revision == _script_heads()


async def test_an_empty_database_differs_from_the_metadata(database_url: str) -> None:
    """Guards the test above: the comparison does see tables."""
    diff, revision = await _inspect(database_url)
    assert revision is None
    assert len(diff) > 10


async def test_migrating_twice_is_harmless(store: Store, database_url: str) -> None:
    await store.migrate()
    diff, _ = await _inspect(database_url)
    assert diff == []
