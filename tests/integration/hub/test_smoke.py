from tests.support.hub_client import HubClient
from tests.support.waiting import until


def test_the_mvp_loop_through_http_and_the_agent_socket(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task = ana.ok(
            ana.post("/tasks", {"title": "Tidy deps", "targetAgentId": creds["agentId"]}), 201
        )
        task_id = task["task"]["id"]
        assigned = agent.next_of("task.assigned")
        assert assigned["payload"]["taskId"] == task_id
        assert agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["type"] == "ack"
        ack = agent.call(
            "task.status_changed", {"status": "running", "progress": 30}, taskId=task_id
        )
        assert ack["type"] == "ack" and ack["sequence"], ack
        ack = agent.call(
            "interaction.requested",
            {
                "interaction": {
                    "id": "int_1",
                    "type": "approval",
                    "title": "Migrate?",
                    "risk": "high",
                }
            },
            taskId=task_id,
        )
        assert ack["type"] == "ack", ack
        inbox = ana.ok(ana.get("/inbox"))
        assert inbox["counts"]["waitingForMe"] == 1
        answer = ana.ok(
            ana.post("/interactions/int_1/respond", {"response": {"optionId": "approve"}})
        )
        assert answer["status"] == "resolved"
        resolved = agent.next_of("interaction.resolved")
        assert resolved["payload"]["response"] == {"optionId": "approve"}
        agent.call(
            "task.status_changed", {"status": "succeeded", "summary": "done"}, taskId=task_id
        )
        detail = ana.ok(ana.get(f"/tasks/{task_id}"))
        assert detail["task"]["status"] == "succeeded"
        assert [e["type"] for e in detail["timeline"]][:2] == ["task.created", "task.accepted"]
    until(lambda: ana.ok(ana.get("/agents"))["agents"][0]["status"] == "offline", "agent offline")
