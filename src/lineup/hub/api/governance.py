"""Governance over HTTP: projects and their members, the capability catalogue and its
switches, policy rules and standing permissions, the approval center, and run records.

Who sees what: a person sees the projects they are a member of (a workspace owner sees all),
the approvals and executions of those projects, and those of their own personal
conversations. Deciding an approval takes a project owner or editor; a viewer can look.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field

from lineup.hub import audit, projects
from lineup.hub.actors import Person
from lineup.hub.api.deps import Body, Hub, IdempotencyKey, Member
from lineup.hub.api.openapi import answers
from lineup.hub.api.responses import Timestamp, View
from lineup.hub.governance import decisions
from lineup.hub.sight import visible_project, visible_projects
from lineup.protocol.capabilities import CapabilitySpec
from lineup.protocol.errors import NotFound
from lineup.protocol.times import iso
from lineup.store import Reader
from lineup.store import governance as gov_store
from lineup.store.governance import (
    ApprovalRecord,
    ExecutionRecord,
    InvocationRecord,
    PolicyRule,
    Project,
    StandingPermission,
)

router = APIRouter(prefix="/api/workspaces/{workspace_id}", tags=["governance"])

Id = Annotated[str, Path(min_length=1, max_length=128)]
Role = Literal["owner", "editor", "viewer"]


# --- bodies and views ----------------------------------------------------------------------


class NewProject(Body):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    context: Annotated[str, Field(max_length=10_000)] | None = None
    working_directory: Annotated[str, Field(max_length=1000)] | None = None


class ProjectChange(Body):
    name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    context: Annotated[str, Field(max_length=10_000)] | None = None
    working_directory: Annotated[str, Field(max_length=1000)] | None = None


class MemberRole(Body):
    role: Role


class ProjectView(View):
    id: str
    name: str
    context: str | None
    working_directory: str | None
    created_by: str
    created_at: Timestamp
    updated_at: Timestamp
    role: Role | None
    """The caller's role in it; null for a workspace owner who is not a member."""


class ProjectMemberView(View):
    user_id: str
    display_name: str
    email: str
    role: Role


class ProjectDetail(ProjectView):
    members: list[ProjectMemberView]


class ProjectList(View):
    projects: list[ProjectView]


class CapabilityView(View):
    capability: CapabilitySpec
    enabled: bool
    disabled_reason: str | None = None


class CapabilityList(View):
    capabilities: list[CapabilityView]


class CapabilitySwitch(Body):
    enabled: bool
    reason: Annotated[str, Field(max_length=500)] | None = None


class NewRule(Body):
    capability: Annotated[str, Field(min_length=1, max_length=100)]
    effect: Literal["allow", "deny"]
    project_id: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    instance: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    roles: Annotated[list[Role], Field(min_length=1, max_length=3)] | None = None


class RuleView(View):
    id: str
    capability: str
    effect: Literal["allow", "deny"]
    project_id: str | None
    instance: str | None
    roles: list[str] | None
    set_by: str
    created_at: Timestamp


class PermissionView(View):
    id: str
    project_id: str
    capability: str
    instance: str
    bounds: dict[str, Any]
    expires_at: Timestamp | None
    max_calls: int | None
    calls_used: int
    granted_by: str
    approval_id: str | None
    revoked_at: Timestamp | None
    revoked_by: str | None
    created_at: Timestamp
    status: Literal["active", "expired", "used_up", "revoked"]


class Policy(View):
    rules: list[RuleView]
    permissions: list[PermissionView]


class Revocation(Body):
    reason: Annotated[str, Field(max_length=500)] | None = None


class StandingBody(Body):
    minutes: Annotated[int, Field(ge=1, le=decisions.MAX_STANDING_MINUTES)] | None = None
    calls: Annotated[int, Field(ge=1, le=decisions.MAX_STANDING_CALLS)] | None = None
    bounds: dict[str, Any] | None = None


class DecisionBody(Body):
    decision: Literal["approve", "reject"]
    reason: Annotated[str, Field(max_length=2000)] | None = None
    standing: StandingBody | None = None
    """With ``approve``: also a standing permission for calls like this one."""


class Handover(Body):
    user_id: Annotated[str, Field(min_length=1, max_length=128)]


class ApprovalView(View):
    id: str
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
    status: Literal["pending", "approved", "rejected", "expired", "voided"]
    decided_by: str | None
    decided_by_name: str | None
    decided_at: Timestamp | None
    reason: str | None
    permission_id: str | None
    expires_at: Timestamp
    created_at: Timestamp
    sequence: int
    execution_id: str | None
    can_decide: bool
    """Whether the caller may approve or reject it (an owner or editor of its project)."""


class ApprovalList(View):
    approvals: list[ApprovalView]


class ExecutionView(View):
    id: str
    invocation_id: str
    agent_id: str
    capability: str
    instance: str
    params_digest: str
    idempotency_key: str
    grant_id: str | None
    expected_version: str | None
    status: Literal["started", "accepted", "succeeded", "failed", "unknown_result"]
    job_id: str | None
    attempts: int
    output: dict[str, Any] | None
    error: dict[str, Any] | None
    receipt: dict[str, Any] | None
    started_at: Timestamp
    finished_at: Timestamp | None
    conversation_id: str | None
    project_id: str | None


class ExecutionList(View):
    executions: list[ExecutionView]


class InvocationView(View):
    id: str
    agent_id: str
    capability: str
    effect: Literal["read", "write"]
    instance: str
    params: dict[str, Any]
    params_digest: str
    project_id: str | None
    conversation_id: str | None
    task_id: str | None
    on_behalf_of: str | None
    status: str
    created_at: Timestamp


class AuditEntryView(View):
    seq: int
    at: Timestamp
    kind: str
    actor: str
    subject: str
    data: dict[str, Any]
    hash: str
    prev_hash: str


class RunRecord(View):
    """Everything about one execution: who asked, with what, who approved, what happened."""

    execution: ExecutionView
    invocation: InvocationView
    approval: ApprovalView | None
    audit: list[AuditEntryView]


# --- helpers ---------------------------------------------------------------------------------


def _project_view(p: Project, role: str | None) -> dict[str, Any]:
    return {
        "id": p.id,
        "name": p.name,
        "context": p.context,
        "working_directory": p.working_directory,
        "created_by": p.created_by,
        "created_at": iso(p.created_at),
        "updated_at": iso(p.updated_at),
        "role": role,
    }


def _detail(r: Reader, person: Person, project_id: str) -> ProjectDetail:
    p = visible_project(r, person, project_id)
    role = gov_store.project_role(r.connection, p.id, person.user_id)
    members = []
    for m in gov_store.list_project_members(r.connection, p.id):
        user = r.get_user(m.user_id)
        members.append(
            {
                "user_id": m.user_id,
                "display_name": user.display_name if user else m.user_id,
                "email": user.email if user else "",
                "role": m.role,
            }
        )
    return ProjectDetail.model_validate({**_project_view(p, role), "members": members})


def _approval_views(
    r: Reader, rows: list[ApprovalRecord], roles: dict[str, str | None]
) -> list[dict[str, Any]]:
    if not rows:
        return []
    ran = gov_store.execution_ids_of(
        r.connection, rows[0].workspace_id, [a.invocation_id for a in rows]
    )
    return [_approval_view(a, roles, ran.get(a.invocation_id)) for a in rows]


def _approval_view(
    a: ApprovalRecord, roles: dict[str, str | None], execution_id: str | None
) -> dict[str, Any]:
    return {
        "id": a.id,
        "project_id": a.project_id,
        "invocation_id": a.invocation_id,
        "agent_id": a.agent_id,
        "capability": a.capability,
        "instance": a.instance,
        "params": a.params,
        "params_digest": a.params_digest,
        "resource_version": a.resource_version,
        "summary": a.summary,
        "impact": a.impact,
        "draft": a.draft,
        "conversation_id": a.conversation_id,
        "task_id": a.task_id,
        "requested_for": a.requested_for,
        "assignee": a.assignee,
        "status": a.status,
        "decided_by": a.decided_by,
        "decided_by_name": a.decided_by_name,
        "decided_at": iso(a.decided_at),
        "reason": a.reason,
        "permission_id": a.permission_id,
        "expires_at": iso(a.expires_at),
        "created_at": iso(a.created_at),
        "sequence": a.sequence,
        "execution_id": execution_id,
        "can_decide": roles.get(a.project_id) in ("owner", "editor"),
    }


def _may_see_invocation(
    person: Person, inv: InvocationRecord, roles: dict[str, str | None]
) -> bool:
    if inv.project_id is not None:
        return inv.project_id in roles
    return inv.on_behalf_of == person.actor


def _execution_view(e: ExecutionRecord, inv: InvocationRecord) -> dict[str, Any]:
    return {
        "id": e.id,
        "invocation_id": e.invocation_id,
        "agent_id": e.agent_id,
        "capability": e.capability,
        "instance": e.instance,
        "params_digest": e.params_digest,
        "idempotency_key": e.idempotency_key,
        "grant_id": e.grant_id,
        "expected_version": e.expected_version,
        "status": e.status,
        "job_id": e.job_id,
        "attempts": e.attempts,
        "output": e.output,
        "error": e.error,
        "receipt": e.receipt,
        "started_at": iso(e.started_at),
        "finished_at": iso(e.finished_at),
        "conversation_id": inv.conversation_id,
        "project_id": inv.project_id,
    }


def _invocation_view(inv: InvocationRecord) -> dict[str, Any]:
    return {
        "id": inv.id,
        "agent_id": inv.agent_id,
        "capability": inv.capability,
        "effect": inv.effect,
        "instance": inv.instance,
        "params": inv.params,
        "params_digest": inv.params_digest,
        "project_id": inv.project_id,
        "conversation_id": inv.conversation_id,
        "task_id": inv.task_id,
        "on_behalf_of": inv.on_behalf_of,
        "status": inv.status,
        "created_at": iso(inv.created_at),
    }


def _rule_view(rule: PolicyRule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "capability": rule.capability,
        "effect": rule.effect,
        "project_id": rule.project_id,
        "instance": rule.instance,
        "roles": rule.roles,
        "set_by": rule.set_by,
        "created_at": iso(rule.created_at),
    }


def _permission_view(p: StandingPermission, now_ms: int) -> dict[str, Any]:
    if p.revoked_at is not None:
        status = "revoked"
    elif p.expires_at is not None and now_ms >= p.expires_at:
        status = "expired"
    elif p.max_calls is not None and p.calls_used >= p.max_calls:
        status = "used_up"
    else:
        status = "active"
    return {
        "id": p.id,
        "project_id": p.project_id,
        "capability": p.capability,
        "instance": p.instance,
        "bounds": p.bounds,
        "expires_at": iso(p.expires_at),
        "max_calls": p.max_calls,
        "calls_used": p.calls_used,
        "granted_by": p.granted_by,
        "approval_id": p.approval_id,
        "revoked_at": iso(p.revoked_at),
        "revoked_by": p.revoked_by,
        "created_at": iso(p.created_at),
        "status": status,
    }


# --- projects --------------------------------------------------------------------------------


@router.get("/projects", **answers(ProjectList, 400, 401, 403))
async def list_projects(hub: Hub, person: Member) -> ProjectList:
    def read(r: Reader) -> ProjectList:
        roles = visible_projects(r, person)
        rows = [
            p for p in gov_store.list_projects(r.connection, person.workspace_id) if p.id in roles
        ]
        return ProjectList.model_validate(
            {"projects": [_project_view(p, roles[p.id]) for p in rows]}
        )

    return await hub.store.read(read)


@router.post("/projects", status_code=201, **answers(ProjectDetail, 400, 401, 403, 409, 413))
async def create_project(
    body: NewProject, hub: Hub, person: Member, key: IdempotencyKey
) -> ProjectDetail:
    """A project; its maker is its first owner."""
    project = await hub.recorder.run(
        lambda w: projects.create(
            w,
            person,
            name=body.name.strip(),
            context=body.context,
            working_directory=body.working_directory,
            event_id=key,
        )
    )
    return await hub.store.read(lambda r: _detail(r, person, project.id))


@router.get("/projects/{project_id}", **answers(ProjectDetail, 400, 401, 403, 404))
async def get_project(project_id: Id, hub: Hub, person: Member) -> ProjectDetail:
    return await hub.store.read(lambda r: _detail(r, person, project_id))


@router.patch("/projects/{project_id}", **answers(ProjectDetail, 400, 401, 403, 404, 413))
async def change_project(
    project_id: Id, body: ProjectChange, hub: Hub, person: Member
) -> ProjectDetail:
    await hub.recorder.run(
        lambda w: projects.update(
            w,
            person,
            project_id,
            name=body.name,
            context=body.context,
            working_directory=body.working_directory,
        )
    )
    return await hub.store.read(lambda r: _detail(r, person, project_id))


@router.put(
    "/projects/{project_id}/members/{user_id}",
    **answers(ProjectDetail, 400, 401, 403, 404, 409, 413),
)
async def set_member(
    project_id: Id, user_id: Id, body: MemberRole, hub: Hub, person: Member
) -> ProjectDetail:
    """Add a workspace member to the project, or change their role (the project's owners)."""
    await hub.recorder.run(lambda w: projects.set_member(w, person, project_id, user_id, body.role))
    return await hub.store.read(lambda r: _detail(r, person, project_id))


@router.delete(
    "/projects/{project_id}/members/{user_id}",
    status_code=204,
    **answers(None, 400, 401, 403, 404, 409),
)
async def remove_member(project_id: Id, user_id: Id, hub: Hub, person: Member) -> Response:
    await hub.recorder.run(lambda w: projects.remove_member(w, person, project_id, user_id))
    return Response(status_code=204)


# --- the catalogue and policy ---------------------------------------------------------------


@router.get("/capabilities", **answers(CapabilityList, 400, 401, 403))
async def list_capabilities(hub: Hub, person: Member) -> CapabilityList:
    view = await hub.governance.view(person.workspace_id)
    disabled = await hub.store.read(
        lambda r: gov_store.disabled_capabilities(r.connection, person.workspace_id)
    )
    return CapabilityList.model_validate(
        {
            "capabilities": [
                {
                    "capability": spec,
                    "enabled": spec.id not in disabled,
                    "disabled_reason": disabled[spec.id].reason if spec.id in disabled else None,
                }
                for spec in view.specs()
            ]
        }
    )


@router.put(
    "/capabilities/{capability}/state",
    status_code=204,
    **answers(None, 400, 401, 403, 404, 413),
)
async def switch_capability(
    capability: Annotated[str, Path(min_length=1, max_length=100)],
    body: CapabilitySwitch,
    hub: Hub,
    person: Member,
) -> Response:
    """Switch a capability off (new calls are refused at once) or on (workspace owners)."""
    await decisions.set_capability_enabled(hub, person, capability, body.enabled, body.reason)
    return Response(status_code=204)


@router.get("/policy", **answers(Policy, 400, 401, 403))
async def get_policy(hub: Hub, person: Member) -> Policy:
    now = hub.clock()

    def read(r: Reader) -> Policy:
        roles = visible_projects(r, person)
        rules = [
            _rule_view(rule)
            for rule in gov_store.list_rules(r.connection, person.workspace_id)
            if rule.project_id is None or rule.project_id in roles
        ]
        permissions = [
            _permission_view(p, now)
            for p in gov_store.list_permissions(r.connection, person.workspace_id)
            if p.project_id in roles
        ]
        return Policy.model_validate({"rules": rules, "permissions": permissions})

    return await hub.store.read(read)


@router.post("/policy/rules", status_code=201, **answers(RuleView, 400, 401, 403, 404, 413))
async def add_rule(body: NewRule, hub: Hub, person: Member, key: IdempotencyKey) -> RuleView:
    rule = await decisions.set_rule(
        hub,
        person,
        capability=body.capability,
        effect=body.effect,
        project_id=body.project_id,
        instance=body.instance,
        roles=list(body.roles) if body.roles else None,
        event_id=key,
    )
    return RuleView.model_validate(_rule_view(rule))


@router.delete("/policy/rules/{rule_id}", status_code=204, **answers(None, 400, 401, 403, 404))
async def remove_rule(rule_id: Id, hub: Hub, person: Member) -> Response:
    await decisions.remove_rule(hub, person, rule_id)
    return Response(status_code=204)


@router.post(
    "/permissions/{permission_id}/revoke", **answers(PermissionView, 400, 401, 403, 404, 413)
)
async def revoke_permission(
    permission_id: Id, body: Revocation, hub: Hub, person: Member
) -> PermissionView:
    """End a standing permission at once: the next call like it asks again."""
    row = await decisions.revoke_permission(hub, person, permission_id, body.reason)
    return PermissionView.model_validate(_permission_view(row, hub.clock()))


# --- approvals -------------------------------------------------------------------------------


@router.get("/approvals", **answers(ApprovalList, 400, 401, 403))
async def list_approvals(
    hub: Hub,
    person: Member,
    view: Literal["waiting", "raised", "done", "all"] = "waiting",
    conversation_id: Annotated[str | None, Query(alias="conversationId", max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ApprovalList:
    """The approval center: ``waiting`` (for me: pending, in projects where I may decide,
    handed to me or to nobody), ``raised`` (asked by agents in my conversations), ``done``
    (decided, expired or voided), ``all``."""

    def read(r: Reader) -> ApprovalList:
        roles = visible_projects(r, person)
        if view == "raised":
            rows = gov_store.list_approvals(
                r.connection, person.workspace_id, requested_for=person.actor, limit=limit
            )
        else:
            statuses = {
                "waiting": ["pending"],
                "done": ["approved", "rejected", "expired", "voided"],
            }
            rows = gov_store.list_approvals(
                r.connection,
                person.workspace_id,
                statuses=statuses.get(view),
                project_ids=list(roles),
                conversation_id=conversation_id,
                limit=limit,
            )
        if view == "waiting":
            rows = [
                a
                for a in rows
                if roles.get(a.project_id) in ("owner", "editor")
                and a.assignee in (None, person.user_id)
            ]
        if conversation_id is not None:
            rows = [a for a in rows if a.conversation_id == conversation_id]
        return ApprovalList.model_validate(
            {
                "approvals": _approval_views(
                    r,
                    [a for a in rows if a.project_id in roles or a.requested_for == person.actor],
                    roles,
                )
            }
        )

    return await hub.store.read(read)


def _visible_approval(r: Reader, person: Person, approval_id: str) -> ApprovalView:
    roles = visible_projects(r, person)
    row = gov_store.get_approval(r.connection, person.workspace_id, approval_id)
    if row is None or (row.project_id not in roles and row.requested_for != person.actor):
        raise NotFound(
            f"No approval {approval_id!r} in this workspace.", details={"approvalId": approval_id}
        )
    return ApprovalView.model_validate(_approval_views(r, [row], roles)[0])


@router.get("/approvals/{approval_id}", **answers(ApprovalView, 400, 401, 403, 404))
async def get_approval(approval_id: Id, hub: Hub, person: Member) -> ApprovalView:
    return await hub.store.read(lambda r: _visible_approval(r, person, approval_id))


@router.post(
    "/approvals/{approval_id}/decision",
    **answers(ApprovalView, 400, 401, 403, 404, 409, 413, 503),
)
async def decide_approval(
    approval_id: Id, body: DecisionBody, hub: Hub, person: Member
) -> ApprovalView:
    """Approve (once, or with a standing permission) or reject with a reason. The first
    decision stands; the same one again changes nothing; a different one is a ``conflict``."""
    await hub.store.read(lambda r: _visible_approval(r, person, approval_id))
    standing = None
    if body.standing is not None:
        standing = decisions.StandingRequest(
            minutes=body.standing.minutes, calls=body.standing.calls, bounds=body.standing.bounds
        )
    await decisions.decide(
        hub, person, approval_id, body.decision, reason=body.reason, standing=standing
    )
    return await hub.store.read(lambda r: _visible_approval(r, person, approval_id))


@router.post(
    "/approvals/{approval_id}/handover", **answers(ApprovalView, 400, 401, 403, 404, 409, 413)
)
async def hand_over(approval_id: Id, body: Handover, hub: Hub, person: Member) -> ApprovalView:
    """Ask another owner or editor of the project to decide."""
    await hub.store.read(lambda r: _visible_approval(r, person, approval_id))
    await decisions.hand_over(hub, person, approval_id, body.user_id)
    return await hub.store.read(lambda r: _visible_approval(r, person, approval_id))


# --- executions ------------------------------------------------------------------------------


@router.get("/executions", **answers(ExecutionList, 400, 401, 403))
async def list_executions(
    hub: Hub,
    person: Member,
    conversation_id: Annotated[str | None, Query(alias="conversationId", max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ExecutionList:
    def read(r: Reader) -> ExecutionList:
        roles = visible_projects(r, person)
        rows = gov_store.executions_with_invocations(
            r.connection, person.workspace_id, conversation_id=conversation_id, limit=limit
        )
        out = [
            _execution_view(e, inv) for e, inv in rows if _may_see_invocation(person, inv, roles)
        ]
        return ExecutionList.model_validate({"executions": out})

    return await hub.store.read(read)


@router.get("/executions/{execution_id}", **answers(RunRecord, 400, 401, 403, 404))
async def run_record(execution_id: Id, hub: Hub, person: Member) -> RunRecord:
    """One execution's record: who asked, when, with which parameters, who approved, what
    happened, the provider's receipt, and the audit entries behind it."""

    def read(r: Reader) -> RunRecord:
        roles = visible_projects(r, person)
        e = gov_store.get_execution(r.connection, person.workspace_id, execution_id)
        inv = (
            None
            if e is None
            else gov_store.get_invocation(r.connection, person.workspace_id, e.invocation_id)
        )
        if e is None or inv is None or not _may_see_invocation(person, inv, roles):
            raise NotFound(
                f"No execution {execution_id!r} in this workspace.",
                details={"executionId": execution_id},
            )
        approval = None
        if inv.approval_id is not None:
            row = gov_store.get_approval(r.connection, person.workspace_id, inv.approval_id)
            if row is not None:
                approval = _approval_view(row, roles, e.id)
        subjects = [f"invocation:{inv.id}", f"execution:{e.id}"]
        if inv.approval_id:
            subjects.append(f"approval:{inv.approval_id}")
        if e.grant_id:
            subjects.append(f"grant:{e.grant_id}")
        entries = audit.entries_for(r, person.workspace_id, subjects)
        return RunRecord.model_validate(
            {
                "execution": _execution_view(e, inv),
                "invocation": _invocation_view(inv),
                "approval": approval,
                "audit": entries,
            }
        )

    return await hub.store.read(read)
