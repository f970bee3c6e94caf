"""``Core.invoke``, the one path of every capability call from an agent (seed 003 §5).

schema → policy → a read runs at once / a write's draft becomes a confirm card (or goes ahead
on a standing permission) → after the commit, the execution. Checks that need no provider come
first, so a refusal costs nothing and records nothing; the provider's preview (a read, no
effect) is asked before the record, so the confirm card shows what the person will approve;
then one transaction records the invocation with its next step and its audit entries.

A resend (the same envelope, or the same ``invocationId`` with the same content) is answered
with the first record and runs nothing again; the same ``invocationId`` with other content is
a ``conflict``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from lineup.core import canonical, permissions, policy
from lineup.core.provider import Draft, Invocation, ProviderError
from lineup.hub import audit, commands
from lineup.hub.actors import AgentIdentity
from lineup.hub.commands import Recorded, derived_id
from lineup.hub.governance import bindings
from lineup.hub.governance.catalogue import CatalogueEntry, check_params, instance_of
from lineup.hub.recorder import Writing
from lineup.hub.scoped_settings import approval_ttl_of
from lineup.protocol import facts
from lineup.protocol.capabilities import CapabilityInvoke, Effect
from lineup.protocol.envelope import Envelope, fingerprint
from lineup.protocol.errors import (
    Conflict,
    ErrorCode,
    Forbidden,
    InvalidArgument,
    LineupError,
    Unavailable,
    error_from_code,
)
from lineup.store import AppendResult, Reader
from lineup.store import governance as gov_store
from lineup.store.governance import InvocationRecord

if TYPE_CHECKING:
    from lineup.hub.state import HubState


def invocation_id(workspace_id: str, agent_id: str, agent_invocation_id: str) -> str:
    return derived_id("ivk", workspace_id, agent_id, agent_invocation_id)


def execution_id(workspace_id: str, invocation: str) -> str:
    return derived_id("exe", workspace_id, invocation)


def idempotency_key(execution: str) -> str:
    """One key per logical execution, whatever its attempts: the provider applies it once."""
    return f"lineup:{execution}"


@dataclass(frozen=True, slots=True)
class Place:
    """Where a call happens: its conversation, project, and the person the agent acts for."""

    conversation_id: str
    task_id: str | None
    project_id: str | None
    on_behalf_of: str | None
    role: str | None

    @property
    def user_id(self) -> str | None:
        kind, _, ident = (self.on_behalf_of or "").partition(":")
        return ident if kind == "user" and ident else None


def place_of(read: Reader, agent: AgentIdentity, envelope: Envelope) -> Place:
    """The envelope's task (one of the agent's) or conversation (one it is part of)."""
    conversation_id = commands.agents_conversation(
        read, agent, envelope.task_id, envelope.conversation_id
    )
    if conversation_id is None:
        raise InvalidArgument(
            "A capability is invoked in a conversation: give the envelope's conversationId "
            "or taskId."
        )
    conversation = commands.conversation_in(read, agent.workspace_id, conversation_id)
    place = Place(
        conversation_id, envelope.task_id, conversation.project_id, conversation.created_by, None
    )
    if place.project_id is None or place.user_id is None:
        return place
    role = gov_store.project_role(read.connection, place.project_id, place.user_id)
    return replace(place, role=role)


@dataclass(frozen=True, slots=True)
class WorkspacePolicy:
    """A workspace's rules and switched-off capabilities, read once to judge many calls."""

    rules: list[policy.Rule]
    disabled: dict[str, gov_store.CapabilityState]

    @classmethod
    def read(cls, read: Reader, workspace_id: str) -> WorkspacePolicy:
        rules = [
            policy.Rule(
                id=r.id,
                capability=r.capability,
                effect="deny" if r.effect == "deny" else "allow",
                project_id=r.project_id,
                instance=r.instance,
                roles=None if r.roles is None else tuple(r.roles),
            )
            for r in gov_store.list_rules(read.connection, workspace_id)
        ]
        return cls(rules, gov_store.disabled_capabilities(read.connection, workspace_id))

    def verdict(self, entry: CatalogueEntry, instance: str, place: Place) -> policy.Verdict:
        if entry.spec.id in self.disabled:
            why = self.disabled[entry.spec.id].reason
            return policy.Verdict(
                False,
                f"{entry.spec.id} is switched off in this workspace" + (f": {why}" if why else "."),
                "disabled",
            )
        return policy.decide(
            self.rules,
            capability=entry.spec.id,
            effect=entry.spec.effect,
            instance=instance,
            where=policy.Where(place.project_id, place.role),
        )


def standing_of(row: gov_store.StandingPermission) -> permissions.Standing:
    return permissions.Standing(
        id=row.id,
        project_id=row.project_id,
        capability=row.capability,
        instance=row.instance,
        bounds=row.bounds,
        expires_at_ms=row.expires_at,
        max_calls=row.max_calls,
        calls_used=row.calls_used,
        revoked=row.revoked_at is not None,
    )


def provider_error(exc: ProviderError) -> LineupError:
    return error_from_code(exc.code.value, exc.message, exc.details)


async def draft_of(
    hub: HubState,
    entry: CatalogueEntry,
    instance: str,
    params: Mapping[str, Any],
    who: bindings.OnBehalf,
) -> Draft:
    """What a write would do, for its confirm card: the provider's preview, or the params.
    The person it is on behalf of must have a working binding on a per-person system."""
    provider = entry.provider
    if not entry.spec.preview:
        await bindings.check_bound(hub, provider, instance, who)
        return Draft(
            summary=summarise(params), impact=entry.spec.description, resource_version=None
        )
    held = await bindings.credentials_for(hub, provider, instance, who)
    call = Invocation(capability=entry.spec.id, instance=instance, params=params, credentials=held)
    try:
        async with asyncio.timeout(entry.spec.timeout_s):
            return await provider.preview(call)
    except TimeoutError:
        raise Unavailable(
            f"{provider.id} did not answer the preview in time; nothing was changed. "
            "Try again later.",
        ) from None
    except ProviderError as exc:
        if exc.code is ErrorCode.UNAUTHENTICATED:
            signed_out = await bindings.signed_out(hub, provider, instance, who)
            if signed_out is not None:
                raise signed_out from None
        raise provider_error(exc) from None


def summarise(params: Mapping[str, Any]) -> str:
    parts = [f"{k} = {canonical.canonical(v).decode()}" for k, v in sorted(params.items())]
    text = ", ".join(parts) or "no parameters"
    return text if len(text) <= 500 else text[:497] + "…"


def digest_of(params: Mapping[str, Any]) -> str:
    try:
        return canonical.digest(dict(params))
    except ValueError as exc:
        raise InvalidArgument(f"The params cannot be canonicalised: {exc}") from None


async def invoke(
    hub: HubState, agent: AgentIdentity, envelope: Envelope, call: CapabilityInvoke
) -> Recorded:
    gov = hub.governance
    ws = agent.workspace_id
    entry = (await gov.view(ws)).get(call.capability)
    instance = instance_of(entry, call.instance)
    check_params(entry, call.params)
    digest = digest_of(call.params)
    own_id = invocation_id(ws, agent.agent_id, call.invocation_id)
    sent = fingerprint(envelope)

    def judge(read: Reader) -> Recorded | tuple[Place, policy.Verdict, int]:
        prior = gov_store.get_invocation(read.connection, ws, own_id)
        if prior is not None:  # a resend: answered from the log, whatever happened since
            return resent(read, prior, call, instance, digest)
        place = place_of(read, agent, envelope)
        verdict = WorkspacePolicy.read(read, ws).verdict(entry, instance, place)
        return place, verdict, approval_ttl_of(read, hub.settings, ws, place)

    judged = await hub.store.read(judge)
    if isinstance(judged, Recorded):
        return judged
    place, verdict, ttl_ms = judged
    if not verdict.allowed:
        details: dict[str, Any] = {"reason": verdict.code, "capability": entry.spec.id}
        if verdict.rule_id:
            details["ruleId"] = verdict.rule_id
        raise Forbidden(verdict.reason, details=details)
    draft = None
    who = bindings.OnBehalf(ws, place.on_behalf_of)
    if entry.spec.effect is Effect.WRITE:
        draft = await draft_of(hub, entry, instance, call.params, who)
    else:
        await bindings.check_bound(hub, entry.provider, instance, who)

    def record(w: Writing) -> Recorded:
        again = gov_store.get_invocation(w.read.connection, ws, own_id)
        if again is not None:  # a resend won the race to the writer
            return resent(w.read, again, call, instance, digest)
        return _record(
            w, agent, envelope.id, entry, call, place, instance, digest, own_id, draft, ttl_ms
        )

    def job(w: Writing) -> Recorded:
        return commands.once(w, ws, agent.actor, envelope.id, lambda: record(w), fingerprint=sent)

    recorded = await hub.recorder.run(job, lane=agent.actor)
    if isinstance(recorded.value, str) and not recorded.duplicate:
        gov.executor.start(ws, recorded.value)
    return recorded


def resent(
    read: Reader, prior: InvocationRecord, call: CapabilityInvoke, instance: str, digest: str
) -> Recorded:
    same = (prior.capability, prior.instance, prior.params_digest) == (
        call.capability,
        instance,
        digest,
    )
    if not same:
        raise Conflict(
            f"invocationId {call.invocation_id!r} was already used for another call; use a new "
            "invocationId for a new call.",
            details={"invocationId": call.invocation_id, "reason": "different_call"},
        )
    original = read.read_events(prior.workspace_id, after=prior.sequence - 1, limit=1)
    if original and original[0].type == facts.CapabilityInvokedPayload.fact_type:
        return Recorded(AppendResult(original[0], duplicate=True))
    return Recorded(None)  # its event compacted away: acked without a sequence


def _record(
    w: Writing,
    agent: AgentIdentity,
    event_id: str,
    entry: CatalogueEntry,
    call: CapabilityInvoke,
    place: Place,
    instance: str,
    digest: str,
    own_id: str,
    draft: Draft | None,
    ttl_ms: int,
) -> Recorded:
    ws = agent.workspace_id
    spec = entry.spec
    where = {"conversation_id": place.conversation_id, "task_id": place.task_id}
    invoked = w.append(
        ws,
        facts.CapabilityInvokedPayload(
            invocation_id=own_id,
            agent_invocation_id=call.invocation_id,
            agent_id=agent.agent_id,
            capability=spec.id,
            effect=spec.effect.value,
            instance=instance,
            params=dict(call.params),
            params_digest=digest,
            project_id=place.project_id,
            on_behalf_of=place.on_behalf_of,
        ),
        actor=agent.actor,
        event_id=event_id,
        conversation_id=place.conversation_id,
        task_id=place.task_id,
    )
    audit.record(
        w,
        "capability.invoked",
        workspace_id=ws,
        actor=agent.actor,
        subject=f"invocation:{own_id}",
        data={
            "capability": spec.id,
            "instance": instance,
            "paramsDigest": digest,
            "projectId": place.project_id,
            "onBehalfOf": place.on_behalf_of,
        },
    )
    exe: str | None = None
    if spec.effect is Effect.READ:
        exe = start_execution(
            w,
            ws,
            own_id,
            call.invocation_id,
            agent,
            spec.id,
            instance,
            digest,
            grant_id=None,
            expected_version=None,
            where=where,
        )
    else:
        assert draft is not None and place.project_id is not None
        permission = _standing_permission(w, ws, place, spec.id, instance, call.params)
        if permission is not None:
            grant = issue_grant(
                w,
                ws,
                agent.actor,
                own_id,
                digest,
                instance,
                draft.resource_version,
                permission_id=permission.id,
                approval_id=None,
                where=where,
            )
            exe = start_execution(
                w,
                ws,
                own_id,
                call.invocation_id,
                agent,
                spec.id,
                instance,
                digest,
                grant_id=grant,
                expected_version=draft.resource_version,
                where=where,
            )
        else:
            _request_approval(
                w, agent, spec.id, call, place, instance, digest, own_id, draft, ttl_ms
            )
    return Recorded(invoked, exe)


def _standing_permission(
    w: Writing, ws: str, place: Place, capability: str, instance: str, params: Mapping[str, Any]
) -> gov_store.StandingPermission | None:
    live = gov_store.list_permissions(
        w.read.connection,
        ws,
        project_id=place.project_id,
        capability=capability,
        instance=instance,
        live_at=w.now_ms,
    )
    for row in live:
        if permissions.covers(
            standing_of(row),
            project_id=place.project_id,
            capability=capability,
            instance=instance,
            params=params,
            now_ms=w.now_ms,
        ):
            return row
    return None


def _request_approval(
    w: Writing,
    agent: AgentIdentity,
    capability: str,
    call: CapabilityInvoke,
    place: Place,
    instance: str,
    digest: str,
    own_id: str,
    draft: Draft,
    ttl_ms: int,
) -> str:
    ws = agent.workspace_id
    approval = derived_id("apr", ws, own_id)
    assert place.project_id is not None
    w.append(
        ws,
        facts.ApprovalRequestedPayload(
            approval_id=approval,
            invocation_id=own_id,
            agent_invocation_id=call.invocation_id,
            agent_id=agent.agent_id,
            capability=capability,
            instance=instance,
            params=dict(call.params),
            params_digest=digest,
            summary=draft.summary,
            impact=draft.impact,
            resource_version=draft.resource_version,
            draft=dict(draft.data) or None,
            project_id=place.project_id,
            requested_for=place.on_behalf_of,
            expires_at=w.now_ms + ttl_ms,
            target_agent_id=agent.agent_id,
        ),
        actor="hub",
        event_id=None,
        conversation_id=place.conversation_id,
        task_id=place.task_id,
    )
    audit.record(
        w,
        "approval.requested",
        workspace_id=ws,
        actor=agent.actor,
        subject=f"approval:{approval}",
        data={
            "invocationId": own_id,
            "capability": capability,
            "instance": instance,
            "paramsDigest": digest,
            "resourceVersion": draft.resource_version,
            "expiresAt": w.now_ms + ttl_ms,
        },
    )
    return approval


def issue_grant(
    w: Writing,
    ws: str,
    actor: str,
    own_id: str,
    digest: str,
    instance: str,
    resource_version: str | None,
    *,
    permission_id: str | None,
    approval_id: str | None,
    where: Mapping[str, str | None],
) -> str:
    grant = derived_id("grt", ws, own_id)
    expires = w.now_ms + GRANT_TTL_MS
    w.append(
        ws,
        facts.GrantIssuedPayload(
            grant_id=grant,
            invocation_id=own_id,
            params_digest=digest,
            instance=instance,
            resource_version=resource_version,
            approval_id=approval_id,
            permission_id=permission_id,
            expires_at=expires,
        ),
        actor="hub",
        event_id=None,
        conversation_id=where.get("conversation_id"),
        task_id=where.get("task_id"),
    )
    audit.record(
        w,
        "grant.issued",
        workspace_id=ws,
        actor=actor,
        subject=f"grant:{grant}",
        data={
            "invocationId": own_id,
            "approvalId": approval_id,
            "permissionId": permission_id,
            "paramsDigest": digest,
            "instance": instance,
            "resourceVersion": resource_version,
            "expiresAt": expires,
        },
    )
    return grant


GRANT_TTL_MS = 5 * 60 * 1000
"""A grant is used by the execution recorded with it, in the same transaction; its expiry
bounds how long it may be looked at as valid, not how long a person had to decide."""


def start_execution(
    w: Writing,
    ws: str,
    own_id: str,
    agent_invocation: str,
    agent: AgentIdentity | str,
    capability: str,
    instance: str,
    digest: str,
    *,
    grant_id: str | None,
    expected_version: str | None,
    where: Mapping[str, str | None],
) -> str:
    """Record the execution with its idempotency key — before its provider is called."""
    agent_id = agent.agent_id if isinstance(agent, AgentIdentity) else agent
    exe = execution_id(ws, own_id)
    key = idempotency_key(exe)
    w.append(
        ws,
        facts.ExecutionStartedPayload(
            execution_id=exe,
            invocation_id=own_id,
            agent_invocation_id=agent_invocation,
            capability=capability,
            instance=instance,
            params_digest=digest,
            idempotency_key=key,
            grant_id=grant_id,
            expected_version=expected_version,
            target_agent_id=agent_id,
        ),
        actor="hub",
        event_id=None,
        conversation_id=where.get("conversation_id"),
        task_id=where.get("task_id"),
    )
    audit.record(
        w,
        "execution.started",
        workspace_id=ws,
        actor="hub",
        subject=f"execution:{exe}",
        data={
            "invocationId": own_id,
            "grantId": grant_id,
            "capability": capability,
            "instance": instance,
            "paramsDigest": digest,
            "idempotencyKey": key,
            "expectedVersion": expected_version,
        },
    )
    return exe
