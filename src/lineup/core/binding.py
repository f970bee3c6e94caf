"""What an approval is bound to, and what voids it (seed 003 §2.5, §5).

A person approves exactly what the card showed: this agent, this instance, these parameters
(their canonical digest), this version of the resource, until this time. The grant an
approval yields carries the same binding, and the execution must match it; a change to any
part voids the approval rather than stretching it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Binding:
    agent_id: str
    instance: str
    params_digest: str
    resource_version: str | None
    expires_at_ms: int


def broken(approved: Binding, now: Binding, now_ms: int) -> str | None:
    """Why ``now`` (the call as it stands) no longer matches what was ``approved``, in a
    sentence for a person; None when it still holds."""
    if now_ms >= approved.expires_at_ms:
        return "The approval expired."
    if now.agent_id != approved.agent_id:
        return "Another agent asks than the one that was approved."
    if now.instance != approved.instance:
        return "The target instance changed since it was approved."
    if now.params_digest != approved.params_digest:
        return "The parameters changed since they were approved."
    if now.resource_version != approved.resource_version:
        was = approved.resource_version or "none"
        is_now = now.resource_version or "none"
        return f"The resource changed since it was shown (version {was}, now {is_now})."
    return None
