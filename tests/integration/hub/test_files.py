"""Agents upload artifact content to the hub; members of the workspace (and only they) can
open it. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from tests.integration.hub.conftest import fast_settings
from tests.support.agents import AgentSocket
from tests.support.hub_client import HubClient
from tests.support.people import Person

REPORT = b"# Report\n\nApproved by Ana; done.\n"


def upload(
    hub: HubClient,
    creds: dict[str, Any],
    content: bytes = REPORT,
    *,
    name: str = "report.md",
    mime_type: str = "text/markdown",
    **headers: str,
) -> Any:
    hub.client.cookies.clear()
    return hub.client.post(
        "/api/agent/artifacts",
        params={"name": name},
        content=content,
        headers={
            "Authorization": f"Bearer {creds['credential']}",
            "Content-Type": mime_type,
            **headers,
        },
    )


def download(person: Person, url: str) -> Any:
    person._use()
    return person.client.get(url)


@pytest.fixture
def ana(hub: HubClient) -> Person:
    return hub.sign_up(name="Ana")


@pytest.fixture
def creds(hub: HubClient, ana: Person) -> dict[str, Any]:
    return hub.pair(ana)


def test_an_agent_uploads_a_file_and_gets_its_address_size_and_checksum(hub, ana, creds):
    response = upload(hub, creds)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["url"] == f"/api/workspaces/{ana.workspace_id}/files/{body['fileId']}"
    assert body["size"] == len(REPORT)
    assert body["sha256"] == hashlib.sha256(REPORT).hexdigest()
    assert (body["name"], body["mimeType"]) == ("report.md", "text/markdown")


def test_a_member_downloads_the_exact_bytes_as_a_download_that_cannot_run_script(hub, ana, creds):
    url = upload(hub, creds).json()["url"]
    response = download(ana, url)
    assert response.status_code == 200
    assert response.content == REPORT
    assert response.headers["content-disposition"].startswith("attachment;")
    assert 'filename="report.md"' in response.headers["content-disposition"]
    assert response.headers["x-content-type-options"] == "nosniff"
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "sandbox" in csp


def test_an_uploaded_html_or_svg_page_is_downloaded_never_rendered(hub, ana, creds):
    page = b"<script>fetch('/api/auth/me')</script>"
    for mime in ("text/html", "image/svg+xml"):
        url = upload(hub, creds, page, name="x.html", mime_type=mime).json()["url"]
        response = download(ana, url)
        assert response.headers["content-type"] == "application/octet-stream"
        assert response.headers["content-disposition"].startswith("attachment;")
        assert "sandbox" in response.headers["content-security-policy"]


def test_plain_text_and_images_open_in_the_browser(hub, ana, creds):
    url = upload(hub, creds, b"hello", name="a.txt", mime_type="text/plain; charset=UTF-8")
    response = download(ana, url.json()["url"])
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["content-disposition"].startswith("inline;")


def test_a_person_of_another_workspace_gets_not_found_as_for_a_missing_file(hub, ana, creds):
    url = upload(hub, creds).json()["url"]
    bo = hub.sign_up(name="Bo")
    stranger = download(bo, url)
    assert stranger.status_code == 404
    assert stranger.json()["error"]["code"] == "not_found"
    assert REPORT not in stranger.content
    missing = download(bo, f"/api/workspaces/{bo.workspace_id}/files/file_nope")
    assert missing.json()["error"] == stranger.json()["error"] | {
        "details": missing.json()["error"]["details"]
    }
    # Bo's own workspace id with Ana's file id: files are looked up within the workspace
    file_id = url.rsplit("/", 1)[1]
    crossed = download(bo, f"/api/workspaces/{bo.workspace_id}/files/{file_id}")
    assert crossed.status_code == 404


def test_without_a_session_the_file_is_not_served(hub, ana, creds):
    url = upload(hub, creds).json()["url"]
    hub.client.cookies.clear()
    response = hub.client.get(url)
    assert response.status_code == 401
    assert REPORT not in response.content


def test_an_upload_without_a_valid_agent_credential_is_refused(hub, creds):
    hub.client.cookies.clear()
    response = hub.client.post(
        "/api/agent/artifacts", params={"name": "x"}, content=b"x", headers={}
    )
    assert response.status_code == 401
    wrong = upload(hub, {"credential": "lna_not-a-real-one"})
    assert wrong.status_code == 401


def test_a_file_over_the_limit_is_refused_with_413(tmp_path: Path, hub_database: str):
    settings = fast_settings(hub_database, tmp_path, artifact_max_bytes=1000)
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        assert upload(hub, creds, b"x" * 1000).status_code == 201
        response = upload(hub, creds, b"x" * 1001)
        assert response.status_code == 413
        error = response.json()["error"]
        assert error["code"] == "invalid_argument"
        assert error["details"] == {"maxBytes": 1000}


def test_an_oversized_body_sent_without_a_length_is_refused_while_it_streams(
    tmp_path: Path, hub_database: str
):
    settings = fast_settings(hub_database, tmp_path, artifact_max_bytes=1000)

    def chunks():
        for _ in range(100):
            yield b"x" * 600

    with TestClient(create_app(settings), base_url="http://testserver") as client:
        hub = HubClient(client)
        creds = hub.pair(hub.sign_up())
        response = client.post(
            "/api/agent/artifacts",
            params={"name": "big.bin"},
            content=chunks(),
            headers={"Authorization": f"Bearer {creds['credential']}"},
        )
        assert response.status_code == 413


def test_a_checksum_the_content_does_not_match_is_refused(hub, creds):
    wrong = hashlib.sha256(b"something else").hexdigest()
    response = upload(hub, creds, **{"X-Content-SHA256": wrong})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["received"] == hashlib.sha256(REPORT).hexdigest()
    right = upload(hub, creds, **{"X-Content-SHA256": hashlib.sha256(REPORT).hexdigest()})
    assert right.status_code == 201


def test_a_retried_upload_with_the_same_idempotency_key_is_the_same_file(hub, creds):
    first = upload(hub, creds, **{"Idempotency-Key": "report-1"}).json()
    again = upload(hub, creds, **{"Idempotency-Key": "report-1"}).json()
    assert again == first
    other = upload(hub, creds, b"different", **{"Idempotency-Key": "report-1"})
    assert other.status_code == 409


@contextmanager
def _agent_with_task(
    hub: HubClient, ana: Person, creds: dict[str, Any]
) -> Iterator[tuple[AgentSocket, str]]:
    with hub.agent(creds) as agent:
        body = {"title": "Write the report", "targetAgentId": creds["agentId"]}
        task_id = ana.ok(ana.post("/tasks", body), 201)["task"]["id"]
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        yield agent, task_id


def test_an_artifact_can_point_at_an_uploaded_file_and_members_open_it(hub, ana, creds):
    url = upload(hub, creds).json()["url"]
    with _agent_with_task(hub, ana, creds) as (agent, task_id):
        answer = agent.call("artifact.created", {"name": "Report", "url": url}, taskId=task_id)
        assert answer["type"] == "ack", answer
    artifacts = ana.ok(ana.get(f"/tasks/{task_id}"))["artifacts"]
    assert [a["url"] for a in artifacts] == [url]
    assert download(ana, artifacts[0]["url"]).content == REPORT


def test_an_artifact_cannot_point_at_a_file_of_another_workspace_or_none(hub, ana, creds):
    bo = hub.sign_up(name="Bo")
    bo_url = upload(hub, hub.pair(bo)).json()["url"]
    with _agent_with_task(hub, ana, creds) as (agent, task_id):
        for url in (bo_url, f"/api/workspaces/{ana.workspace_id}/files/file_missing"):
            answer = agent.call("artifact.created", {"name": "R", "url": url}, taskId=task_id)
            assert answer["code"] == "invalid_argument", answer
        attachment = {"content": "see", "attachments": [{"name": "R", "url": bo_url}]}
        answer = agent.call("message.create", attachment, taskId=task_id)
        assert answer["code"] == "invalid_argument", answer


def test_an_artifact_with_a_file_or_script_url_is_refused_and_not_recorded(hub, ana, creds):
    with _agent_with_task(hub, ana, creds) as (agent, task_id):
        for url in ("file:///home/agent/report.md", "javascript:alert(1)", "data:,x"):
            answer = agent.call("artifact.created", {"name": "R", "url": url}, taskId=task_id)
            assert answer["code"] == "invalid_argument", answer
    assert ana.ok(ana.get(f"/tasks/{task_id}"))["artifacts"] == []
