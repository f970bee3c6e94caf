"""An agent starts its own task (`task.create`) and withdraws its own question
(`interaction.cancel`) — what an MCP host does through `lineup mcp`: the task is the agent's
and people follow it like any other; a withdrawn card leaves the inbox, and one a person
answered first cannot be withdrawn (the answer stands)."""

from __future__ import annotations

from tests.support.hub_client import HubClient


def test_an_agent_starts_a_task_of_its_own_in_a_new_conversation(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        ack = agent.call("task.create", {"title": "Upgrade the DB", "taskId": "task_db"})
        assert ack["type"] == "ack", ack
        assigned = agent.next_of("task.assigned")
        assert (assigned["taskId"], assigned["payload"]["title"]) == ("task_db", "Upgrade the DB")
        assert agent.call("task.accepted", {"taskId": "task_db"}, taskId="task_db")["type"] == "ack"

        task = ana.ok(ana.get("/tasks/task_db"))["task"]
        assert (task["status"], task["targetAgentId"]) == ("running", creds["agentId"])
        assert task["createdBy"] == f"agent:{creds['agentId']}"
        conversation = ana.ok(ana.get(f"/conversations/{task['conversationId']}"))
        assert creds["agentId"] in str(conversation)

        again = agent.call("task.create", {"title": "Another", "taskId": "task_db"})
        assert again["type"] == "error" and again["code"] == "conflict"


def test_an_agent_withdraws_its_unanswered_question_but_not_an_answered_one(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        for card in ("int_a", "int_b"):
            ask = {"interaction": {"id": card, "type": "approval", "title": f"Ship {card}?"}}
            assert agent.call("interaction.requested", ask)["type"] == "ack"

        ack = agent.call(
            "interaction.cancel", {"interactionId": "int_a", "reason": "Answered in the IDE."}
        )
        assert ack["type"] == "ack", ack
        card = ana.ok(ana.get("/interactions/int_a"))
        assert (card["status"], card["cancelReason"]) == ("cancelled", "Answered in the IDE.")
        assert agent.next_of("interaction.cancelled")["payload"]["interactionId"] == "int_a"
        late = ana.post("/interactions/int_a/respond", {"response": {"optionId": "approve"}})
        assert late.status_code == 409

        ana.ok(ana.post("/interactions/int_b/respond", {"response": {"optionId": "reject"}}))
        refused = agent.call("interaction.cancel", {"interactionId": "int_b"})
        assert refused["type"] == "error" and refused["code"] == "conflict"
        assert refused["details"]["reason"] == "resolved"
        assert ana.ok(ana.get("/interactions/int_b"))["status"] == "resolved"


def test_an_agent_cannot_withdraw_another_agents_question(hub: HubClient):
    ana = hub.sign_up()
    first, second = hub.pair(ana), hub.pair(ana)
    with hub.agent(first) as asking, hub.agent(second) as other:
        ask = {"interaction": {"id": "int_mine", "type": "approval", "title": "Mine?"}}
        assert asking.call("interaction.requested", ask)["type"] == "ack"
        refused = other.call("interaction.cancel", {"interactionId": "int_mine"})
        assert refused["type"] == "error" and refused["code"] == "forbidden"
