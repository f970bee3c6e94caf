"""The interface every provider implements, and what passes through it (seed 003 §5).

The core calls a provider only through these methods, always with an execution id and an
idempotency key already persisted, and with the credentials it holds for that system injected
per call (``Invocation.credentials``): a provider stores none of them. Failures are raised as
:class:`ProviderError` with a code of the taxonomy; anything else a provider raises is an
``unknown_result`` to the core, because it cannot know whether the effect happened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import ErrorCode


class ProviderError(Exception):
    """A provider's refusal or failure, in the taxonomy's terms."""

    def __init__(
        self, code: ErrorCode, message: str, *, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = dict(details or {})


@dataclass(frozen=True, slots=True)
class Invocation:
    """One call of a capability on one instance of a provider's system."""

    capability: str
    instance: str
    params: Mapping[str, Any]
    execution_id: str = ""
    idempotency_key: str = ""
    """Unique per logical execution; a provider that declares ``idempotent_replay`` applies a
    key once and answers a repeat with the first result."""
    expected_version: str | None = None
    """For a write: the resource version the person approved; a provider refuses a call whose
    resource has moved on with ``conflict``."""
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class Draft:
    """What a write would do, for its confirm card (seed 003 §2.5)."""

    summary: str
    """The parameters in a person's words."""
    impact: str
    """What changes, and how much."""
    resource_version: str | None
    """The version of the target resource the draft was made against."""
    data: Mapping[str, Any] = field(default_factory=dict)
    """The draft itself (e.g. the schedule that would be published), for the card and views."""


@dataclass(frozen=True, slots=True)
class Completed:
    """The call is done: its output (fits the capability's output schema) and a receipt."""

    output: Mapping[str, Any]
    receipt: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Accepted:
    """An async capability took the call; the core follows ``job_id`` with :meth:`job`."""

    job_id: str
    receipt: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JobState:
    """Where an accepted job is: still ``running``, or ended with an output or an error."""

    status: Literal["running", "succeeded", "failed"]
    output: Mapping[str, Any] | None = None
    error: ProviderError | None = None
    receipt: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Receipt:
    """The provider's own record of an idempotency key it received: proof the call happened
    (with its outcome), or that it is still running as a job."""

    idempotency_key: str
    outcome: Completed | Accepted


@dataclass(frozen=True, slots=True)
class Health:
    ok: bool
    detail: str = ""
    checked_at_ms: int = 0


@runtime_checkable
class Provider(Protocol):
    """describe / invoke / health, plus preview (writes), receipt and job (seed 003 §5)."""

    @property
    def id(self) -> str: ...

    def describe(self) -> Sequence[CapabilitySpec]:
        """The provider's capabilities; read once at registration."""
        ...

    def instances(self) -> Sequence[str]:
        """The instances of the system this provider reaches (a plant, a company…)."""
        ...

    async def invoke(self, call: Invocation) -> Completed | Accepted: ...

    async def preview(self, call: Invocation) -> Draft:
        """The draft of a write, changing nothing."""
        ...

    async def receipt(self, instance: str, idempotency_key: str) -> Receipt | None:
        """What the provider knows of a key: asked after a timeout, before any retry."""
        ...

    async def job(self, instance: str, job_id: str) -> JobState: ...

    async def health(self) -> Health: ...


@dataclass(frozen=True, slots=True)
class Exchange:
    """What a person gave to bind their account on one instance (ADR-0012): for ``oauth`` the
    token response the hub's OAuth client obtained; for ``password-exchange`` a username and
    password, passed once and never kept; for ``apikey`` the operator's key."""

    kind: Literal["oauth", "password-exchange", "apikey"]
    instance: str
    token: Mapping[str, Any] = field(default_factory=dict, repr=False)
    username: str = ""
    password: str = field(default="", repr=False)
    api_key: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class BoundAccount:
    """What the hub keeps (sealed) from an exchange, to inject into that person's calls."""

    credentials: Mapping[str, str] = field(repr=False)
    account: str = ""
    """Who the system says the person is, for Settings (``ana@plant-1``)."""
    expires_at_ms: int | None = None


@runtime_checkable
class Exchanging(Protocol):
    """A provider whose system needs a person's own account: it turns what the person gave
    into the credentials its calls need (a provider answers ``unauthenticated`` when they no
    longer work: the hub then marks the binding expired)."""

    async def exchange(self, request: Exchange) -> BoundAccount: ...
