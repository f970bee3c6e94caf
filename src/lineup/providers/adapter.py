"""What a provider package's adapter builds on: its manifest is its description, and each
capability is a method marked with :func:`capability` (and :func:`preview` for a write's
draft).

The decorators are how the hub knows, by reading the source before running it, that the
adapter handles what its manifest claims (:func:`lineup.core.package.static_check`); at run
time :class:`PackageAdapter` dispatches by the same marks, so the two cannot disagree.

A package's entry point is ``factory(context: AdapterContext) -> Provider``::

    class Files(PackageAdapter):
        @capability("files.read")
        async def read(self, call: Invocation) -> Completed: ...

    def make(context: AdapterContext) -> Files:
        return Files(context)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from jsonschema import Draft202012Validator

from lineup.core.package import MANIFEST, Manifest
from lineup.core.provider import (
    Accepted,
    BoundAccount,
    Completed,
    Draft,
    Exchange,
    Health,
    Invocation,
    JobState,
    ProviderError,
    Receipt,
)
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import ErrorCode

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

_HANDLES = "__lineup_capability__"
_PREVIEWS = "__lineup_preview__"


def capability(capability_id: str) -> Callable[[F], F]:
    """Mark ``async def handler(self, call: Invocation) -> Completed | Accepted``."""

    def mark(handler: F) -> F:
        setattr(handler, _HANDLES, capability_id)
        return handler

    return mark


def preview(capability_id: str) -> Callable[[F], F]:
    """Mark ``async def handler(self, call: Invocation) -> Draft``."""

    def mark(handler: F) -> F:
        setattr(handler, _PREVIEWS, capability_id)
        return handler

    return mark


@dataclass(frozen=True, slots=True)
class AdapterContext:
    """What the hub gives an adapter: its manifest, a directory of its own for state, and the
    operator's configuration of its instances (``LINEUP_PROVIDER_CONFIG``; never secrets:
    those are injected per call)."""

    manifest: Manifest
    data_dir: Path
    config: Mapping[str, Any] = field(default_factory=dict)
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("lineup.provider"))


class PackageAdapter:
    """A provider described by its manifest and dispatched by its marked methods."""

    def __init__(self, context: AdapterContext) -> None:
        self.context = context
        self.manifest = context.manifest
        self._specs = self.manifest.specs()
        self._inputs = {spec.id: Draft202012Validator(spec.input_schema) for spec in self._specs}
        self._handlers: dict[str, Callable[[Invocation], Awaitable[Completed | Accepted]]] = {}
        self._previews: dict[str, Callable[[Invocation], Awaitable[Draft]]] = {}
        for name in dir(type(self)):
            method = getattr(type(self), name, None)
            if callable(method):
                if (cid := getattr(method, _HANDLES, None)) is not None:
                    self._handlers[cid] = getattr(self, name)
                if (cid := getattr(method, _PREVIEWS, None)) is not None:
                    self._previews[cid] = getattr(self, name)

    @property
    def id(self) -> str:
        return self.manifest.id

    def describe(self) -> Sequence[CapabilitySpec]:
        return self._specs

    def instances(self) -> Sequence[str]:
        """The instances the operator configured (``config["instances"]``); override for a
        system that lists its own."""
        return [str(i) for i in self.context.config.get("instances", [])]

    async def invoke(self, call: Invocation) -> Completed | Accepted:
        handler = self._handlers.get(call.capability)
        if handler is None:
            raise ProviderError(ErrorCode.NOT_FOUND, f"{self.id} has no {call.capability}")
        self.check_params(call)
        return await handler(call)

    def check_params(self, call: Invocation) -> None:
        """Parameters outside the capability's input schema are ``invalid_argument`` before a
        handler sees them (the hub checks too; a provider does not rely on its caller)."""
        validator = self._inputs.get(call.capability)
        if validator is None:
            return
        problems = sorted(validator.iter_errors(call.params), key=lambda e: list(e.absolute_path))
        if problems:
            found = [
                {"path": "/" + "/".join(str(p) for p in e.absolute_path), "problem": e.message}
                for e in problems[:20]
            ]
            raise ProviderError(
                ErrorCode.INVALID_ARGUMENT,
                f"The params do not fit {call.capability}'s input schema at {found[0]['path']}: "
                f"{found[0]['problem']}",
                details={"problems": found},
            )

    async def preview(self, call: Invocation) -> Draft:
        handler = self._previews.get(call.capability)
        if handler is None:
            raise ProviderError(ErrorCode.INVALID_ARGUMENT, f"{call.capability} has no preview")
        self.check_params(call)
        return await handler(call)

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        return None

    async def job(self, instance: str, job_id: str) -> JobState:
        raise ProviderError(ErrorCode.NOT_FOUND, f"{self.id} has no job {job_id!r}")

    async def health(self) -> Health:
        return Health(ok=True)

    async def exchange(self, request: Exchange) -> BoundAccount:
        """By default an OAuth access token (or the operator's API key) is what calls need."""
        if request.kind == "oauth" and "access_token" in request.token:
            expires = request.token.get("expires_at")
            return BoundAccount(
                credentials={"accessToken": str(request.token["access_token"])},
                expires_at_ms=int(float(expires) * 1000) if expires is not None else None,
            )
        if request.kind == "apikey" and request.api_key:
            return BoundAccount(credentials={"apiKey": request.api_key})
        raise ProviderError(
            ErrorCode.INVALID_ARGUMENT, f"{self.id} cannot bind an account by {request.kind}"
        )


def manifest_at(root: Path) -> Manifest:
    """The manifest of a package directory (for an in-tree package's own factory)."""
    return Manifest.model_validate(json.loads((root / MANIFEST).read_text()))
