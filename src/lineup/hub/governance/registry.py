"""Which provider versions each workspace runs, and loading them on this node.

The database is the registry: each workspace's install rows name a version by its digest,
and the verified package (its archive) is kept by digest. A node loads a version the first
time a workspace it serves needs it — unpacking the archive under
``$LINEUP_HOME/providers/packages/`` after checking its digest again — so every node of a
cluster runs what the registry says without being told.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from lineup.core import package as pkg
from lineup.hub.governance.catalogue import Catalogue, CatalogueView, Loaded, load_entries
from lineup.protocol.errors import Unavailable
from lineup.providers.adapter import AdapterContext
from lineup.store import providers as provider_store

if TYPE_CHECKING:
    from lineup.hub.state import HubState

log = logging.getLogger("lineup.hub.governance")

LOG_LINES_KEPT = 200


class AdapterLog(logging.Handler):
    """The recent lines each provider's adapter logged (``lineup.provider.<id>``), for the
    console. Only what the adapter itself wrote: the hub never logs a credential."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: dict[str, deque[tuple[int, str, str]]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        provider_id = record.name.removeprefix("lineup.provider.").partition(".")[0]
        lines = self.lines.setdefault(provider_id, deque(maxlen=LOG_LINES_KEPT))
        try:
            message = record.getMessage()
        except Exception:  # a malformed log call in an adapter is not the hub's failure
            message = str(record.msg)
        lines.append((int(record.created * 1000), record.levelname.lower(), message[:2000]))

    def of(self, provider_id: str) -> list[tuple[int, str, str]]:
        return list(self.lines.get(provider_id, ()))


class Registry:
    def __init__(self, hub: HubState, catalogue: Catalogue) -> None:
        self.hub = hub
        self.catalogue = catalogue
        self.logs = AdapterLog()
        adapters = logging.getLogger("lineup.provider")
        adapters.addHandler(self.logs)
        if adapters.getEffectiveLevel() > logging.INFO:
            adapters.setLevel(logging.INFO)
        self._lock = asyncio.Lock()

    def close(self) -> None:
        logging.getLogger("lineup.provider").removeHandler(self.logs)

    @property
    def packages_root(self) -> Path:
        return self.hub.settings.home / "providers" / "packages"

    def context_for(self, manifest: pkg.Manifest) -> AdapterContext:
        data_dir = self.hub.settings.home / "providers" / "data" / manifest.id
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        return AdapterContext(
            manifest=manifest,
            data_dir=data_dir,
            config=self.hub.settings.provider_config.get(manifest.id, {}),
            log=logging.getLogger(f"lineup.provider.{manifest.id}"),
        )

    async def view(self, workspace_id: str) -> CatalogueView:
        """What ``workspace_id`` runs now, every version it names loaded on this node."""
        installs = await self.hub.store.read(
            lambda r: provider_store.installs(r.connection, workspace_id)
        )
        for row in installs.values():
            if row.state == "removed" or row.source == "bundled":
                continue
            if row.digest not in self.catalogue.loaded:
                try:
                    await self.load(row.digest)
                except Exception:  # one broken version must not take the workspace's others
                    log.exception("could not load %s %s", row.provider_id, row.digest)
        return self.catalogue.view(installs)

    async def load(self, digest: str) -> Loaded:
        """The version ``digest`` ready to call, from the registry's copy of its package."""
        async with self._lock:
            if digest in self.catalogue.loaded:
                return self.catalogue.loaded[digest]
            row, archive = await self.hub.store.read(
                lambda r: (
                    provider_store.package(r.connection, digest),
                    provider_store.archive(r.connection, digest),
                )
            )
            if row is None or archive is None:
                raise Unavailable(
                    f"The provider version {digest} is not in this hub's registry.",
                    details={"digest": digest},
                )
            files = pkg.read_archive(archive)
            if pkg.tree_digest(files) != digest:
                raise Unavailable(
                    f"The stored package {digest} does not match its digest; it was not loaded.",
                    details={"digest": digest},
                )
            manifest = pkg.read_manifest(files)
            loaded = await asyncio.to_thread(self._import, files, manifest, digest, row)
            self.catalogue.register(loaded)
            log.info("loaded provider %s %s (%s)", manifest.id, manifest.version, digest)
            return loaded

    def _import(
        self,
        files: pkg.Files,
        manifest: pkg.Manifest,
        digest: str,
        row: provider_store.Package,
    ) -> Loaded:
        from lineup.providers.packaging import loader

        path = loader.materialize(files, self.packages_root, digest)
        provider = loader.load_provider(path, manifest, self.context_for(manifest))
        return Loaded(
            provider=provider,
            version=manifest.version,
            digest=digest,
            source="package",
            entries=load_entries(provider),
            manifest=manifest,
            signer=row.signer,
            development=row.development,
        )

    async def preload(self) -> None:
        """Load every version some workspace runs or may roll back to (at start)."""
        digests = await self.hub.store.read(lambda r: provider_store.digests_in_use(r.connection))
        for digest in sorted(digests):
            if digest in self.catalogue.loaded or digest.startswith("builtin:"):
                continue
            try:
                await self.load(digest)
            except Exception:
                log.exception("could not load provider version %s", digest)
