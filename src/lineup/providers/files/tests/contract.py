"""The files package's contract fixture: a throwaway directory with one file in it."""

from __future__ import annotations

from pathlib import Path

from lineup.core.contract import ContractFixture
from lineup.providers.adapter import AdapterContext, manifest_at

from .._provider import make

INSTANCE = "docs"


async def fixture(workdir: Path) -> ContractFixture:
    directory = workdir / INSTANCE
    directory.mkdir()
    (directory / "hello.txt").write_text("Hello from the contract kit.\n", encoding="utf-8")
    context = AdapterContext(
        manifest=manifest_at(Path(__file__).parents[1]),
        data_dir=workdir / "data",
        config={"instances": {INSTANCE: str(directory)}},
    )
    return ContractFixture(
        provider=make(context),
        instance=INSTANCE,
        samples={
            "files.list": {"path": ""},
            "files.read": {"path": "hello.txt"},
            "files.write": {"path": "notes.txt", "content": "Written by the contract kit.\n"},
        },
    )
