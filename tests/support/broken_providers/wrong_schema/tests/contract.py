"""A throwaway instance of the broken provider, for the contract kit."""

from __future__ import annotations

from pathlib import Path

from lineup.core.contract import ContractFixture
from lineup.providers.adapter import AdapterContext, manifest_at

from ..adapter import make


async def fixture(workdir: Path) -> ContractFixture:
    context = AdapterContext(
        manifest=manifest_at(Path(__file__).parents[1]),
        data_dir=workdir,
        config={"instances": ["test"]},
    )
    return ContractFixture(
        provider=make(context), instance="test", samples={"wrong_schema.count.read": {}}
    )
