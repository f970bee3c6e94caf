"""TLS end to end with real processes: a hub serving its self-signed certificate, agents that
pin its fingerprint (and one whose pin is wrong), and plain ``ws://`` to another machine
refused before the agent sends anything."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lineup.hub.tls import certificate_fingerprint, lan_address
from tests.e2e.processes import AgentProcess, HubProcess
from tests.support.people import Person
from tests.support.waiting import until

WORK = ["--work-seconds", "0.05"]
WRONG_PIN = ":".join(["AB"] * 32)


@pytest.fixture
def tls_hub(database_url: str | None, tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path / "hub", database_url, tls=True)
    process.home.mkdir()
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def ana(tls_hub: HubProcess) -> Iterator[Person]:
    """A person whose browser trusts the hub's certificate (she accepted it once)."""
    trusting = ssl.create_default_context(cafile=str(tls_hub.certificate))
    person = Person.at(tls_hub.url, "ana@example.test", verify=trusting)
    yield person
    person.close()


def _finished(agent: AgentProcess) -> int:
    assert agent.process is not None
    return agent.process.wait(60)


def _online(ana: Person) -> dict[str, Any] | None:
    agents = ana.read("/agents")["agents"]
    return agents[0] if agents and agents[0]["status"] == "online" else None


def test_an_agent_that_pins_the_hubs_fingerprint_connects_and_does_its_work(
    tls_hub: HubProcess, ana: Person, tmp_path: Path
):
    fingerprint = certificate_fingerprint(tls_hub.certificate)
    assert tls_hub.log is not None
    assert fingerprint in tls_hub.log.read_text()  # printed at start, for a person to compare
    info = ana.read("/hub")
    assert info["tlsMode"] == "self_signed"
    assert info["tlsFingerprint"] == fingerprint
    assert info["websocketUrl"].startswith("wss://")
    issued = ana.send("/pairing-codes", {}, 201)
    assert issued["tlsFingerprint"] == fingerprint
    assert f"--tls-fingerprint {fingerprint}" in issued["command"]

    state = tmp_path / "agent"
    agent = AgentProcess(
        tls_hub.url, state, issued["code"], [*WORK, "--tls-fingerprint", fingerprint]
    ).start()
    try:
        agent_id = until(lambda: _online(ana), "the pinned agent to come online")["id"]
        ana.confirm_agent(agent_id)
        task_id = ana.send(
            "/tasks", {"title": "Migrate the orders database", "targetAgentId": agent_id}, 201
        )["task"]["id"]

        def waiting() -> dict[str, Any] | None:
            detail = ana.read(f"/tasks/{task_id}")
            return detail if detail["task"]["status"] == "waiting_for_human" else None

        (interaction,) = until(waiting, "the agent's approval request")["interactions"]
        ana.send(
            f"/interactions/{interaction['id']}/respond", {"response": {"optionId": "approve"}}
        )

        def succeeded() -> dict[str, Any] | None:
            detail = ana.read(f"/tasks/{task_id}")
            return detail if detail["task"]["status"] == "succeeded" else None

        (report,) = until(succeeded, "the task to succeed")["artifacts"]  # uploaded, pinned
        assert ana.client.get(report["url"]).text.startswith("# Migrate the orders database")
    finally:
        agent.stop()
    saved = (state / "credentials.json").read_text()
    assert fingerprint in saved and '"websocketUrl": "wss://' in saved

    # restarted from its saved credentials alone, it pins the same certificate
    again = AgentProcess(tls_hub.url, state, None, WORK).start()
    try:
        until(lambda: _online(ana), "the agent to reconnect with its saved pin")
    finally:
        again.stop()


def test_an_agent_with_a_wrong_pin_refuses_the_hub_before_sending_its_code(
    tls_hub: HubProcess, ana: Person, tmp_path: Path
):
    code = ana.send("/pairing-codes", {}, 201)["code"]
    wrong = AgentProcess(
        tls_hub.url, tmp_path / "wrong", code, [*WORK, "--tls-fingerprint", WRONG_PIN]
    ).start()
    assert _finished(wrong) == 2
    log = wrong.tail()
    assert "fingerprint_mismatch" in log
    assert certificate_fingerprint(tls_hub.certificate) in log  # what the hub presented
    assert not (tmp_path / "wrong" / "credentials.json").exists()
    assert ana.read("/agents")["agents"] == []

    # the code was never sent: the same code still pairs an agent that trusts the hub
    right = AgentProcess(
        tls_hub.url,
        tmp_path / "right",
        code,
        [*WORK, "--tls-fingerprint", certificate_fingerprint(tls_hub.certificate)],
    ).start()
    try:
        until(lambda: _online(ana), "the agent with the right pin")
    finally:
        right.stop()


def test_an_agent_without_a_pin_is_told_the_fingerprint_it_was_shown(
    tls_hub: HubProcess, ana: Person, tmp_path: Path
):
    code = ana.send("/pairing-codes", {}, 201)["code"]
    agent = AgentProcess(tls_hub.url, tmp_path / "agent", code, WORK).start()
    assert _finished(agent) == 2
    log = agent.tail()
    assert "untrusted_certificate" in log
    assert certificate_fingerprint(tls_hub.certificate) in log
    assert "LINEUP_TLS_FINGERPRINT" in log


def test_a_client_that_does_not_trust_the_certificate_cannot_talk_to_the_hub(
    tls_hub: HubProcess,
):
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        Person.at(tls_hub.url, "eve@example.test")


LAN = lan_address()


@pytest.mark.skipif(LAN is None, reason="this machine has no address besides loopback")
def test_plain_ws_to_another_machine_is_refused_unless_explicitly_allowed(
    database_url: str | None, tmp_path: Path
):
    hub = HubProcess(tmp_path / "hub", database_url, env={"LINEUP_HOST": "0.0.0.0"})
    hub.home.mkdir()
    hub.start()
    ana = Person.at(hub.url, "ana@example.test")
    try:
        code = ana.send("/pairing-codes", {}, 201)["code"]
        lan_url = f"http://{LAN}:{hub.port}"
        refused = AgentProcess(lan_url, tmp_path / "plain", code, WORK).start()
        assert _finished(refused) == 2
        assert "plain_text_to_remote_host" in refused.tail()
        assert ana.read("/agents")["agents"] == []  # the code never left the agent

        # a saved plain-text address to another machine is refused at connect, too (final)
        allowed = AgentProcess(
            lan_url, tmp_path / "allowed", code, [*WORK, "--allow-insecure"]
        ).start()
        try:
            until(lambda: _online(ana), "the agent allowed plain text explicitly")
        finally:
            allowed.stop()
        saved = tmp_path / "allowed" / "credentials.json"
        text = saved.read_text()
        assert f'"websocketUrl": "ws://{LAN}:' in text
        saved.write_text(text.replace('"allowInsecure": true', '"allowInsecure": false'))
        again = AgentProcess(lan_url, tmp_path / "allowed", None, WORK).start()
        assert _finished(again) == 3
        assert "plain_text_to_remote_host" in again.tail()
    finally:
        ana.close()
        hub.stop()
