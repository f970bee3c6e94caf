"""People's decisions on confirm cards, and what they may change about governance.

A confirm card is a pending request like any other question (``lineup.domain.pending``): the
first decision wins, the same decision again changes nothing, a different one is a conflict
naming who decided first, and an expired card cannot be approved. Approving also re-checks
what the approval is bound to (``lineup.core.binding``): the capability must still be enabled
and the resource still at the version the card showed, or the approval is voided — recorded,
and told to the agent — rather than stretched to something the person never saw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from lineup.core import binding, permissions, policy
from lineup.domain import pending
from lineup.hub import audit
from lineup.hub.actors import Person
from lineup.hub.commands import derived_id
from lineup.hub.governance import bindings
from lineup.hub.governance import invoke as core_invoke
from lineup.hub.recorder import Writing
from lineup.hub.scoped_settings import standing_limits
from lineup.protocol import facts
from lineup.protocol.errors import Conflict, Forbidden, InvalidArgument, NotFound, Unauthenticated
from lineup.protocol.ids import new_id
from lineup.protocol.times import format_timestamp, ms_to_datetime
from lineup.store import Reader
from lineup.store import governance as gov_store
from lineup.store.governance import ApprovalRecord

if TYPE_CHECKING:
    from lineup.hub.state import HubState

Decision = Literal["approve", "reject"]
MAX_STANDING_MINUTES = 7 * 24 * 60
MAX_STANDING_CALLS = 10_000


@dataclass(frozen=True, slots=True)
class StandingRequest:
    """ "Yes, and don't ask again for this": for ``minutes`` and/or ``calls``, within
    ``bounds`` (see :mod:`lineup.core.permissions`)."""

    minutes: int | None = None
    calls: int | None = None
    bounds: dict[str, Any] | None = None

    def checked(self) -> dict[str, Any]:
        if self.minutes is None and self.calls is None:
            raise InvalidArgument("A standing permission needs minutes, calls, or both.")
        if self.minutes is not None and not 1 <= self.minutes <= MAX_STANDING_MINUTES:
            raise InvalidArgument(f"minutes is 1–{MAX_STANDING_MINUTES}.")
        if self.calls is not None and not 1 <= self.calls <= MAX_STANDING_CALLS:
            raise InvalidArgument(f"calls is 1–{MAX_STANDING_CALLS}.")
        try:
            return permissions.check_bounds(self.bounds or {})
        except (permissions.BoundsError, ValueError) as exc:
            raise InvalidArgument(str(exc), details={"field": "bounds"}) from None


def approval_in(read: Reader, workspace_id: str, approval_id: str) -> ApprovalRecord:
    row = gov_store.get_approval(read.connection, workspace_id, approval_id)
    if row is None:
        raise NotFound(
            f"No approval {approval_id!r} in this workspace.", details={"approvalId": approval_id}
        )
    return row


def role_in_project(read: Reader, person: Person, project_id: str) -> str | None:
    return gov_store.project_role(read.connection, project_id, person.user_id)


def may_decide(read: Reader, person: Person, approval: ApprovalRecord) -> str:
    role = role_in_project(read, person, approval.project_id)
    if role is None:
        raise Forbidden(
            "Only members of the approval's project can decide it.",
            details={"reason": "not_member", "projectId": approval.project_id},
        )
    if role not in policy.APPROVER_ROLES:
        raise Forbidden(
            "A viewer cannot decide approvals; ask a project owner or editor.",
            details={"reason": "role", "role": role},
        )
    return role


_STATUS = {
    "pending": pending.PendingStatus.OPEN,
    "approved": pending.PendingStatus.ANSWERED,
    "rejected": pending.PendingStatus.ANSWERED,
    "expired": pending.PendingStatus.EXPIRED,
    "voided": pending.PendingStatus.CANCELLED,
}


def _pending_of(row: ApprovalRecord) -> pending.Pending[str]:
    answered = row.status in ("approved", "rejected")
    return pending.Pending(
        status=_STATUS.get(row.status, pending.PendingStatus.CANCELLED),
        answer=("approve" if row.status == "approved" else "reject") if answered else None,
        answered_by=row.decided_by,
        answered_at_ms=row.decided_at,
        expires_at_ms=row.expires_at,
        cancel_reason=row.reason,
    )


def _decided_already(row: ApprovalRecord) -> Conflict:
    who = row.decided_by_name or row.decided_by or "someone"
    when = format_timestamp(ms_to_datetime(row.decided_at)) if row.decided_at else "earlier"
    return Conflict(
        f"This approval was already {row.status} by {who} at {when}; the first decision stands.",
        details={
            "approvalId": row.id,
            "status": row.status,
            "decidedBy": row.decided_by,
            "decidedByName": row.decided_by_name,
            "decidedAt": when,
        },
    )


def _ended(row: ApprovalRecord) -> Conflict:
    if row.status == "expired":
        message = "This approval expired before your decision; the agent was told."
    else:
        message = f"This approval was voided ({row.reason or 'what it was bound to changed'})."
    return Conflict(message, details={"approvalId": row.id, "status": row.status})


async def decide(
    hub: HubState,
    person: Person,
    approval_id: str,
    decision: Decision,
    *,
    reason: str | None = None,
    standing: StandingRequest | None = None,
    event_id: str | None = None,
) -> ApprovalRecord:
    ws = person.workspace_id
    gov = hub.governance
    row = await hub.store.read(lambda r: approval_in(r, ws, approval_id))
    await hub.store.read(lambda r: may_decide(r, person, row))
    bounds = standing.checked() if standing is not None and decision == "approve" else None
    if standing is not None and bounds is not None:
        limit = standing_limits(hub.settings, ws, row.project_id)
        await hub.store.read(lambda r: limit(r, standing.minutes, standing.calls))
    current_version = row.resource_version
    void_reason: str | None = None
    if decision == "approve" and row.status == "pending":
        void_reason = await _still_bound(hub, row)

    def job(w: Writing) -> tuple[ApprovalRecord, str | None]:
        now = approval_in(w.read, ws, approval_id)
        verdict = pending.answer(_pending_of(now), decision, by=person.actor, at_ms=w.now_ms)
        if isinstance(verdict, pending.Refused):
            if verdict.record_expiry:
                expire(w, now)
                return approval_in(w.read, ws, approval_id), "expired"
            raise _ended(now)
        if isinstance(verdict, pending.NoOp):
            return now, None
        if isinstance(verdict, pending.AnsweredFirst):
            raise _decided_already(now)
        if decision == "approve" and void_reason is not None:
            _void(w, now, void_reason, person)
            return approval_in(w.read, ws, approval_id), "voided"
        _record_decision(w, person, now, decision, reason, standing, bounds, current_version)
        return approval_in(w.read, ws, approval_id), None

    updated, refusal = await hub.recorder.run(job)
    if refusal == "expired":
        raise _ended(updated)
    if refusal == "voided":
        raise Conflict(
            f"The approval no longer holds: {void_reason} The agent was told; it can ask again.",
            details={"approvalId": approval_id, "status": "voided", "reason": void_reason},
        )
    if updated.status == "approved":
        execution = core_invoke.execution_id(ws, updated.invocation_id)
        gov.executor.start(ws, execution)
    return updated


async def _still_bound(hub: HubState, row: ApprovalRecord) -> str | None:
    """Why the approval would no longer hold if approved now, or None."""
    view = await hub.governance.view(row.workspace_id)
    if view.find(row.capability) is None:
        return f"{row.capability} is no longer on this hub."
    if not view.has(row.capability):
        return f"{row.capability.partition('.')[0]} was disabled in this workspace."
    disabled = await hub.store.read(
        lambda r: gov_store.disabled_capabilities(r.connection, row.workspace_id)
    )
    if row.capability in disabled:
        return f"{row.capability} was switched off."
    entry = view.get(row.capability)
    if not entry.spec.preview:
        return None
    try:
        who = bindings.OnBehalf(row.workspace_id, row.requested_for)
        draft = await core_invoke.draft_of(hub, entry, row.instance, row.params, who)
    except Unauthenticated as exc:  # the requester's account on the system, not the approver's
        system = f"{exc.details.get('provider')}/{exc.details.get('instance')}"
        return (
            f"The account of the person who asked is not bound on {system} any more; they "
            "bind it again in Settings → Accounts."
        )
    approved = binding.Binding(
        row.agent_id, row.instance, row.params_digest, row.resource_version, row.expires_at
    )
    now = binding.Binding(
        row.agent_id,
        row.instance,
        core_invoke.digest_of(row.params),
        draft.resource_version,
        row.expires_at,
    )
    return binding.broken(approved, now, hub.clock())


def _decided(
    w: Writing,
    row: ApprovalRecord,
    decision: Literal["approved", "rejected", "expired", "voided"],
    *,
    by: str | None,
    by_name: str | None,
    reason: str | None,
    permission_id: str | None = None,
) -> None:
    w.append(
        row.workspace_id,
        facts.ApprovalDecidedPayload(
            approval_id=row.id,
            invocation_id=row.invocation_id,
            agent_invocation_id=_agent_invocation(w, row),
            capability=row.capability,
            decision=decision,
            by=by,
            by_name=by_name,
            reason=reason,
            permission_id=permission_id,
            target_agent_id=row.agent_id,
        ),
        actor=by or "hub",
        conversation_id=row.conversation_id,
        task_id=row.task_id,
    )
    audit.record(
        w,
        "approval.decided",
        workspace_id=row.workspace_id,
        actor=by or "hub",
        subject=f"approval:{row.id}",
        data={
            "decision": decision,
            "reason": reason,
            "invocationId": row.invocation_id,
            "paramsDigest": row.params_digest,
            "resourceVersion": row.resource_version,
            "permissionId": permission_id,
        },
    )


def _agent_invocation(w: Writing, row: ApprovalRecord) -> str:
    inv = gov_store.get_invocation(w.read.connection, row.workspace_id, row.invocation_id)
    return inv.agent_invocation_id if inv is not None else row.invocation_id


def _record_decision(
    w: Writing,
    person: Person,
    row: ApprovalRecord,
    decision: Decision,
    reason: str | None,
    standing: StandingRequest | None,
    bounds: dict[str, Any] | None,
    resource_version: str | None,
) -> None:
    if decision == "reject":
        _decided(w, row, "rejected", by=person.actor, by_name=person.display_name, reason=reason)
        return
    permission_id = None
    if standing is not None and bounds is not None:
        permission_id = derived_id("prm", row.workspace_id, row.id)
        expires = None if standing.minutes is None else w.now_ms + standing.minutes * 60_000
        w.append(
            row.workspace_id,
            facts.PermissionGrantedPayload(
                permission_id=permission_id,
                project_id=row.project_id,
                capability=row.capability,
                instance=row.instance,
                bounds=bounds,
                expires_at=expires,
                max_calls=standing.calls,
                granted_by=person.actor,
                approval_id=row.id,
            ),
            actor=person.actor,
        )
        audit.record(
            w,
            "permission.granted",
            workspace_id=row.workspace_id,
            actor=person.actor,
            subject=f"permission:{permission_id}",
            data={
                "projectId": row.project_id,
                "capability": row.capability,
                "instance": row.instance,
                "bounds": bounds,
                "expiresAt": expires,
                "maxCalls": standing.calls,
                "approvalId": row.id,
            },
        )
    _decided(
        w,
        row,
        "approved",
        by=person.actor,
        by_name=person.display_name,
        reason=reason,
        permission_id=permission_id,
    )
    where = {"conversation_id": row.conversation_id, "task_id": row.task_id}
    grant = core_invoke.issue_grant(
        w,
        row.workspace_id,
        person.actor,
        row.invocation_id,
        row.params_digest,
        row.instance,
        resource_version,
        permission_id=None,
        approval_id=row.id,
        where=where,
    )
    core_invoke.start_execution(
        w,
        row.workspace_id,
        row.invocation_id,
        _agent_invocation(w, row),
        row.agent_id,
        row.capability,
        row.instance,
        row.params_digest,
        grant_id=grant,
        expected_version=resource_version,
        where=where,
    )


def _void(w: Writing, row: ApprovalRecord, why: str, person: Person | None) -> None:
    _decided(
        w,
        row,
        "voided",
        by=None if person is None else person.actor,
        by_name=None if person is None else person.display_name,
        reason=why,
    )


def expire(w: Writing, row: ApprovalRecord) -> None:
    _decided(w, row, "expired", by=None, by_name=None, reason="Nobody decided in time.")


def expire_if_due(w: Writing, workspace_id: str, approval_id: str) -> bool:
    row = gov_store.get_approval(w.read.connection, workspace_id, approval_id)
    if row is None or not isinstance(pending.expire(_pending_of(row), w.now_ms), pending.Record):
        return False
    expire(w, row)
    return True


async def hand_over(
    hub: HubState, person: Person, approval_id: str, user_id: str
) -> ApprovalRecord:
    ws = person.workspace_id

    def job(w: Writing) -> ApprovalRecord:
        row = approval_in(w.read, ws, approval_id)
        may_decide(w.read, person, row)
        if row.status != "pending":
            raise _ended(row) if row.status in ("expired", "voided") else _decided_already(row)
        role = gov_store.project_role(w.read.connection, row.project_id, user_id)
        if role not in policy.APPROVER_ROLES:
            raise InvalidArgument(
                "Hand an approval over to an owner or editor of its project.",
                details={"userId": user_id, "role": role},
            )
        if row.assignee == user_id:
            return row
        w.append(
            ws,
            facts.ApprovalHandedOverPayload(approval_id=row.id, assignee=user_id, by=person.actor),
            actor=person.actor,
            conversation_id=row.conversation_id,
            task_id=row.task_id,
        )
        audit.record(
            w,
            "approval.handed_over",
            workspace_id=ws,
            actor=person.actor,
            subject=f"approval:{row.id}",
            data={"assignee": user_id},
        )
        return approval_in(w.read, ws, approval_id)

    return await hub.recorder.run(job)


async def revoke_permission(
    hub: HubState, person: Person, permission_id: str, reason: str | None = None
) -> gov_store.StandingPermission:
    ws = person.workspace_id

    def job(w: Writing) -> gov_store.StandingPermission:
        row = gov_store.get_permission(w.read.connection, ws, permission_id)
        if row is None:
            raise NotFound(f"No standing permission {permission_id!r} in this workspace.")
        role = gov_store.project_role(w.read.connection, row.project_id, person.user_id)
        if role not in policy.APPROVER_ROLES and person.role != "owner":
            raise Forbidden("Only the project's owners and editors can revoke its permissions.")
        if row.revoked_at is None:
            w.append(
                ws,
                facts.PermissionRevokedPayload(
                    permission_id=row.id, by=person.actor, reason=reason
                ),
                actor=person.actor,
            )
            audit.record(
                w,
                "permission.revoked",
                workspace_id=ws,
                actor=person.actor,
                subject=f"permission:{row.id}",
                data={"reason": reason},
            )
        found = gov_store.get_permission(w.read.connection, ws, permission_id)
        assert found is not None
        return found

    return await hub.recorder.run(job)


# --- policy and the catalogue's switches -----------------------------------------------


def _may_set_rules(w: Writing, person: Person, project_id: str | None) -> None:
    if project_id is None:
        if person.role != "owner":
            raise Forbidden("Only a workspace owner can set workspace-wide rules.")
        return
    if gov_store.get_project(w.read.connection, person.workspace_id, project_id) is None:
        raise NotFound(f"No project {project_id!r} in this workspace.")
    role = gov_store.project_role(w.read.connection, project_id, person.user_id)
    if role != "owner" and person.role != "owner":
        raise Forbidden("Only the project's owners can set its rules.")


async def set_rule(
    hub: HubState,
    person: Person,
    *,
    capability: str,
    effect: Literal["allow", "deny"],
    project_id: str | None,
    instance: str | None,
    roles: list[str] | None,
    event_id: str | None = None,
) -> gov_store.PolicyRule:
    if not policy.valid_pattern(capability):
        raise InvalidArgument(
            "A rule's capability is an id, a prefix ending in .*, or *.",
            details={"capability": capability},
        )
    for role in roles or ():
        if role not in policy.ROLES:
            raise InvalidArgument(f"Roles are {', '.join(policy.ROLES)}.", details={"role": role})
    ws = person.workspace_id
    rule_id = derived_id("rule", ws, person.actor, event_id) if event_id else new_id("rule")

    def job(w: Writing) -> gov_store.PolicyRule:
        _may_set_rules(w, person, project_id)
        existing = gov_store.get_rule(w.read.connection, ws, rule_id)
        if existing is not None:
            return existing
        w.append(
            ws,
            facts.PolicyRuleSetPayload(
                rule_id=rule_id,
                capability=capability,
                effect=effect,
                project_id=project_id,
                instance=instance,
                roles=roles,
                set_by=person.actor,
            ),
            actor=person.actor,
        )
        audit.record(
            w,
            "policy.rule_set",
            workspace_id=ws,
            actor=person.actor,
            subject=f"rule:{rule_id}",
            data={
                "capability": capability,
                "effect": effect,
                "projectId": project_id,
                "instance": instance,
                "roles": roles,
            },
        )
        found = gov_store.get_rule(w.read.connection, ws, rule_id)
        assert found is not None
        return found

    return await hub.recorder.run(job)


async def remove_rule(hub: HubState, person: Person, rule_id: str) -> None:
    ws = person.workspace_id

    def job(w: Writing) -> None:
        rule = gov_store.get_rule(w.read.connection, ws, rule_id)
        if rule is None:
            raise NotFound(f"No policy rule {rule_id!r} in this workspace.")
        _may_set_rules(w, person, rule.project_id)
        w.append(
            ws,
            facts.PolicyRuleRemovedPayload(rule_id=rule_id, removed_by=person.actor),
            actor=person.actor,
        )
        audit.record(
            w,
            "policy.rule_removed",
            workspace_id=ws,
            actor=person.actor,
            subject=f"rule:{rule_id}",
            data={"capability": rule.capability, "effect": rule.effect},
        )

    await hub.recorder.run(job)


async def set_capability_enabled(
    hub: HubState, person: Person, capability: str, enabled: bool, reason: str | None
) -> None:
    if person.role != "owner":
        raise Forbidden("Only a workspace owner can switch capabilities on or off.")
    ws = person.workspace_id
    if (await hub.governance.view(ws)).find(capability) is None:
        raise NotFound(
            f"No capability {capability!r} on this hub.", details={"capability": capability}
        )

    def job(w: Writing) -> None:
        disabled = gov_store.disabled_capabilities(w.read.connection, ws)
        if (capability not in disabled) == enabled:
            return
        w.append(
            ws,
            facts.CapabilityStateChangedPayload(
                capability=capability, enabled=enabled, reason=reason
            ),
            actor=person.actor,
        )
        audit.record(
            w,
            "capability.enabled" if enabled else "capability.disabled",
            workspace_id=ws,
            actor=person.actor,
            subject=f"capability:{capability}",
            data={"reason": reason},
        )

    await hub.recorder.run(job)
