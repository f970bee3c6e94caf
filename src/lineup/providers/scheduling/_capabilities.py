"""The scheduling provider's catalogue: its four capabilities, as its manifest
(``provider.json``, the one place their schemas are written) declares them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lineup.core.package import Manifest
from lineup.protocol.capabilities import CapabilitySpec
from lineup.providers.adapter import manifest_at

PROVIDER_ID = "scheduling"

ORDERS_QUERY = "scheduling.orders.query"
RESOURCES_LOAD = "scheduling.resources.load"
SCHEDULE_PREVIEW = "scheduling.schedule.preview"
SCHEDULE_PUBLISH = "scheduling.schedule.publish"


@cache
def manifest() -> Manifest:
    """The package's own manifest, read beside this module (in the tree, or where the hub
    unpacked the package)."""
    return manifest_at(Path(__file__).parent)


def catalogue(instances: list[str], declared: Manifest | None = None) -> list[CapabilitySpec]:
    """The capabilities as the manifest declares them, reaching ``instances``."""
    return [
        spec.model_copy(update={"instances": list(instances)})
        for spec in (declared or manifest()).specs()
    ]
