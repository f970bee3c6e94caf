"""Governed capabilities on the wire (seed 003 §1, §5): what an agent may ask a provider to
do through the hub's core, how it asks, and what it hears back.

A capability is named ``<provider>.<name>`` (``scheduling.schedule.publish``) and has an effect
(``read`` runs at once when policy allows it; ``write`` goes through a confirm card, a person's
approval and a one-time grant), a mode (``sync`` answers in the call; ``async`` answers
``accepted`` with a job the hub follows to its end) and JSON Schemas for its input and output.

An agent sends ``capability.list`` (a query, answered with a ``capability.list`` frame of what
policy grants it there) and ``capability.invoke``; the hub answers each invoke with an ack and
then, on the downlink, ``capability.result`` frames: ``waiting_for_approval`` or ``accepted``
while it is not over, then exactly one terminal status.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field

from lineup.protocol._model import WireModel
from lineup.protocol.envelope import Identifier

CapabilityId = Annotated[
    str, Field(min_length=3, max_length=100, pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
]
InstanceName = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:\-]+$")]


class Effect(StrEnum):
    READ = "read"
    WRITE = "write"


class Mode(StrEnum):
    SYNC = "sync"
    ASYNC = "async"


class CapabilitySpec(WireModel):
    """One entry of the catalogue, as a provider describes it."""

    id: CapabilityId
    provider: Annotated[str, Field(min_length=1, max_length=64)]
    effect: Effect
    mode: Mode = Mode.SYNC
    description: Annotated[str, Field(max_length=2000)]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    preview: bool = False
    """A write with a preview shows the provider's draft (impact, summary, resource version)
    on its confirm card; one without shows the parameters alone."""
    idempotent_replay: bool = False
    """The provider applies a repeated idempotency key once and answers with the first result,
    so a call that timed out may be retried. Without it a timed-out call whose receipt cannot
    be found ends ``unknown_result``."""
    timeout_s: Annotated[float, Field(gt=0, le=600)] = 30.0
    """How long one provider call may take before the core stops waiting for it."""
    instances: list[str] = Field(default_factory=list)
    """The instances of the provider's system the capability reaches (a plant, a company)."""


class CapabilityListQuery(WireModel):
    """``capability.list`` from an agent: what may I call here (the envelope's conversation
    or task names where)?"""


class CapabilityListing(WireModel):
    """``capability.list`` from the hub: the capabilities policy grants the agent there."""

    capabilities: list[CapabilitySpec]
    project_id: Identifier | None = None


class CapabilityInvoke(WireModel):
    """``capability.invoke``: call a capability on one instance of its provider's system.

    ``invocationId`` is the agent's, unique per agent: sending the same invoke again (same id,
    same content) is a resend and never runs twice; the same id with other content is a
    ``conflict``."""

    invocation_id: Annotated[str, Field(min_length=1, max_length=128)]
    capability: CapabilityId
    instance: InstanceName | None = None
    """Which instance; may be left out when the provider has exactly one."""
    params: dict[str, Any] = Field(default_factory=dict)


class InvocationStatus(StrEnum):
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    ACCEPTED = "accepted"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REJECTED = "rejected"
    UNKNOWN_RESULT = "unknown_result"


TERMINAL_STATUSES = frozenset(
    {
        InvocationStatus.SUCCEEDED,
        InvocationStatus.FAILED,
        InvocationStatus.REJECTED,
        InvocationStatus.UNKNOWN_RESULT,
    }
)


class InvocationError(WireModel):
    code: str
    """A code of the error taxonomy."""
    message: str
    retryable: bool = False


class CapabilityResult(WireModel):
    """``capability.result`` on the agent's downlink: where its invocation is.

    ``waiting_for_approval`` (a confirm card is in front of a person: the agent waits, it has
    not failed) and ``accepted`` (an async job runs) come before one terminal status:
    ``succeeded`` with ``output``; ``failed`` or ``rejected`` with ``error``; or
    ``unknown_result``: the call may or may not have taken effect, and the hub could not find
    out."""

    invocation_id: str
    capability: str
    status: InvocationStatus
    execution_id: str | None = None
    approval_id: str | None = None
    output: dict[str, Any] | None = None
    error: InvocationError | None = None
    receipt: dict[str, Any] | None = None
