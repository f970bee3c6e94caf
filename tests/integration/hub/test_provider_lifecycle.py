"""A provider's life in a workspace, end to end in the hub, on both databases: packages found
in the operator's directory are checked before anything in them runs; install, upgrade,
rollback, disable and uninstall wait for an owner's approval; the agent's reach follows
at once; executions, history and the audit chain survive every step."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from lineup.core import package as pkg
from lineup.hub import Settings, audit, create_app
from lineup.store import schema
from tests.integration.hub.conftest import fast_settings
from tests.support.governance import World
from tests.support.packages import Signer, package_files, signed_archive
from tests.support.providers import LedgerProvider
from tests.support.waiting import until


@pytest.fixture
def signer() -> Signer:
    return Signer.new()


@pytest.fixture
def available(tmp_path: Path) -> Path:
    path = tmp_path / "available"
    path.mkdir()
    return path


@pytest.fixture
def settings(hub_database: str, tmp_path: Path, signer: Signer, available: Path) -> Settings:
    return fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(LedgerProvider(),),
        job_poll_interval=0.01,
        provider_dir=available,
        provider_trusted_keys=signer.trust_file(tmp_path / "trusted-keys"),
        provider_config={"notes": {"instances": ["main"]}, "ledger": {"instances": ["books"]}},
    )


@pytest.fixture
def world(settings: Settings) -> Iterator[World]:
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        w = World(client)
        w.ana.send(
            "/policy/rules",
            {"capability": "notes.*", "effect": "allow", "projectId": w.project},
            201,
        )
        try:
            yield w
        finally:
            w.close()


def data_dir(settings: Settings) -> Path:
    return settings.home / "providers" / "data" / "notes"


def ref_of(world: World, version: str) -> str:
    for found in world.ana.read("/providers/available")["packages"]:
        if found["id"] == "notes" and found["version"] == version:
            assert found["refused"] is None, found
            return str(found["ref"])
    raise AssertionError(f"notes {version} is not available")


def change(world: World, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    return dict(world.ana.send("/providers/changes", body, status))


def decide(world: World, change_id: str, approve: bool = True, status: int = 200) -> Any:
    return world.ana.send(f"/providers/changes/{change_id}/decision", {"approve": approve}, status)


def apply(world: World, body: dict[str, Any]) -> dict[str, Any]:
    made = change(world, body)
    assert made["status"] == "pending", made
    done = decide(world, made["id"])
    assert done["status"] == "applied", done
    return dict(done)


def install(world: World, available: Path, signer: Signer, version: str = "1.0.0") -> None:
    signed_archive(available, signer, version=version)
    apply(world, {"action": "install", "package": ref_of(world, version)})


def provider(world: World) -> dict[str, Any]:
    return dict(world.ana.read("/providers/notes"))


def read_notes(world: World, invocation: str, capability: str = "notes.list") -> dict[str, Any]:
    ack = world.invoke(capability, {}, invocation)
    if ack["type"] != "ack":
        return dict(ack)
    return world.final(invocation)


# --- discovery: nothing runs ---------------------------------------------------------------


def test_discovery_checks_every_package_and_runs_none(
    world: World, available: Path, signer: Signer, tmp_path: Path
) -> None:
    marker = tmp_path / "imported"
    booby = package_files()
    booby["adapter.py"] = f"open({str(marker)!r}, 'w').close()\n".encode() + booby["adapter.py"]
    signed_archive(available, signer, version="1.0.0")
    # one byte changed after signing
    tampered = pkg.sign(booby, signer.private_key)
    tampered["adapter.py"] = tampered["adapter.py"].replace(b"notes", b"nOtes", 1)
    (available / "tampered.lineup-provider").write_bytes(pkg.write_archive(tampered))
    # signed by a key this hub does not trust
    stranger = Signer.new()
    (available / "stranger.lineup-provider").write_bytes(
        pkg.write_archive(pkg.sign(booby, stranger.private_key))
    )
    # unsigned
    (available / "unsigned.lineup-provider").write_bytes(pkg.write_archive(booby))
    # a manifest that claims a capability the adapter has no handler for
    claims = dict(booby)
    manifest = json.loads(claims[pkg.MANIFEST])
    manifest["capabilities"].append({**manifest["capabilities"][0], "id": "notes.delete"})
    claims[pkg.MANIFEST] = json.dumps(manifest).encode()
    (available / "claims.lineup-provider").write_bytes(
        pkg.write_archive(pkg.sign(claims, signer.private_key))
    )

    found = {p["file"]: p for p in world.ana.read("/providers/available")["packages"]}
    assert found["notes-1.0.0.lineup-provider"]["refused"] is None
    assert found["notes-1.0.0.lineup-provider"]["signer"] == pkg.key_id_of(signer.public_key)
    assert found["tampered.lineup-provider"]["refused"]["rule"] == "digest"
    assert found["stranger.lineup-provider"]["refused"]["rule"] == "signer"
    assert found["unsigned.lineup-provider"]["refused"]["rule"] == "unsigned"
    assert found["claims.lineup-provider"]["refused"]["rule"] == "claims"
    for name in ("tampered", "stranger", "unsigned", "claims"):
        refused = world.ana.post(
            "/providers/changes",
            {"action": "install", "package": found[f"{name}.lineup-provider"]["ref"]},
        )
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["details"]["reason"] == "package_refused"
    assert not marker.exists()
    assert not any(m.startswith("lineup_pkg_notes") for m in sys.modules)


# --- install ---------------------------------------------------------------------------


def test_install_shows_the_contract_and_surface_and_waits_for_approval(
    world: World, available: Path, signer: Signer
) -> None:
    signed_archive(available, signer)
    made = change(world, {"action": "install", "package": ref_of(world, "1.0.0")})
    assert made["status"] == "pending"
    assert made["surface"] == {
        "added": ["notes.export", "notes.list"],
        "removed": [],
        "changed": [],
    }
    assert made["contract"]["passed"] is True, made["contract"]
    assert made["blockers"] == []
    # not yet: the agent cannot reach it
    refused = read_notes(world, "r0")
    assert refused["type"] == "error" and refused["code"] == "not_found"
    ids = {p["id"] for p in world.ana.read("/providers")["providers"]}
    assert "notes" not in ids

    done = decide(world, made["id"])
    assert done["status"] == "applied"
    assert done["decidedBy"]["name"] == "Ana"
    view = provider(world)
    assert (view["version"], view["state"], view["source"]) == ("1.0.0", "enabled", "package")
    assert view["contract"]["passed"] is True
    assert read_notes(world, "r1")["status"] == "succeeded"
    kinds = [e["kind"] for e in audit_entries(world) if e["kind"].startswith("provider.")]
    assert kinds == [
        "provider.change_requested",
        "provider.change_applied",
        "provider.install",
    ]


def test_a_rejected_install_registers_nothing(
    world: World, available: Path, signer: Signer
) -> None:
    signed_archive(available, signer)
    made = change(world, {"action": "install", "package": ref_of(world, "1.0.0")})
    assert decide(world, made["id"], approve=False)["status"] == "rejected"
    assert "notes" not in {p["id"] for p in world.ana.read("/providers")["providers"]}
    again = world.ana.post(f"/providers/changes/{made['id']}/decision", {"approve": True})
    assert again.status_code == 409


def test_a_package_that_fails_the_contract_cannot_be_approved(
    world: World, available: Path, signer: Signer
) -> None:
    broken = package_files()
    broken["adapter.py"] = broken["adapter.py"].replace(
        b'return Completed(output={"notes": self._load("notes.json", [])})',
        b'return Completed(output={"notes": 7})',
    )
    signed_archive(available, signer, files=broken)
    made = change(world, {"action": "install", "package": ref_of(world, "1.0.0")})
    assert made["contract"]["passed"] is False
    failed = [c for c in made["contract"]["checks"] if not c["passed"]]
    assert any(c["rule"] == "schema" and c["capability"] == "notes.list" for c in failed), failed
    assert made["blockers"]
    refused = world.ana.post(f"/providers/changes/{made['id']}/decision", {"approve": True})
    assert refused.status_code == 409 and refused.json()["error"]["details"]["reason"] == "blocked"


def test_only_a_workspace_owner_changes_providers(
    world: World, available: Path, signer: Signer
) -> None:
    signed_archive(available, signer)
    ref = ref_of(world, "1.0.0")
    bo = world.member("editor")
    assert bo.get("/providers").status_code == 200
    refused = bo.post("/providers/changes", {"action": "install", "package": ref})
    assert refused.status_code == 403 and refused.json()["error"]["details"]["reason"] == "role"


def test_one_change_at_a_time_per_provider(world: World, available: Path, signer: Signer) -> None:
    install(world, available, signer)
    change(world, {"action": "disable", "providerId": "notes"})
    second = world.ana.post("/providers/changes", {"action": "uninstall", "providerId": "notes"})
    assert second.status_code == 409
    assert second.json()["error"]["details"]["reason"] == "pending_change"


# --- upgrade and rollback --------------------------------------------------------------


def test_upgrade_then_rollback_keeps_executions_and_audit(
    world: World, available: Path, signer: Signer
) -> None:
    install(world, available, signer)
    assert read_notes(world, "before")["status"] == "succeeded"
    signed_archive(available, signer, version="2.0.0")
    made = change(world, {"action": "upgrade", "package": ref_of(world, "2.0.0")})
    assert made["surface"]["added"] == ["notes.count"]
    assert (made["fromVersion"], made["toVersion"]) == ("1.0.0", "2.0.0")
    assert decide(world, made["id"])["status"] == "applied"
    view = provider(world)
    assert view["version"] == "2.0.0" and view["previous"]["version"] == "1.0.0"
    assert read_notes(world, "counted", "notes.count")["output"] == {"count": 0}

    apply(world, {"action": "rollback", "providerId": "notes"})
    view = provider(world)
    assert view["version"] == "1.0.0"
    gone = read_notes(world, "after", "notes.count")
    assert gone["type"] == "error" and gone["code"] == "not_found"
    assert read_notes(world, "still")["status"] == "succeeded"

    runs = world.ana.read("/executions")["executions"]
    assert {r["capability"] for r in runs} >= {"notes.list", "notes.count"}
    assert all(r["status"] == "succeeded" for r in runs)
    verification = world.client.portal.call(audit.verify_chain, world.state.store)
    assert verification.ok, verification.message
    actions = [c["action"] for c in world.ana.read("/providers/changes")["changes"]]
    assert actions == ["rollback", "upgrade", "install"]


def test_an_upgrade_must_be_newer(world: World, available: Path, signer: Signer) -> None:
    install(world, available, signer, version="2.0.0")
    signed_archive(available, signer, version="1.0.0")
    refused = world.ana.post(
        "/providers/changes", {"action": "upgrade", "package": ref_of(world, "1.0.0")}
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["details"]["reason"] == "not_newer"


# --- disable, enable, uninstall --------------------------------------------------------


def export_accepted(world: World, invocation: str) -> str:
    ack = world.invoke("notes.export", {"name": "month"}, invocation)
    assert ack["type"] == "ack", ack
    waiting = world.result(invocation)
    assert waiting["status"] == "waiting_for_approval"
    world.ana.ok(world.decide(waiting["approvalId"], {"decision": "approve"}))
    accepted = world.result(invocation)
    assert accepted["status"] == "accepted", accepted
    return str(accepted["executionId"])


def test_disable_blocks_new_calls_while_a_job_in_flight_stays_followed(
    world: World, available: Path, signer: Signer, settings: Settings
) -> None:
    install(world, available, signer)
    execution = export_accepted(world, "x1")
    apply(world, {"action": "disable", "providerId": "notes"})
    refused = read_notes(world, "r-off")
    assert refused["type"] == "error" and refused["code"] == "forbidden"
    assert refused["details"]["reason"] == "provider_disabled"
    assert world.ana.read(f"/executions/{execution}")["execution"]["status"] == "accepted"

    (data_dir(settings) / "release").touch()
    final = world.final("x1")
    assert final["status"] == "succeeded" and final["output"] == {"exported": 0}
    assert world.ana.read(f"/executions/{execution}")["execution"]["status"] == "succeeded"

    apply(world, {"action": "enable", "providerId": "notes"})
    assert read_notes(world, "r-on")["status"] == "succeeded"


def test_uninstall_waits_for_executions_in_flight_then_removes_and_keeps_history(
    world: World, available: Path, signer: Signer, settings: Settings
) -> None:
    install(world, available, signer)
    execution = export_accepted(world, "x2")
    made = change(world, {"action": "uninstall", "providerId": "notes"})
    assert made["blockers"] and "in flight" in made["blockers"][0]
    blocked = world.ana.post(f"/providers/changes/{made['id']}/decision", {"approve": True})
    assert blocked.status_code == 409
    (data_dir(settings) / "release").touch()
    until(
        lambda: world.ana.read(f"/executions/{execution}")["execution"]["status"] == "succeeded",
        "the export to end",
    )
    assert decide(world, made["id"])["status"] == "applied"

    assert "notes" not in {p["id"] for p in world.ana.read("/providers")["providers"]}
    assert world.ana.get("/providers/notes").status_code == 404
    assert world.ana.read(f"/executions/{execution}")["execution"]["status"] == "succeeded"
    unpacked = settings.home / "providers" / "packages" / "notes"
    assert not any(unpacked.glob("1.0.0-*"))
    # and it can come back
    apply(world, {"action": "install", "package": ref_of(world, "1.0.0")})
    assert read_notes(world, "back")["status"] == "succeeded"


# --- health ------------------------------------------------------------------------------


def test_health_is_probed_on_demand_and_kept_newest_first(
    world: World, available: Path, signer: Signer, settings: Settings
) -> None:
    install(world, available, signer)
    assert world.ana.send("/providers/notes/health", {}, 200)["ok"] is True
    (data_dir(settings) / "sick").touch()
    sick = world.ana.send("/providers/notes/health", {}, 200)
    assert sick["ok"] is False
    history = provider(world)["health"]
    assert [h["ok"] for h in history[:2]] == [False, True]


def test_the_console_shows_the_adapters_log(world: World, available: Path, signer: Signer) -> None:
    install(world, available, signer)
    export_accepted(world, "x3")
    logs = provider(world)["logs"]
    assert any("export month accepted" in line["message"] for line in logs), logs


# --- helpers -----------------------------------------------------------------------------


def audit_entries(world: World) -> list[dict[str, Any]]:
    def read(r: Any) -> list[dict[str, Any]]:
        rows = r.connection.execute(
            select(schema.audit_entries).order_by(schema.audit_entries.c.seq)
        )
        return [dict(row._mapping) for row in rows]

    assert world.client.portal is not None
    return world.client.portal.call(world.state.store.read, read)


# --- a provider the hub ships ----------------------------------------------------------


def test_a_bundled_provider_is_listed_disabled_and_enabled_like_a_package(world: World) -> None:
    shipped = {p["id"]: p for p in world.ana.read("/providers")["providers"]}["ledger"]
    assert (shipped["source"], shipped["state"], shipped["signer"]) == ("bundled", "enabled", None)
    assert {c["id"] for c in shipped["capabilities"]} >= {"ledger.balance.read"}
    apply(world, {"action": "disable", "providerId": "ledger"})
    refused = read_notes(world, "l1", "ledger.balance.read")
    assert refused["details"]["reason"] == "provider_disabled"
    apply(world, {"action": "enable", "providerId": "ledger"})
    assert read_notes(world, "l2", "ledger.balance.read")["status"] == "succeeded"


def test_a_bundled_provider_upgraded_to_a_package_rolls_back_to_what_the_hub_ships(
    world: World, available: Path, signer: Signer
) -> None:
    signed_archive(available, signer, provider_id="ledger", version="1.0.0")
    made = change(world, {"action": "upgrade", "package": ref_of_id(world, "ledger", "1.0.0")})
    assert "ledger.list" in made["surface"]["added"]
    assert "ledger.balance.read" in made["surface"]["removed"]
    assert decide(world, made["id"])["status"] == "applied"
    assert read_notes(world, "p1", "ledger.list")["status"] == "succeeded"
    apply(world, {"action": "rollback", "providerId": "ledger"})
    back = {p["id"]: p for p in world.ana.read("/providers")["providers"]}["ledger"]
    assert back["source"] == "bundled" and back["previous"]["version"] == "1.0.0"
    assert read_notes(world, "p2", "ledger.balance.read")["status"] == "succeeded"


def ref_of_id(world: World, provider_id: str, version: str) -> str:
    for found in world.ana.read("/providers/available")["packages"]:
        if found["id"] == provider_id and found["version"] == version:
            return str(found["ref"])
    raise AssertionError(f"{provider_id} {version} is not available")


def test_people_stay_bound_to_a_system_across_upgrade_and_rollback(
    world: World, available: Path, signer: Signer
) -> None:
    for version in ("1.0.0", "2.0.0"):
        files = package_files("notes", version, auth="password-exchange")
        signed_archive(available, signer, version=version, files=files)
    apply(world, {"action": "install", "package": ref_of(world, "1.0.0")})
    unbound = read_notes(world, "b0")
    assert unbound["code"] == "unauthenticated" and unbound["details"]["nextStep"] == "bind"
    bound = world.ana.post(
        "/bindings/notes/main/password", {"username": "ana", "password": "right"}
    )
    assert bound.status_code == 204, bound.text
    assert read_notes(world, "b1")["status"] == "succeeded"

    apply(world, {"action": "upgrade", "package": ref_of(world, "2.0.0")})
    assert status_of(world) == "bound"
    assert read_notes(world, "b2", "notes.count")["status"] == "succeeded"
    apply(world, {"action": "rollback", "providerId": "notes"})
    assert status_of(world) == "bound"
    assert read_notes(world, "b3")["status"] == "succeeded"
    assert provider(world)["bindings"] == {"bound": 1, "expired": 0}

    apply(world, {"action": "disable", "providerId": "notes"})
    apply(world, {"action": "uninstall", "providerId": "notes"})
    assert all(a["providerId"] != "notes" for a in world.ana.read("/bindings")["accounts"])
    kinds = [e["kind"] for e in audit_entries(world)]
    assert kinds.count("binding.bound") == 1 and kinds.count("binding.removed") == 1


def status_of(world: World) -> str:
    accounts = world.ana.read("/bindings")["accounts"]
    return str(next(a["status"] for a in accounts if a["providerId"] == "notes"))


def test_another_workspace_neither_sees_nor_decides_a_workspaces_providers(
    world: World, available: Path, signer: Signer
) -> None:
    install(world, available, signer)
    pending = change(world, {"action": "disable", "providerId": "notes"})
    world.client.cookies.clear()
    eve = world.hub.sign_up(name="Eve")  # her own workspace
    assert "notes" not in {p["id"] for p in eve.read("/providers")["providers"]}
    assert eve.get("/providers/notes").status_code == 404
    assert eve.read("/providers/changes")["changes"] == []
    stolen = eve.post(f"/providers/changes/{pending['id']}/decision", {"approve": True})
    assert stolen.status_code == 404
    assert world.ana.read("/providers/changes?status=pending")["changes"][0]["id"] == pending["id"]
