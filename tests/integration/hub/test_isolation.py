"""Nothing crosses workspaces (seed 001 §11): a person of another workspace
can neither read nor write anything, on every endpoint."""

import re
from typing import Any

from tests.support.hub_client import HubClient

BODIES = {
    "/pairing-codes": {},
    "/agents/{agent_id}": {"name": "stolen"},
    "/agents/{agent_id}/revoke": {},
    "/agents/{agent_id}/confirm": {},
    "/agents/{agent_id}/reject": {},
    "/agents/{agent_id}/settings": {"values": {}},
    "/conversations": {"title": "intrusion"},
    "/conversations/{conversation_id}/messages": {"content": "hi"},
    "/tasks": {"title": "intrusion", "targetAgentId": "{agent_id}"},
    "/tasks/{task_id}/cancel": {},
    "/interactions/{interaction_id}/respond": {"response": {"optionId": "approve"}},
    "/devices/{device_id}/tools": {"tools": []},
    "/tool-calls/{tool_call_id}/result": {"result": {"message": "Classified"}},
    "/projects": {"name": "intrusion"},
    "/projects/{project_id}": {"name": "stolen"},
    "/projects/{project_id}/members/{user_id}": {"role": "owner"},
    "/capabilities/{capability}/state": {"enabled": False},
    "/policy/rules": {"capability": "*", "effect": "allow"},
    "/permissions/{permission_id}/revoke": {},
    "/approvals/{approval_id}/decision": {"decision": "approve"},
    "/approvals/{approval_id}/handover": {"userId": "{user_id}"},
    "/bindings/{provider_id}/{instance}/oauth": {},
    "/bindings/{provider_id}/{instance}/password": {"username": "ana", "password": "stolen"},
    "/providers/changes": {"action": "disable", "providerId": "scheduling"},
    "/providers/changes/{change_id}/decision": {"approve": True},
}


def _world(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        body = {"title": "Classified plan", "targetAgentId": creds["agentId"]}
        task = ana.ok(ana.post("/tasks", body), 201)
        task_id = task["task"]["id"]
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        agent.call(
            "interaction.requested",
            {"interaction": {"id": "int_secret", "type": "approval", "title": "Classified?"}},
            taskId=task_id,
        )
        # a registered device, a pending tool call, a canvas
        ana._use()
        hub.client.put(
            ana.url("/devices/ana-laptop/tools"), json={"tools": []}, headers=ana.headers()
        )
        question = {"question": "Classified?", "options": ["yes", "no"]}
        agent.call("tool.call", {"call_id": "c1", "name": "choice", "arguments": question})
        agent.call(
            "tool.call",
            {
                "call_id": "c2",
                "name": "canvas",
                "action": "open",
                "arguments": {"width": 10, "height": 10},
            },
        )
        calls = {c["callId"]: c for c in ana.ok(ana.get("/tool-calls"))["toolCalls"]}
        instance = calls["c2"]["instanceId"]
        opened = {"result": {"message": f"instance_id: {instance}", "instance_id": instance}}
        ana.ok(ana.post(f"/tool-calls/{calls['c2']['id']}/result", opened))
        invitation = ana.ok(ana.post("/invitations", {}), 201)
        governed = _governed(hub, ana, agent, creds["agentId"])
    hub.client.cookies.clear()
    uploaded = hub.client.post(
        "/api/agent/artifacts",
        params={"name": "classified.txt"},
        content=b"Classified report",
        headers={"Authorization": f"Bearer {creds['credential']}", "Content-Type": "text/plain"},
    )
    assert uploaded.status_code == 201, uploaded.text
    ids = {
        "agent_id": creds["agentId"],
        "task_id": task_id,
        "conversation_id": task["task"]["conversationId"],
        "interaction_id": "int_secret",
        "device_id": "ana-laptop",
        "tool_call_id": calls["c1"]["id"],
        "instance_id": instance,
        "file_id": uploaded.json()["fileId"],
        "invitation_id": invitation["id"],
        **governed,
        "level": "project",
        "scope_id": governed["project_id"],
    }
    return ana, ids


def _governed(hub: HubClient, ana: Any, agent: Any, agent_id: str) -> dict[str, str]:
    """A project with a rule, a run record, a standing permission and a pending approval."""
    project = ana.ok(ana.post("/projects", {"name": "Classified plant"}), 201)["id"]
    rule = ana.ok(
        ana.post(
            "/policy/rules",
            {"capability": "scheduling.*", "effect": "allow", "projectId": project},
        ),
        201,
    )["id"]
    body = {"title": "Classified", "agentIds": [agent_id], "projectId": project}
    conversation = ana.ok(ana.post("/conversations", body), 201)["id"]

    def result(invocation: str, *statuses: str) -> dict[str, Any]:
        while True:
            frame = agent.next_of("capability.result")["payload"]
            if frame["invocationId"] == invocation and frame["status"] in statuses:
                return dict(frame)

    def invoke(invocation: str, capability: str, params: dict[str, Any], *until: str) -> Any:
        payload = {"invocationId": invocation, "capability": capability, "params": params}
        agent.call("capability.invoke", payload, conversationId=conversation)
        return result(invocation, *until)

    trial = invoke("g1", "scheduling.schedule.preview", {}, "succeeded")["output"]
    publish = {"draftId": trial["draftId"], "basedOnVersion": trial["basedOnVersion"]}
    first = invoke("g2", "scheduling.schedule.publish", publish, "waiting_for_approval")
    standing = {
        "decision": "approve",
        "standing": {"calls": 1, "bounds": {"basedOnVersion": {"max": 0}}},
    }
    decided = ana.ok(ana.post(f"/approvals/{first['approvalId']}/decision", standing))
    result("g2", "succeeded")
    again = invoke("g3", "scheduling.schedule.preview", {}, "succeeded")["output"]
    publish = {"draftId": again["draftId"], "basedOnVersion": again["basedOnVersion"]}
    pending = invoke("g4", "scheduling.schedule.publish", publish, "waiting_for_approval")
    change = ana.send("/providers/changes", {"action": "disable", "providerId": "scheduling"}, 201)
    return {
        "change_id": change["id"],
        "project_id": project,
        "user_id": ana.user_id,
        "rule_id": rule,
        "capability": "scheduling.orders.query",
        "permission_id": decided["permissionId"],
        "approval_id": pending["approvalId"],
        "execution_id": decided["executionId"],
        "provider_id": "scheduling",
        "instance": "plant-1",
    }


def _operations(hub: HubClient):
    paths = hub.client.get("/openapi.json").json()["paths"]
    for path, operations in paths.items():
        prefix = "/api/workspaces/{workspace_id}"
        if not path.startswith(prefix) or path == prefix:
            continue
        for method in operations:
            yield method.upper(), path[len(prefix) :]


def _fill(template: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], template)


def test_every_workspace_endpoint_refuses_a_non_member(hub: HubClient):
    ana, ids = _world(hub)
    bo = hub.sign_up()
    operations = list(_operations(hub))
    assert len(operations) >= 15
    for method, path in operations:
        bo._use()
        url = f"/api/workspaces/{ana.workspace_id}{_fill(path, ids)}"
        body = BODIES.get(path)
        response = hub.client.request(
            method,
            url,
            json={k: _fill(v, ids) if isinstance(v, str) else v for k, v in (body or {}).items()},
            headers=bo.headers(),
        )
        # a file answers as if it did not exist: its address alone says nothing
        code = "not_found" if path.startswith("/files/") else "forbidden"
        assert response.json()["error"]["code"] == code, (method, path, response.text)
        assert "Classified" not in response.text


def test_another_workspaces_ids_are_not_found_in_your_own(hub: HubClient):
    ana, ids = _world(hub)
    bo = hub.sign_up()
    for method, path in _operations(hub):
        if "{" not in path:
            continue
        if path == "/devices/{device_id}/tools":
            continue  # a device id is the app's own choice: bo registers his own device
        if (
            path == "/capabilities/{capability}/state"
            or path.startswith("/bindings/")
            or path.startswith("/providers/{provider_id}")
        ):
            continue  # capabilities, providers and systems are named alike in every workspace
        bo._use()
        body = BODIES.get(path) or {}
        response = hub.client.request(
            method,
            bo.url(_fill(path, ids)),
            json={k: _fill(v, ids) if isinstance(v, str) else v for k, v in body.items()},
            headers=bo.headers(),
        )
        assert response.status_code == 404, (method, path, response.text)
        assert "Classified" not in response.text
    # and bo cannot give ana's agent work from bo's own workspace
    response = bo.post("/tasks", {"title": "x", "targetAgentId": ids["agent_id"]})
    assert response.status_code == 404
    after = ana.ok(ana.get(f"/tasks/{ids['task_id']}"))
    assert after["task"]["cancelRequested"] is False
    assert after["interactions"][0]["status"] == "requested"
    pending = ana.ok(ana.get("/tool-calls?status=pending"))["toolCalls"]
    assert [c["id"] for c in pending] == [ids["tool_call_id"]]


def test_another_workspaces_subjects_have_no_raw_events_in_your_own(hub: HubClient):
    ana, ids = _world(hub)
    bo = hub.sign_up()
    subjects = {
        "task": ids["task_id"],
        "conversation": ids["conversation_id"],
        "interaction": ids["interaction_id"],
        "tool_call": ids["tool_call_id"],
        "agent": ids["agent_id"],
        "approval": ids["approval_id"],
    }
    for kind, ident in subjects.items():
        assert ana.get("/raw-events", params={"subject": f"{kind}:{ident}"}).status_code == 200
        bo._use()
        mine = hub.client.get(bo.url("/raw-events"), params={"subject": f"{kind}:{ident}"})
        assert mine.status_code == 404, (kind, mine.text)
        assert mine.json()["error"]["code"] == "not_found"
        bo._use()
        theirs = hub.client.get(
            f"/api/workspaces/{ana.workspace_id}/raw-events", params={"subject": f"{kind}:{ident}"}
        )
        assert theirs.json()["error"]["code"] == "forbidden", (kind, theirs.text)
        assert "Classified" not in mine.text + theirs.text
