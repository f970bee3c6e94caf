"""Every recorded fact has one payload model; stored payloads read back as what was recorded,
and the hub can record nothing else."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lineup.hub.recorder import Writing
from lineup.protocol import RECORDED_TYPES
from lineup.protocol.facts import FACTS, Fact, TaskAcceptedPayload, parse_fact
from lineup.protocol.schemas import all_schemas
from lineup.store.projections import HANDLERS, NOT_PROJECTED

DOC = (Path(__file__).resolve().parents[3] / "docs" / "protocol.md").read_text(encoding="utf-8")
SCHEMAS = all_schemas()
FACTS_SECTION = DOC[DOC.index("### 5.4 Recorded facts") : DOC.index("## 6. Interactions")]

# One payload per fact, as hubs have stored them (camelCase keys, times in milliseconds).
STORED: dict[str, dict[str, Any]] = {
    "workspace.created": {"workspaceId": "ws_1", "name": "Acme", "ownerUserId": "user_1"},
    "member.joined": {
        "userId": "user_1",
        "email": "ana@example.com",
        "displayName": "Ana",
        "role": "owner",
    },
    "agent.paired": {"agentId": "agent_1", "name": "Builder", "runtime": "python"},
    "agent.connected": {
        "agentId": "agent_1",
        "agentVersion": "1.0",
        "runtime": "python",
        "capabilities": ["tasks"],
        "tools": [{"name": "calc", "type": "action", "inputSchema": {}}],
    },
    "agent.status_changed": {"agentId": "agent_1", "status": "offline", "lastHeartbeatAt": 5},
    "agent.renamed": {"agentId": "agent_1", "name": "Fixer"},
    "agent.revoked": {"agentId": "agent_1"},
    "agent.confirmed": {
        "agentId": "agent_1",
        "name": "Builder",
        "confirmedBy": "user:user_1",
        "targetAgentId": "agent_1",
    },
    "agent.rejected": {"agentId": "agent_1", "rejectedBy": "user:user_1"},
    "agent.settings_changed": {
        "agentId": "agent_1",
        "values": {"retries": 3},
        "changedBy": "user:user_1",
        "targetAgentId": "agent_1",
    },
    "conversation.created": {"conversationId": "conv_1", "title": "Deps", "agentIds": ["a"]},
    "conversation.agent_joined": {"conversationId": "conv_1", "agentId": "a"},
    "message.created": {
        "messageId": "msg_1",
        "author": {"kind": "user", "id": "user_1", "name": "Ana"},
        "content": "hi",
        "attachments": [{"name": "a.txt", "url": "https://example.com/a.txt"}],
        "steer": True,
        "targetAgentId": "agent_1",
    },
    "task.created": {
        "taskId": "task_1",
        "title": "Tidy",
        "targetAgentId": "agent_1",
        "createdBy": "user:user_1",
        "description": "all of it",
    },
    "task.accepted": {"taskId": "task_1"},
    "task.status_changed": {"status": "running", "progress": 40, "taskId": "task_1"},
    "task.child_created": {
        "childTaskId": "task_2",
        "parentTaskId": "task_1",
        "title": "Sub",
        "status": "queued",
        "targetAgentId": "agent_1",
    },
    "task.cancel_requested": {"taskId": "task_1", "targetAgentId": None},
    "interaction.requested": {
        "interaction": {
            "id": "int_1",
            "type": "approval",
            "title": "Ship it?",
            "allowOther": False,
            "multiple": False,
            "expiresAt": "2026-01-01T00:00:00Z",
        }
    },
    "interaction.resolved": {
        "interactionId": "int_1",
        "response": {"optionId": "approve"},
        "respondedBy": "user:user_1",
        "respondedByName": "Ana",
        "respondedAt": 1_767_225_600_000,
        "targetAgentId": "agent_1",
    },
    "interaction.expired": {"interactionId": "int_1", "expiresAt": None, "targetAgentId": "a"},
    "interaction.cancelled": {
        "interactionId": "int_1",
        "reason": "The task was cancelled.",
        "taskId": "task_1",
        "targetAgentId": "agent_1",
    },
    "artifact.created": {
        "name": "report.pdf",
        "url": "https://example.com/r.pdf",
        "artifactId": "art_1",
        "taskId": "task_1",
    },
    "tool.registered": {"deviceId": "phone", "userId": "user_1", "tools": []},
    "activity.started": {
        "activityId": "act_1",
        "kind": "tool_call",
        "name": "read_file",
        "arguments": {"path": "README.md"},
    },
    "activity.output": {"activityId": "act_2", "chunk": "ok\n", "offset": 0, "stream": "stdout"},
    "activity.finished": {
        "activityId": "act_1",
        "status": "succeeded",
        "result": "# LineUp",
        "durationMs": 12,
    },
    "activity.usage": {"inputTokens": 10, "outputTokens": 2, "contextWindow": 200000},
    "session.imported": {
        "conversationId": "conv_1",
        "header": {"type": "header", "v": 2, "sessionId": "s1", "title": "T"},
        "formatVersion": 2,
        "sourceFormat": "pi",
        "sourceVersion": 3,
        "entryCount": 1,
        "leafId": "a1",
    },
    "session.entries_imported": {
        "conversationId": "conv_1",
        "formatVersion": 2,
        "first": 1,
        "entries": [
            {"entry": {"type": "label", "id": "a0", "parentId": None}},
            {"entry": {"type": "message", "id": "a1", "parentId": "a0"}, "shown": True},
        ],
        "message": {
            "entryId": "a1",
            "messageId": "msg_1",
            "author": {"kind": "user", "name": "Ana"},
            "content": "hi",
            "createdAt": 1000,
        },
    },
    "tool.called": {
        "toolCallId": "tc_1",
        "callId": "c1",
        "agentId": "agent_1",
        "name": "choice",
        "arguments": {"question": "?", "options": ["a", "b"]},
        "targetAgentId": "agent_1",
        "timeoutMs": 1000,
        "expiresAt": 2000,
    },
    "tool.completed": {
        "toolCallId": "tc_1",
        "callId": "c1",
        "name": "choice",
        "error": {"code": "unavailable", "message": "No app answered within 1000 ms."},
        "answeredBy": "system",
        "answeredAt": 2000,
        "targetAgentId": "agent_1",
        "expired": True,
    },
    "tool.cancelled": {"toolCallId": "tc_1", "callId": "c1", "targetAgentId": "agent_1"},
    "project.created": {
        "projectId": "prj_1",
        "name": "Plant 1",
        "context": "Assembly line scheduling",
        "createdBy": "user_1",
    },
    "project.updated": {"projectId": "prj_1", "name": "Plant one"},
    "project.member_set": {
        "projectId": "prj_1",
        "userId": "user_2",
        "role": "editor",
        "setBy": "user:user_1",
    },
    "project.member_removed": {
        "projectId": "prj_1",
        "userId": "user_2",
        "removedBy": "user:user_1",
    },
    "capability.state_changed": {
        "capability": "scheduling.schedule.publish",
        "enabled": False,
        "reason": "audit",
    },
    "policy.rule_set": {
        "ruleId": "rule_1",
        "capability": "scheduling.*",
        "effect": "allow",
        "projectId": "prj_1",
        "roles": ["owner", "editor"],
        "setBy": "user:user_1",
    },
    "policy.rule_removed": {"ruleId": "rule_1", "removedBy": "user:user_1"},
    "capability.invoked": {
        "invocationId": "ivk_1",
        "agentInvocationId": "i1",
        "agentId": "agent_1",
        "capability": "scheduling.schedule.publish",
        "effect": "write",
        "instance": "plant-1",
        "params": {"draftId": "d1", "basedOnVersion": 3},
        "paramsDigest": "sha256:00",
        "projectId": "prj_1",
        "onBehalfOf": "user:user_1",
    },
    "approval.requested": {
        "approvalId": "apr_1",
        "invocationId": "ivk_1",
        "agentInvocationId": "i1",
        "agentId": "agent_1",
        "capability": "scheduling.schedule.publish",
        "instance": "plant-1",
        "params": {"draftId": "d1"},
        "paramsDigest": "sha256:00",
        "summary": "Publish d1",
        "impact": "5 operations move",
        "resourceVersion": "3",
        "draft": {"assignments": []},
        "projectId": "prj_1",
        "requestedFor": "user:user_1",
        "expiresAt": 1800000000000,
        "targetAgentId": "agent_1",
    },
    "approval.handed_over": {"approvalId": "apr_1", "assignee": "user_2", "by": "user:user_1"},
    "approval.decided": {
        "approvalId": "apr_1",
        "invocationId": "ivk_1",
        "agentInvocationId": "i1",
        "capability": "scheduling.schedule.publish",
        "decision": "approved",
        "by": "user:user_1",
        "byName": "Ana",
        "targetAgentId": "agent_1",
    },
    "permission.granted": {
        "permissionId": "prm_1",
        "projectId": "prj_1",
        "capability": "ledger.entry.post",
        "instance": "books",
        "bounds": {"amount": {"max": 100}},
        "expiresAt": 1800000600000,
        "maxCalls": 5,
        "grantedBy": "user:user_1",
        "approvalId": "apr_1",
    },
    "permission.revoked": {"permissionId": "prm_1", "by": "user:user_1", "reason": "done"},
    "grant.issued": {
        "grantId": "grt_1",
        "invocationId": "ivk_1",
        "paramsDigest": "sha256:00",
        "instance": "plant-1",
        "resourceVersion": "3",
        "approvalId": "apr_1",
        "expiresAt": 1800000300000,
    },
    "execution.started": {
        "executionId": "exe_1",
        "invocationId": "ivk_1",
        "agentInvocationId": "i1",
        "capability": "scheduling.schedule.publish",
        "instance": "plant-1",
        "paramsDigest": "sha256:00",
        "idempotencyKey": "lineup:exe_1",
        "grantId": "grt_1",
        "expectedVersion": "3",
        "targetAgentId": "agent_1",
    },
    "execution.attempted": {
        "executionId": "exe_1",
        "attempt": 1,
        "outcome": "timeout",
        "detail": "no receipt",
    },
    "execution.accepted": {
        "executionId": "exe_1",
        "invocationId": "ivk_1",
        "agentInvocationId": "i1",
        "capability": "scheduling.schedule.publish",
        "jobId": "job-1",
        "receipt": {"job": "job-1"},
        "targetAgentId": "agent_1",
    },
    "execution.finished": {
        "executionId": "exe_1",
        "invocationId": "ivk_1",
        "agentInvocationId": "i1",
        "capability": "scheduling.schedule.publish",
        "status": "succeeded",
        "output": {"publishedVersion": 4},
        "receipt": {"job": "job-1"},
        "targetAgentId": "agent_1",
    },
    "provider.change_requested": {
        "changeId": "pch_1",
        "providerId": "files",
        "action": "upgrade",
        "fromVersion": "1.0.0",
        "fromDigest": "sha256:" + "a" * 64,
        "toVersion": "1.1.0",
        "toDigest": "sha256:" + "b" * 64,
        "surface": {"added": ["files.move"], "removed": [], "changed": ["files.write"]},
        "contractPassed": True,
        "reason": "needs move",
    },
    "provider.change_decided": {
        "changeId": "pch_1",
        "providerId": "files",
        "outcome": "applied",
        "reason": "ok",
    },
    "provider.state_changed": {
        "providerId": "files",
        "state": "enabled",
        "version": "1.1.0",
        "digest": "sha256:" + "b" * 64,
        "source": "package",
        "previousVersion": "1.0.0",
        "previousDigest": "sha256:" + "a" * 64,
        "changeId": "pch_1",
    },
    "binding.bound": {
        "userId": "user_1",
        "provider": "crm",
        "instance": "acme",
        "authKind": "oauth",
        "account": "ana@acme",
        "expiresAt": 1800000600000,
    },
    "binding.expired": {
        "userId": "user_1",
        "provider": "crm",
        "instance": "acme",
        "reason": "refresh_refused",
    },
    "binding.removed": {"userId": "user_1", "provider": "crm", "instance": "acme", "by": "hub"},
}


def test_the_recorded_types_are_the_facts_with_a_model() -> None:
    assert set(FACTS) == RECORDED_TYPES == set(STORED)


def test_every_fact_is_projected_or_declared_as_not_projected() -> None:
    assert set(HANDLERS) | NOT_PROJECTED == set(FACTS)
    assert not set(HANDLERS) & NOT_PROJECTED


@pytest.mark.parametrize("event_type", sorted(FACTS))
def test_each_model_names_its_type_and_is_named_after_it(event_type: str) -> None:
    model = FACTS[event_type]
    assert model.fact_type == event_type
    words = re.split(r"[._]", event_type)
    assert model.__name__ == "".join(w.capitalize() for w in words) + "Payload"


@pytest.mark.parametrize("event_type", sorted(STORED))
def test_a_stored_payload_reads_back_and_records_the_same_keys(event_type: str) -> None:
    fact = parse_fact(event_type, STORED[event_type])
    assert isinstance(fact, FACTS[event_type])
    recorded = fact.recorded()
    assert set(recorded) == set(STORED[event_type])
    assert parse_fact(event_type, recorded) == fact


@pytest.mark.parametrize("event_type", sorted(FACTS))
def test_the_protocol_page_lists_every_field_of_a_fact(event_type: str) -> None:
    row = re.search(rf"^\| `{re.escape(event_type)}` \| (.*) \|$", FACTS_SECTION, re.MULTILINE)
    assert row is not None, f"docs/protocol.md section 5.4 has no row for {event_type}"
    documented = {name.rstrip("?") for name in re.findall(r"`([A-Za-z]+)\b", row.group(1))}
    fields = {f.alias or name for name, f in FACTS[event_type].model_fields.items()}
    assert fields <= documented, f"undocumented: {sorted(fields - documented)}"


def test_an_unknown_type_has_no_fact() -> None:
    with pytest.raises(KeyError):
        parse_fact("future.thing", {})


def test_a_missing_required_field_does_not_parse() -> None:
    with pytest.raises(ValueError):
        parse_fact("task.created", {"taskId": "t1"})  # no title


def test_optional_fields_left_empty_are_not_stored() -> None:
    recorded = TaskAcceptedPayload(task_id="task_1").recorded()
    assert recorded == {"taskId": "task_1"}


class _Unrecorded(Fact):
    fact_type = "rogue.thing"


class _Impostor(TaskAcceptedPayload):
    """Claims a recorded type without being its model."""


@pytest.mark.parametrize("payload", [_Unrecorded(), _Impostor(task_id="t"), {"taskId": "t"}])
def test_the_hub_cannot_append_anything_but_a_registered_fact(payload: Any) -> None:
    class NoTransaction:
        def append(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("nothing may reach the log")

    writing = Writing(NoTransaction(), lambda: 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        writing.append("ws_1", payload, actor="system")


@pytest.mark.parametrize("event_type", sorted(STORED))
def test_a_recorded_payload_fits_the_exported_schemas(event_type: str) -> None:
    schemas = SCHEMAS
    recorded = parse_fact(event_type, STORED[event_type]).recorded()
    assert schemas[f"facts/{event_type}.json"]["title"] == FACTS[event_type].__name__
    jsonschema.validate(recorded, schemas[f"facts/{event_type}.json"])
    jsonschema.validate({"type": event_type, "payload": recorded}, schemas["facts.json"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"type": "future.thing", "payload": recorded}, schemas["facts.json"])
