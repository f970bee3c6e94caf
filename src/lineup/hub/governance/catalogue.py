"""The capabilities the hub's providers offer, read once when the hub starts."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import jsonschema

from lineup.core.provider import Provider
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import InvalidArgument, NotFound

log = logging.getLogger("lineup.hub.governance")


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    spec: CapabilitySpec
    provider: Provider
    validator: jsonschema.protocols.Validator
    output_validator: jsonschema.protocols.Validator


class Catalogue:
    def __init__(self, providers: Iterable[Provider]) -> None:
        self.providers: dict[str, Provider] = {}
        self._entries: dict[str, CatalogueEntry] = {}
        for provider in providers:
            self.add(provider)

    def add(self, provider: Provider) -> None:
        if provider.id in self.providers:
            raise ValueError(f"two providers are named {provider.id!r}")
        instances = list(provider.instances())
        for spec in provider.describe():
            if not spec.id.startswith(provider.id + "."):
                raise ValueError(f"{spec.id!r} is not under its provider {provider.id!r}")
            if spec.id in self._entries:
                raise ValueError(f"two capabilities are named {spec.id!r}")
            entry_spec = spec.model_copy(update={"instances": spec.instances or instances})
            self._entries[spec.id] = CatalogueEntry(
                entry_spec,
                provider,
                _validator(spec.input_schema),
                _validator(spec.output_schema),
            )
        self.providers[provider.id] = provider

    def specs(self) -> Sequence[CapabilitySpec]:
        return [e.spec for e in sorted(self._entries.values(), key=lambda e: e.spec.id)]

    def get(self, capability: str) -> CatalogueEntry:
        entry = self._entries.get(capability)
        if entry is None:
            raise NotFound(
                f"No capability {capability!r} on this hub.", details={"capability": capability}
            )
        return entry

    def has(self, capability: str) -> bool:
        return capability in self._entries


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
