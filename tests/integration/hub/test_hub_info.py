"""What the app learns about the hub it talks to: where agents connect, and the certificate
the hub serves, so a person can compare its fingerprint and agents can pin it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lineup.hub import create_app
from lineup.hub.tls import certificate_fingerprint, tls_from_options
from tests.integration.hub.conftest import fast_settings
from tests.support.hub_client import HubClient


@pytest.fixture
def tls_hub(hub_database: str, tmp_path: Path) -> Iterator[HubClient]:
    tls = tls_from_options(cert=None, key=None, self_signed=True, home=tmp_path)
    settings = fast_settings(hub_database, tmp_path, tls=tls)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        yield HubClient(client)


def test_a_hub_speaking_plain_http_says_so_and_gives_no_fingerprint(hub: HubClient):
    ana = hub.sign_up()
    info = ana.ok(ana.get("/hub"))
    assert info == {
        "hubUrl": "http://testserver",
        "websocketUrl": "ws://testserver/ws/agent",
        "tlsMode": "off",
        "tlsFingerprint": None,
    }
    code = ana.ok(ana.post("/pairing-codes", {}), 201)
    assert code["tlsFingerprint"] is None and "--tls-fingerprint" not in code["command"]
    paired = hub.client.post("/api/pairing/redeem", json={"code": code["code"], "name": "a"})
    assert paired.json()["tlsFingerprint"] is None


def test_a_self_signed_hub_gives_its_fingerprint_to_people_and_to_agents_at_pairing(
    tls_hub: HubClient, tmp_path: Path
):
    fingerprint = certificate_fingerprint(tmp_path / "tls" / "cert.pem")
    ana = tls_hub.sign_up()
    info = ana.ok(ana.get("/hub"))
    assert info["tlsMode"] == "self_signed"
    assert info["tlsFingerprint"] == fingerprint
    assert info["websocketUrl"] == "wss://testserver/ws/agent"
    code = ana.ok(ana.post("/pairing-codes", {}), 201)
    assert code["tlsFingerprint"] == fingerprint
    assert code["command"].endswith(f"--tls-fingerprint {fingerprint}")
    assert code["sdkCommand"].endswith(f"--tls-fingerprint {fingerprint}")
    paired = tls_hub.client.post("/api/pairing/redeem", json={"code": code["code"], "name": "a"})
    assert paired.status_code == 200
    assert paired.json()["tlsFingerprint"] == fingerprint


def test_the_self_signed_pair_is_made_once_and_kept(tmp_path: Path):
    first = tls_from_options(cert=None, key=None, self_signed=True, home=tmp_path)
    again = tls_from_options(cert=None, key=None, self_signed=True, home=tmp_path)
    assert first is not None and again is not None
    assert first.fingerprint == again.fingerprint
    assert (tmp_path / "tls" / "key.pem").stat().st_mode & 0o077 == 0


def test_a_certificate_of_ones_own_is_shown_but_not_given_to_agents_to_pin(
    hub_database: str, tmp_path: Path
):
    made = tls_from_options(cert=None, key=None, self_signed=True, home=tmp_path / "elsewhere")
    assert made is not None
    own = tls_from_options(cert=made.cert_file, key=made.key_file, self_signed=False, home=tmp_path)
    settings = fast_settings(hub_database, tmp_path, tls=own)
    with TestClient(create_app(settings), base_url="https://testserver") as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        info = ana.ok(ana.get("/hub"))
        assert info["tlsMode"] == "certificate" and info["tlsFingerprint"] == made.fingerprint
        code = ana.ok(ana.post("/pairing-codes", {}), 201)
        assert code["tlsFingerprint"] is None  # renewals must not break pinned agents


def test_unusable_tls_options_are_refused_with_a_reason(tmp_path: Path):
    from lineup.hub.tls import TlsSetupError

    with pytest.raises(TlsSetupError, match="go together"):
        tls_from_options(cert="c.pem", key=None, self_signed=False, home=tmp_path)
    with pytest.raises(TlsSetupError, match="does not exist"):
        tls_from_options(cert="c.pem", key="k.pem", self_signed=False, home=tmp_path)


def test_the_hub_info_is_for_members_only(hub: HubClient):
    response = hub.client.get("/api/workspaces/ws_nobody/hub")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
