"""The scheduling package's contract fixture: a throwaway demo plant, made the way the hub
makes the provider (its entry point), with the key the plant's system keeps."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lineup.core.contract import ContractFixture
from lineup.core.provider import Completed, Invocation
from lineup.providers.adapter import AdapterContext

from .._capabilities import (
    ORDERS_QUERY,
    RESOURCES_LOAD,
    SCHEDULE_PREVIEW,
    SCHEDULE_PUBLISH,
    manifest,
)
from .._provider import DEMO_PLANT, make


async def fixture(workdir: Path) -> ContractFixture:
    context = AdapterContext(
        manifest=manifest(), data_dir=workdir, config={"instances": [DEMO_PLANT]}
    )
    provider = make(context)
    await provider.seed_demo(DEMO_PLANT)
    credentials = {"apiKey": (workdir / f"{DEMO_PLANT}.key").read_text().strip()}

    async def a_fresh_draft() -> Mapping[str, Any]:
        """A publish needs a trial schedule that exists, made against the current version."""
        answer = await provider.invoke(
            Invocation(SCHEDULE_PREVIEW, DEMO_PLANT, {}, credentials=credentials)
        )
        assert isinstance(answer, Completed)
        return {
            "draftId": answer.output["draftId"],
            "basedOnVersion": answer.output["basedOnVersion"],
        }

    return ContractFixture(
        provider=provider,
        instance=DEMO_PLANT,
        credentials=credentials,
        samples={
            ORDERS_QUERY: {"status": "open"},
            RESOURCES_LOAD: {"from": "2026-12-07", "to": "2026-12-11"},
            SCHEDULE_PREVIEW: {"horizonDays": 10},
            SCHEDULE_PUBLISH: a_fresh_draft,
        },
    )
