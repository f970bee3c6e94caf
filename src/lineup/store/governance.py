"""Governance's projections and reads: projects and their members, capabilities' states,
policy rules, invocations, approvals, standing permissions, grants and executions.

Each table follows the facts of ``lineup.protocol.facts`` (``approval.requested`` …), so a replay
rebuilds it; the rules those facts obey are the hub's (``lineup.hub.governance``) and the
core's (``lineup.core``). The providers' credentials are here too, but sealed and outside the
log: a secret is never an event.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import (
    Insert,
    Table,
    Update,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.engine import Connection

from lineup.protocol import facts as f
from lineup.store import statements
from lineup.store.handlers import Handler
from lineup.store.handlers import on as _on
from lineup.store.records import _FromRow
from lineup.store.schema import (
    approvals,
    capability_states,
    executions,
    grants,
    invocations,
    policy_rules,
    project_members,
    projects,
    provider_credentials,
    standing_permissions,
)
from lineup.store.sealed import Keyring

if TYPE_CHECKING:
    from lineup.store.eventlog import StoredEvent


PENDING = "pending"


# --- records -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Project(_FromRow):
    id: str
    workspace_id: str
    name: str
    context: str | None
    working_directory: str | None
    created_by: str
    created_at: int
    updated_at: int


@dataclass(frozen=True)
class ProjectMember(_FromRow):
    project_id: str
    user_id: str
    workspace_id: str
    role: str
    created_at: int
    updated_at: int


@dataclass(frozen=True)
class PolicyRule(_FromRow):
    id: str
    workspace_id: str
    project_id: str | None
    capability: str
    instance: str | None
    roles: list[str] | None
    effect: str
    set_by: str
    created_at: int


@dataclass(frozen=True)
class CapabilityState(_FromRow):
    workspace_id: str
    capability: str
    enabled: bool
    reason: str | None
    updated_by: str
    updated_at: int


@dataclass(frozen=True)
class InvocationRecord(_FromRow):
    id: str
    workspace_id: str
    agent_id: str
    agent_invocation_id: str
    capability: str
    effect: str
    instance: str
    params: dict[str, Any]
    params_digest: str
    project_id: str | None
    conversation_id: str | None
    task_id: str | None
    on_behalf_of: str | None
    status: str
    approval_id: str | None
    execution_id: str | None
    created_at: int
    updated_at: int
    sequence: int


@dataclass(frozen=True)
class ApprovalRecord(_FromRow):
    id: str
    workspace_id: str
    project_id: str
    invocation_id: str
    agent_id: str
    capability: str
    instance: str
    params: dict[str, Any]
    params_digest: str
    resource_version: str | None
    summary: str
    impact: str
    draft: dict[str, Any] | None
    conversation_id: str | None
    task_id: str | None
    requested_for: str | None
    assignee: str | None
    status: str
    decided_by: str | None
    decided_by_name: str | None
    decided_at: int | None
    reason: str | None
    permission_id: str | None
    expires_at: int
    created_at: int
    updated_at: int
    sequence: int


@dataclass(frozen=True)
class StandingPermission(_FromRow):
    id: str
    workspace_id: str
    project_id: str
    capability: str
    instance: str
    bounds: dict[str, Any]
    expires_at: int | None
    max_calls: int | None
    calls_used: int
    granted_by: str
    approval_id: str | None
    revoked_at: int | None
    revoked_by: str | None
    created_at: int


@dataclass(frozen=True)
class GrantRecord(_FromRow):
    id: str
    workspace_id: str
    invocation_id: str
    approval_id: str | None
    permission_id: str | None
    params_digest: str
    instance: str
    resource_version: str | None
    expires_at: int
    used_by: str | None
    created_at: int


@dataclass(frozen=True)
class ExecutionRecord(_FromRow):
    id: str
    workspace_id: str
    invocation_id: str
    agent_id: str
    capability: str
    instance: str
    params_digest: str
    idempotency_key: str
    grant_id: str | None
    expected_version: str | None
    status: str
    job_id: str | None
    attempts: int
    output: dict[str, Any] | None
    error: dict[str, Any] | None
    receipt: dict[str, Any] | None
    started_at: int
    updated_at: int
    finished_at: int | None


# --- projections -------------------------------------------------------------------------


# Projections run in the writer's transaction, many per invocation: their statements are
# built once per table and set of columns and run prebuilt (``statements.run``).


@functools.cache
def _insert_into(table: Table) -> Insert:
    return insert(table)


@functools.cache
def _update_by(table: Table, key: tuple[str, ...], names: tuple[str, ...]) -> Update:
    return (
        update(table)
        .where(*(table.c[k] == bindparam(f"where_{k}") for k in key))
        .values({name: bindparam(name) for name in names})
    )


def _insert(conn: Connection, table: Table, **values: Any) -> None:
    statements.run(conn, _insert_into(table), values)


def _set(conn: Connection, table: Table, key: Mapping[str, Any], values: Mapping[str, Any]) -> int:
    """``UPDATE table SET values WHERE key``: how many rows matched."""
    params = {f"where_{k}": v for k, v in key.items()}
    params.update(values)
    return statements.run(
        conn, _update_by(table, tuple(key), tuple(sorted(values))), params
    ).rowcount


def _project_created(conn: Connection, event: StoredEvent, fact: f.ProjectCreatedPayload) -> None:
    _insert(
        conn,
        projects,
        id=fact.project_id,
        workspace_id=event.workspace_id,
        name=fact.name,
        context=fact.context,
        working_directory=fact.working_directory,
        created_by=fact.created_by,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
    )
    _set_member(conn, event, fact.project_id, fact.created_by, "owner")


def _project_updated(conn: Connection, event: StoredEvent, fact: f.ProjectUpdatedPayload) -> None:
    values: dict[str, Any] = {"updated_at": event.recorded_at}
    for name in ("name", "context", "working_directory"):
        value = getattr(fact, name)
        if value is not None:
            values[name] = value
    conn.execute(
        update(projects)
        .where(projects.c.workspace_id == event.workspace_id, projects.c.id == fact.project_id)
        .values(**values)
    )


def _set_member(
    conn: Connection, event: StoredEvent, project_id: str, user: str, role: str
) -> None:
    key = and_(project_members.c.project_id == project_id, project_members.c.user_id == user)
    changed = conn.execute(
        update(project_members).where(key).values(role=role, updated_at=event.recorded_at)
    ).rowcount
    if not changed:
        _insert(
            conn,
            project_members,
            project_id=project_id,
            user_id=user,
            workspace_id=event.workspace_id,
            role=role,
            created_at=event.recorded_at,
            updated_at=event.recorded_at,
        )


def _member_set(conn: Connection, event: StoredEvent, fact: f.ProjectMemberSetPayload) -> None:
    _set_member(conn, event, fact.project_id, fact.user_id, fact.role)


def _member_removed(
    conn: Connection, event: StoredEvent, fact: f.ProjectMemberRemovedPayload
) -> None:
    conn.execute(
        delete(project_members).where(
            project_members.c.project_id == fact.project_id,
            project_members.c.user_id == fact.user_id,
        )
    )


def _capability_state(
    conn: Connection, event: StoredEvent, fact: f.CapabilityStateChangedPayload
) -> None:
    key = and_(
        capability_states.c.workspace_id == event.workspace_id,
        capability_states.c.capability == fact.capability,
    )
    values = {
        "enabled": fact.enabled,
        "reason": fact.reason,
        "updated_by": event.actor,
        "updated_at": event.recorded_at,
    }
    if not conn.execute(update(capability_states).where(key).values(**values)).rowcount:
        _insert(
            conn,
            capability_states,
            workspace_id=event.workspace_id,
            capability=fact.capability,
            **values,
        )


def _rule_set(conn: Connection, event: StoredEvent, fact: f.PolicyRuleSetPayload) -> None:
    _insert(
        conn,
        policy_rules,
        id=fact.rule_id,
        workspace_id=event.workspace_id,
        project_id=fact.project_id,
        capability=fact.capability,
        instance=fact.instance,
        roles=fact.roles,
        effect=fact.effect,
        set_by=fact.set_by or event.actor,
        created_at=event.recorded_at,
    )


def _rule_removed(conn: Connection, event: StoredEvent, fact: f.PolicyRuleRemovedPayload) -> None:
    conn.execute(
        delete(policy_rules).where(
            policy_rules.c.workspace_id == event.workspace_id, policy_rules.c.id == fact.rule_id
        )
    )


def _invoked(conn: Connection, event: StoredEvent, fact: f.CapabilityInvokedPayload) -> None:
    _insert(
        conn,
        invocations,
        id=fact.invocation_id,
        workspace_id=event.workspace_id,
        agent_id=fact.agent_id,
        agent_invocation_id=fact.agent_invocation_id,
        capability=fact.capability,
        effect=fact.effect,
        instance=fact.instance,
        params=fact.params,
        params_digest=fact.params_digest,
        project_id=fact.project_id,
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        on_behalf_of=fact.on_behalf_of,
        status="received",
        approval_id=None,
        execution_id=None,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        sequence=event.sequence,
    )


def _invocation(conn: Connection, event: StoredEvent, invocation_id: str, **values: Any) -> None:
    conn.execute(
        update(invocations)
        .where(invocations.c.workspace_id == event.workspace_id, invocations.c.id == invocation_id)
        .values(updated_at=event.recorded_at, **values)
    )


def _approval_requested(
    conn: Connection, event: StoredEvent, fact: f.ApprovalRequestedPayload
) -> None:
    _insert(
        conn,
        approvals,
        id=fact.approval_id,
        workspace_id=event.workspace_id,
        project_id=fact.project_id,
        invocation_id=fact.invocation_id,
        agent_id=fact.agent_id,
        capability=fact.capability,
        instance=fact.instance,
        params=fact.params,
        params_digest=fact.params_digest,
        resource_version=fact.resource_version,
        summary=fact.summary,
        impact=fact.impact,
        draft=fact.draft,
        conversation_id=event.conversation_id,
        task_id=event.task_id,
        requested_for=fact.requested_for,
        assignee=None,
        status=PENDING,
        decided_by=None,
        decided_by_name=None,
        decided_at=None,
        reason=None,
        permission_id=None,
        expires_at=fact.expires_at,
        created_at=event.recorded_at,
        updated_at=event.recorded_at,
        sequence=event.sequence,
    )
    _invocation(
        conn, event, fact.invocation_id, status="waiting_for_approval", approval_id=fact.approval_id
    )


def _handed_over(conn: Connection, event: StoredEvent, fact: f.ApprovalHandedOverPayload) -> None:
    conn.execute(
        update(approvals)
        .where(approvals.c.workspace_id == event.workspace_id, approvals.c.id == fact.approval_id)
        .values(assignee=fact.assignee, updated_at=event.recorded_at)
    )


def _approval_decided(conn: Connection, event: StoredEvent, fact: f.ApprovalDecidedPayload) -> None:
    _set(
        conn,
        approvals,
        {"workspace_id": event.workspace_id, "id": fact.approval_id},
        {
            "status": fact.decision,
            "decided_by": fact.by,
            "decided_by_name": fact.by_name,
            "decided_at": event.recorded_at,
            "reason": fact.reason,
            "permission_id": fact.permission_id,
            "updated_at": event.recorded_at,
        },
    )
    if fact.decision != "approved":
        _invocation(conn, event, fact.invocation_id, status="rejected")


def _permission_granted(
    conn: Connection, event: StoredEvent, fact: f.PermissionGrantedPayload
) -> None:
    _insert(
        conn,
        standing_permissions,
        id=fact.permission_id,
        workspace_id=event.workspace_id,
        project_id=fact.project_id,
        capability=fact.capability,
        instance=fact.instance,
        bounds=fact.bounds,
        expires_at=fact.expires_at,
        max_calls=fact.max_calls,
        calls_used=0,
        granted_by=fact.granted_by,
        approval_id=fact.approval_id,
        revoked_at=None,
        revoked_by=None,
        created_at=event.recorded_at,
    )


def _permission_revoked(
    conn: Connection, event: StoredEvent, fact: f.PermissionRevokedPayload
) -> None:
    conn.execute(
        update(standing_permissions)
        .where(
            standing_permissions.c.workspace_id == event.workspace_id,
            standing_permissions.c.id == fact.permission_id,
            standing_permissions.c.revoked_at.is_(None),
        )
        .values(revoked_at=event.recorded_at, revoked_by=fact.by)
    )


def _grant_issued(conn: Connection, event: StoredEvent, fact: f.GrantIssuedPayload) -> None:
    _insert(
        conn,
        grants,
        id=fact.grant_id,
        workspace_id=event.workspace_id,
        invocation_id=fact.invocation_id,
        approval_id=fact.approval_id,
        permission_id=fact.permission_id,
        params_digest=fact.params_digest,
        instance=fact.instance,
        resource_version=fact.resource_version,
        expires_at=fact.expires_at,
        used_by=None,
        created_at=event.recorded_at,
    )
    if fact.permission_id is not None:
        conn.execute(
            update(standing_permissions)
            .where(
                standing_permissions.c.workspace_id == event.workspace_id,
                standing_permissions.c.id == fact.permission_id,
            )
            .values(calls_used=standing_permissions.c.calls_used + 1)
        )


def _execution_started(
    conn: Connection, event: StoredEvent, fact: f.ExecutionStartedPayload
) -> None:
    _insert(
        conn,
        executions,
        id=fact.execution_id,
        workspace_id=event.workspace_id,
        invocation_id=fact.invocation_id,
        agent_id=fact.target_agent_id,
        capability=fact.capability,
        instance=fact.instance,
        params_digest=fact.params_digest,
        idempotency_key=fact.idempotency_key,
        grant_id=fact.grant_id,
        expected_version=fact.expected_version,
        status="started",
        job_id=None,
        attempts=0,
        output=None,
        error=None,
        receipt=None,
        started_at=event.recorded_at,
        updated_at=event.recorded_at,
        finished_at=None,
    )
    if fact.grant_id is not None:
        key = {"workspace_id": event.workspace_id, "id": fact.grant_id}
        _set(conn, grants, key, {"used_by": fact.execution_id})
    _invocation(conn, event, fact.invocation_id, status="running", execution_id=fact.execution_id)


def _execution(conn: Connection, event: StoredEvent, execution_id: str, **values: Any) -> None:
    key = {"workspace_id": event.workspace_id, "id": execution_id}
    _set(conn, executions, key, {"updated_at": event.recorded_at, **values})


def _execution_attempted(
    conn: Connection, event: StoredEvent, fact: f.ExecutionAttemptedPayload
) -> None:
    _execution(conn, event, fact.execution_id, attempts=fact.attempt)


def _execution_accepted(
    conn: Connection, event: StoredEvent, fact: f.ExecutionAcceptedPayload
) -> None:
    _execution(conn, event, fact.execution_id, status="accepted", job_id=fact.job_id)
    _invocation(conn, event, fact.invocation_id, status="accepted")


def _execution_finished(
    conn: Connection, event: StoredEvent, fact: f.ExecutionFinishedPayload
) -> None:
    values: dict[str, Any] = {
        "status": fact.status,
        "output": fact.output,
        "error": fact.error,
        "finished_at": event.recorded_at,
    }
    if fact.receipt is not None:
        values["receipt"] = fact.receipt
    _execution(conn, event, fact.execution_id, **values)
    _invocation(conn, event, fact.invocation_id, status=fact.status)


HANDLERS: Mapping[str, Handler] = dict(
    [
        _on(f.ProjectCreatedPayload, _project_created),
        _on(f.ProjectUpdatedPayload, _project_updated),
        _on(f.ProjectMemberSetPayload, _member_set),
        _on(f.ProjectMemberRemovedPayload, _member_removed),
        _on(f.CapabilityStateChangedPayload, _capability_state),
        _on(f.PolicyRuleSetPayload, _rule_set),
        _on(f.PolicyRuleRemovedPayload, _rule_removed),
        _on(f.CapabilityInvokedPayload, _invoked),
        _on(f.ApprovalRequestedPayload, _approval_requested),
        _on(f.ApprovalHandedOverPayload, _handed_over),
        _on(f.ApprovalDecidedPayload, _approval_decided),
        _on(f.PermissionGrantedPayload, _permission_granted),
        _on(f.PermissionRevokedPayload, _permission_revoked),
        _on(f.GrantIssuedPayload, _grant_issued),
        _on(f.ExecutionStartedPayload, _execution_started),
        _on(f.ExecutionAttemptedPayload, _execution_attempted),
        _on(f.ExecutionAcceptedPayload, _execution_accepted),
        _on(f.ExecutionFinishedPayload, _execution_finished),
    ]
)


# --- reads -------------------------------------------------------------------------------


def _one(conn: Connection, stmt: Any, cls: type[Any]) -> Any:
    row = conn.execute(stmt).first()
    return None if row is None else cls.from_row(row)


def get_project(conn: Connection, workspace_id: str, project_id: str) -> Project | None:
    stmt = select(projects).where(
        projects.c.workspace_id == workspace_id, projects.c.id == project_id
    )
    return cast(Project | None, _one(conn, stmt, Project))


def list_projects(conn: Connection, workspace_id: str) -> list[Project]:
    stmt = (
        select(projects)
        .where(projects.c.workspace_id == workspace_id)
        .order_by(projects.c.created_at, projects.c.id)
    )
    return [Project.from_row(r) for r in conn.execute(stmt)]


_PROJECT_ROLE = select(project_members.c.role).where(
    project_members.c.project_id == bindparam("project_id"),
    project_members.c.user_id == bindparam("user_id"),
)


def project_role(conn: Connection, project_id: str, user_id: str) -> str | None:
    role = conn.execute(_PROJECT_ROLE, {"project_id": project_id, "user_id": user_id}).scalar()
    return None if role is None else str(role)


def list_project_members(conn: Connection, project_id: str) -> list[ProjectMember]:
    stmt = (
        select(project_members)
        .where(project_members.c.project_id == project_id)
        .order_by(project_members.c.created_at, project_members.c.user_id)
    )
    return [ProjectMember.from_row(r) for r in conn.execute(stmt)]


def user_projects(conn: Connection, workspace_id: str, user_id: str) -> dict[str, str]:
    """The projects a user is a member of, with their role."""
    stmt = select(project_members.c.project_id, project_members.c.role).where(
        project_members.c.workspace_id == workspace_id, project_members.c.user_id == user_id
    )
    return {str(r.project_id): str(r.role) for r in conn.execute(stmt)}


def disabled_capabilities(conn: Connection, workspace_id: str) -> dict[str, CapabilityState]:
    stmt = select(capability_states).where(
        capability_states.c.workspace_id == workspace_id, capability_states.c.enabled.is_(False)
    )
    return {str(r.capability): CapabilityState.from_row(r) for r in conn.execute(stmt)}


def list_rules(conn: Connection, workspace_id: str) -> list[PolicyRule]:
    stmt = (
        select(policy_rules)
        .where(policy_rules.c.workspace_id == workspace_id)
        .order_by(policy_rules.c.created_at, policy_rules.c.id)
    )
    return [PolicyRule.from_row(r) for r in conn.execute(stmt)]


def get_rule(conn: Connection, workspace_id: str, rule_id: str) -> PolicyRule | None:
    stmt = select(policy_rules).where(
        policy_rules.c.workspace_id == workspace_id, policy_rules.c.id == rule_id
    )
    return cast(PolicyRule | None, _one(conn, stmt, PolicyRule))


def _by_id(table: Table) -> Any:
    return select(table).where(
        table.c.workspace_id == bindparam("workspace_id"), table.c.id == bindparam("id")
    )


_GET_INVOCATION = _by_id(invocations)
_GET_EXECUTION = _by_id(executions)
_GET_APPROVAL = _by_id(approvals)


def _found(conn: Connection, stmt: Any, cls: type[Any], workspace_id: str, id_: str) -> Any:
    row = conn.execute(stmt, {"workspace_id": workspace_id, "id": id_}).first()
    return None if row is None else cls.from_row(row)


def get_invocation(
    conn: Connection, workspace_id: str, invocation_id: str
) -> InvocationRecord | None:
    found = _found(conn, _GET_INVOCATION, InvocationRecord, workspace_id, invocation_id)
    return cast(InvocationRecord | None, found)


def get_approval(conn: Connection, workspace_id: str, approval_id: str) -> ApprovalRecord | None:
    found = _found(conn, _GET_APPROVAL, ApprovalRecord, workspace_id, approval_id)
    return cast(ApprovalRecord | None, found)


def list_approvals(
    conn: Connection,
    workspace_id: str,
    *,
    statuses: Sequence[str] | None = None,
    project_ids: Sequence[str] | None = None,
    requested_for: str | None = None,
    conversation_id: str | None = None,
    limit: int = 200,
) -> list[ApprovalRecord]:
    """Newest first."""
    stmt = select(approvals).where(approvals.c.workspace_id == workspace_id)
    if statuses is not None:
        stmt = stmt.where(approvals.c.status.in_(list(statuses)))
    if project_ids is not None:
        stmt = stmt.where(approvals.c.project_id.in_(list(project_ids)))
    if requested_for is not None:
        stmt = stmt.where(approvals.c.requested_for == requested_for)
    if conversation_id is not None:
        stmt = stmt.where(approvals.c.conversation_id == conversation_id)
    stmt = stmt.order_by(approvals.c.sequence.desc()).limit(max(1, min(limit, 1000)))
    return [ApprovalRecord.from_row(r) for r in conn.execute(stmt)]


def due_approvals(conn: Connection, now_ms: int, limit: int = 500) -> list[ApprovalRecord]:
    """Pending approvals past their expiry, in every workspace (the monitor's pass)."""
    stmt = (
        select(approvals)
        .where(approvals.c.status == PENDING, approvals.c.expires_at <= now_ms)
        .order_by(approvals.c.expires_at)
        .limit(limit)
    )
    return [ApprovalRecord.from_row(r) for r in conn.execute(stmt)]


def get_permission(
    conn: Connection, workspace_id: str, permission_id: str
) -> StandingPermission | None:
    stmt = select(standing_permissions).where(
        standing_permissions.c.workspace_id == workspace_id,
        standing_permissions.c.id == permission_id,
    )
    return cast(StandingPermission | None, _one(conn, stmt, StandingPermission))


def list_permissions(
    conn: Connection,
    workspace_id: str,
    *,
    project_id: str | None = None,
    capability: str | None = None,
    instance: str | None = None,
    live_at: int | None = None,
) -> list[StandingPermission]:
    """Newest first; ``live_at`` keeps only those neither revoked, expired nor used up."""
    t = standing_permissions
    stmt = select(t).where(t.c.workspace_id == workspace_id)
    if project_id is not None:
        stmt = stmt.where(t.c.project_id == project_id)
    if capability is not None:
        stmt = stmt.where(t.c.capability == capability)
    if instance is not None:
        stmt = stmt.where(t.c.instance == instance)
    if live_at is not None:
        stmt = stmt.where(
            t.c.revoked_at.is_(None),
            or_(t.c.expires_at.is_(None), t.c.expires_at > live_at),
            or_(t.c.max_calls.is_(None), t.c.calls_used < t.c.max_calls),
        )
    stmt = stmt.order_by(t.c.created_at.desc(), t.c.id)
    return [StandingPermission.from_row(r) for r in conn.execute(stmt)]


def grant_for(conn: Connection, workspace_id: str, invocation_id: str) -> GrantRecord | None:
    stmt = select(grants).where(
        grants.c.workspace_id == workspace_id, grants.c.invocation_id == invocation_id
    )
    return cast(GrantRecord | None, _one(conn, stmt, GrantRecord))


def get_execution(conn: Connection, workspace_id: str, execution_id: str) -> ExecutionRecord | None:
    found = _found(conn, _GET_EXECUTION, ExecutionRecord, workspace_id, execution_id)
    return cast(ExecutionRecord | None, found)


def list_executions(
    conn: Connection,
    workspace_id: str,
    *,
    invocation_ids: Sequence[str] | None = None,
    limit: int = 200,
) -> list[ExecutionRecord]:
    stmt = select(executions).where(executions.c.workspace_id == workspace_id)
    if invocation_ids is not None:
        stmt = stmt.where(executions.c.invocation_id.in_(list(invocation_ids)))
    stmt = stmt.order_by(executions.c.started_at.desc(), executions.c.id).limit(
        max(1, min(limit, 1000))
    )
    return [ExecutionRecord.from_row(r) for r in conn.execute(stmt)]


def executions_with_invocations(
    conn: Connection, workspace_id: str, *, conversation_id: str | None = None, limit: int = 200
) -> list[tuple[ExecutionRecord, InvocationRecord]]:
    """Newest first, each with its invocation (who asked, where, with what)."""
    inv = invocations.alias("inv")
    stmt = (
        select(executions, *[c.label(f"inv_{c.name}") for c in inv.c])
        .join(
            inv,
            and_(
                inv.c.workspace_id == executions.c.workspace_id,
                inv.c.id == executions.c.invocation_id,
            ),
        )
        .where(executions.c.workspace_id == workspace_id)
    )
    if conversation_id is not None:
        stmt = stmt.where(inv.c.conversation_id == conversation_id)
    stmt = stmt.order_by(executions.c.started_at.desc(), executions.c.id).limit(
        max(1, min(limit, 1000))
    )
    out = []
    for row in conn.execute(stmt):
        data = row._mapping
        invocation = {c.name: data[f"inv_{c.name}"] for c in inv.c}
        out.append((ExecutionRecord.from_row(row), InvocationRecord.from_row(invocation)))
    return out


def execution_ids_of(
    conn: Connection, workspace_id: str, invocation_ids: Sequence[str]
) -> dict[str, str]:
    """Invocation → its execution, for those that have one."""
    if not invocation_ids:
        return {}
    stmt = select(executions.c.invocation_id, executions.c.id).where(
        executions.c.workspace_id == workspace_id,
        executions.c.invocation_id.in_(list(invocation_ids)),
    )
    return {str(r.invocation_id): str(r.id) for r in conn.execute(stmt)}


def unfinished_executions(conn: Connection, limit: int = 500) -> list[ExecutionRecord]:
    """Executions in every workspace that have not ended: after a crash, or async jobs."""
    stmt = (
        select(executions)
        .where(executions.c.status.in_(["started", "accepted"]))
        .order_by(executions.c.started_at)
        .limit(limit)
    )
    return [ExecutionRecord.from_row(r) for r in conn.execute(stmt)]


def invocation_of_agent(
    conn: Connection, workspace_id: str, agent_id: str, agent_invocation_id: str
) -> InvocationRecord | None:
    stmt = select(invocations).where(
        invocations.c.workspace_id == workspace_id,
        invocations.c.agent_id == agent_id,
        invocations.c.agent_invocation_id == agent_invocation_id,
    )
    return cast(InvocationRecord | None, _one(conn, stmt, InvocationRecord))


def count_invocations(conn: Connection, workspace_id: str) -> int:
    stmt = (
        select(func.count())
        .select_from(invocations)
        .where(invocations.c.workspace_id == workspace_id)
    )
    return int(conn.execute(stmt).scalar() or 0)


# --- the providers' credentials (sealed, not in the log) -----------------------------------


def credential_context(provider: str, instance: str) -> str:
    """What a credential is sealed for: a sealed value moved to another row does not open."""
    return f"provider-credential:{provider}:{instance}"


def reseal_credentials(conn: Connection, keyring: Keyring) -> int:
    """Seal again under the current key every credential sealed with an older one; raises
    ``UnreadableSecret`` if one opens with no key. How many changed."""
    changed = 0
    for provider, instance, sealed in all_credentials(conn):
        context = credential_context(provider, instance)
        if keyring.needs_resealing(sealed):
            plain = keyring.open(sealed, context)
            put_credential(conn, provider, instance, keyring.seal(plain, context), 0)
            changed += 1
        else:
            keyring.open(sealed, context)
    return changed


def put_credential(
    conn: Connection, provider: str, instance: str, sealed: str, now_ms: int
) -> None:
    key = and_(
        provider_credentials.c.provider == provider, provider_credentials.c.instance == instance
    )
    if not conn.execute(
        update(provider_credentials).where(key).values(sealed=sealed, updated_at=now_ms)
    ).rowcount:
        _insert(
            conn,
            provider_credentials,
            provider=provider,
            instance=instance,
            sealed=sealed,
            updated_at=now_ms,
        )


def get_credential(conn: Connection, provider: str, instance: str) -> str | None:
    stmt = select(provider_credentials.c.sealed).where(
        provider_credentials.c.provider == provider, provider_credentials.c.instance == instance
    )
    sealed = conn.execute(stmt).scalar()
    return None if sealed is None else str(sealed)


def all_credentials(conn: Connection) -> list[tuple[str, str, str]]:
    """(provider, instance, sealed) of every credential: for the secret keys' start check."""
    stmt = select(
        provider_credentials.c.provider,
        provider_credentials.c.instance,
        provider_credentials.c.sealed,
    )
    return [(str(r.provider), str(r.instance), str(r.sealed)) for r in conn.execute(stmt)]


# --- what belongs to a project (for who may see it) -----------------------------------------


@dataclass(frozen=True, slots=True)
class SightMaps:
    """What a person's sight of a workspace starts from (``hub.sight``)."""

    roles: dict[str, str]
    """Project → the person's role there."""
    conversations: dict[str, str]
    """Conversation → project, for the workspace's conversations that belong to one."""
    tasks: dict[str, str]
    """Task → project, for the tasks of those conversations."""


def sight_maps(conn: Connection, workspace_id: str, user_id: str) -> SightMaps:
    """The three in one statement: a sight is loaded for nearly every person's request, and
    on PostgreSQL each statement is a round trip."""
    from lineup.store.schema import conversations, tasks

    roles = select(
        literal("r").label("kind"),
        project_members.c.project_id.label("id"),
        project_members.c.role.label("value"),
    ).where(project_members.c.workspace_id == workspace_id, project_members.c.user_id == user_id)
    in_projects = select(
        literal("c").label("kind"), conversations.c.id, conversations.c.project_id
    ).where(conversations.c.workspace_id == workspace_id, conversations.c.project_id.is_not(None))
    their_tasks = (
        select(literal("t").label("kind"), tasks.c.id, conversations.c.project_id)
        .join(
            conversations,
            and_(
                conversations.c.workspace_id == tasks.c.workspace_id,
                conversations.c.id == tasks.c.conversation_id,
            ),
        )
        .where(tasks.c.workspace_id == workspace_id, conversations.c.project_id.is_not(None))
    )
    maps: dict[str, dict[str, str]] = {"r": {}, "c": {}, "t": {}}
    for kind, id_, value in conn.execute(union_all(roles, in_projects, their_tasks)):
        maps[kind][str(id_)] = str(value)
    return SightMaps(maps["r"], maps["c"], maps["t"])
