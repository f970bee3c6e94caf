"""The capabilities the hub's providers offer: each provider version read once when it is
loaded, and each workspace's view of the versions it runs."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import jsonschema

from lineup.core.package import MANIFEST, Manifest, tree_digest
from lineup.core.provider import Provider
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import Forbidden, InvalidArgument, NotFound
from lineup.store.providers import Install

log = logging.getLogger("lineup.hub.governance")


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    spec: CapabilitySpec
    provider: Provider
    validator: jsonschema.protocols.Validator
    output_validator: jsonschema.protocols.Validator


Source = Literal["bundled", "package"]


@dataclass(frozen=True, slots=True)
class Loaded:
    """One version of a provider, ready to call: bundled with the hub, or unpacked from a
    verified package."""

    provider: Provider
    version: str
    digest: str
    source: Source
    entries: Mapping[str, CatalogueEntry]
    manifest: Manifest | None = None
    signer: str | None = None
    development: bool = False

    @property
    def id(self) -> str:
        return self.provider.id

    def specs(self) -> list[CapabilitySpec]:
        return [self.entries[k].spec for k in sorted(self.entries)]


def load_entries(provider: Provider) -> dict[str, CatalogueEntry]:
    """The provider's capabilities, checked once (ids under its own, schemas valid)."""
    instances = list(provider.instances())
    entries: dict[str, CatalogueEntry] = {}
    for spec in provider.describe():
        if not spec.id.startswith(provider.id + "."):
            raise ValueError(f"{spec.id!r} is not under its provider {provider.id!r}")
        if spec.id in entries:
            raise ValueError(f"two capabilities are named {spec.id!r}")
        entry_spec = spec.model_copy(update={"instances": spec.instances or instances})
        entries[spec.id] = CatalogueEntry(
            entry_spec, provider, _validator(spec.input_schema), _validator(spec.output_schema)
        )
    return entries


def bundled(provider: Provider) -> Loaded:
    manifest = getattr(provider, "manifest", None)
    if not isinstance(manifest, Manifest):
        return Loaded(provider, "0", f"builtin:{provider.id}", "bundled", load_entries(provider))
    module = sys.modules.get(type(provider).__module__)
    root = Path(module.__file__).parent if module is not None and module.__file__ else None
    digest = f"builtin:{provider.id}"
    if root is not None and (root / MANIFEST).is_file():
        from lineup.providers.packaging.loader import read_package_dir

        digest = tree_digest(read_package_dir(root))
    return Loaded(
        provider, manifest.version, digest, "bundled", load_entries(provider), manifest=manifest
    )


class Catalogue:
    """Every provider version this node can call: the bundled ones (what the hub ships and
    its settings name), and packages loaded by digest. Which of them a workspace reaches is
    its :class:`CatalogueView`."""

    def __init__(self, providers: Iterable[Provider | Loaded] = ()) -> None:
        self.bundled: dict[str, Loaded] = {}
        self.loaded: dict[str, Loaded] = {}
        for provider in providers:
            self.add(provider)

    def add(self, provider: Provider | Loaded) -> Loaded:
        """A bundled provider: one shipped as a package in the hub's own tree is known by its
        manifest's version and its files' digest; any other at version ``0``."""
        loaded = provider if isinstance(provider, Loaded) else bundled(provider)
        if loaded.id in self.bundled:
            raise ValueError(f"two providers are named {loaded.id!r}")
        self.bundled[loaded.id] = loaded
        self.loaded[loaded.digest] = loaded
        return loaded

    def register(self, loaded: Loaded) -> None:
        self.loaded.setdefault(loaded.digest, loaded)

    @property
    def providers(self) -> dict[str, Provider]:
        """The bundled providers by id."""
        return {pid: loaded.provider for pid, loaded in self.bundled.items()}

    def view(self, installs: Mapping[str, Install]) -> CatalogueView:
        """What a workspace with these install rows reaches. A bundled provider without a row
        is enabled; a row whose digest this node has not loaded is left out (the caller
        loads first: :meth:`Registry.view`)."""
        active: dict[str, Loaded] = {}
        disabled: set[str] = set()
        for pid, loaded in self.bundled.items():
            if pid not in installs:
                active[pid] = loaded
        for pid, row in installs.items():
            if row.state == "removed":
                continue
            # a bundled provider runs the version this hub ships, whatever an older hub did
            version = self.bundled.get(pid) if row.source == "bundled" else None
            version = version or self.loaded.get(row.digest)
            if version is None:
                continue
            active[pid] = version
            if row.state == "disabled":
                disabled.add(pid)
        return CatalogueView(active, frozenset(disabled), installs)


@dataclass(frozen=True, slots=True)
class CatalogueView:
    """The providers one workspace runs: ``disabled`` ones refuse new calls at once, while
    their executions in flight can still be followed (:meth:`find`)."""

    active: Mapping[str, Loaded]
    disabled: frozenset[str]
    installs: Mapping[str, Install]
    """The install rows the view was made from."""

    def _entry(self, capability: str) -> tuple[Loaded, CatalogueEntry] | None:
        pid = capability.partition(".")[0]
        loaded = self.active.get(pid)
        if loaded is None or capability not in loaded.entries:
            return None
        return loaded, loaded.entries[capability]

    def get(self, capability: str) -> CatalogueEntry:
        found = self._entry(capability)
        if found is None:
            raise NotFound(
                f"No capability {capability!r} on this hub.", details={"capability": capability}
            )
        loaded, entry = found
        if loaded.id in self.disabled:
            raise Forbidden(
                f"{loaded.id} is disabled in this workspace: its capabilities refuse new calls.",
                details={"reason": "provider_disabled", "provider": loaded.id},
            )
        return entry

    def find(self, capability: str) -> CatalogueEntry | None:
        """The capability's entry even while its provider is disabled."""
        found = self._entry(capability)
        return None if found is None else found[1]

    def has(self, capability: str) -> bool:
        found = self._entry(capability)
        return found is not None and found[0].id not in self.disabled

    def specs(self) -> list[CapabilitySpec]:
        return [
            spec
            for pid in sorted(self.active)
            if pid not in self.disabled
            for spec in self.active[pid].specs()
        ]


def _validator(schema: dict[str, object]) -> jsonschema.protocols.Validator:
    """A validator checked once, when the provider is registered (not per call)."""
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


def instance_of(entry: CatalogueEntry, asked: str | None) -> str:
    instances = entry.spec.instances
    if asked is None:
        if len(instances) == 1:
            return instances[0]
        raise InvalidArgument(
            f"{entry.spec.id} reaches several instances; name one of: {', '.join(instances)}.",
            details={"instances": instances},
        )
    if asked not in instances:
        raise NotFound(
            f"{entry.spec.id} has no instance {asked!r}.",
            details={"instance": asked, "instances": instances},
        )
    return asked


def check_params(entry: CatalogueEntry, params: dict[str, object]) -> None:
    problems = [
        {"path": "/" + "/".join(str(p) for p in error.absolute_path), "problem": error.message}
        for error in sorted(entry.validator.iter_errors(params), key=lambda e: list(e.path))
    ]
    if problems:
        raise InvalidArgument(
            f"The params do not fit {entry.spec.id}'s input schema.",
            details={"problems": problems[:20]},
        )
