"""What the hub holds to reach each provider's system: sealed in the database with the hub's
secret keys, opened only to be injected into one call, never put in a fact, a log line or an
answer."""

from __future__ import annotations

import json
from collections.abc import Mapping

from lineup.hub.state import HubState
from lineup.store import governance as gov_store


async def put(hub: HubState, provider: str, instance: str, values: Mapping[str, str]) -> None:
    sealed = hub.keyring.seal(
        json.dumps(dict(values)), gov_store.credential_context(provider, instance)
    )
    now = hub.clock()
    await hub.store.write(
        lambda tx: gov_store.put_credential(tx.connection, provider, instance, sealed, now)
    )


async def get(hub: HubState, provider: str, instance: str) -> dict[str, str]:
    sealed = await hub.store.read(
        lambda r: gov_store.get_credential(r.connection, provider, instance)
    )
    if sealed is None:
        return {}
    values = json.loads(hub.keyring.open(sealed, gov_store.credential_context(provider, instance)))
    return {str(k): str(v) for k, v in values.items()}


async def has(hub: HubState, provider: str, instance: str) -> bool:
    sealed = await hub.store.read(
        lambda r: gov_store.get_credential(r.connection, provider, instance)
    )
    return sealed is not None
