"""``lineup provider test``: the shipped providers pass the contract kit, each deliberately
broken one fails at the rule it breaks, and the exit code says which (0 passed, 1 failed,
2 refused before running). Also ``keygen``, ``pack`` and ``new``: a package started from the
template passes as it is, and signed with a fresh key it verifies against that key."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineup.cli import main
from lineup.core.package import parse_trusted_keys, read_archive, verify
from tests.support.packages import BROKEN, BROKEN_ROOT, SHIPPED, SRC


def provider_test(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["provider", "test", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def failed_rules(result: dict[str, Any]) -> set[str]:
    return {c["rule"] for c in result["checks"] if not c["passed"]}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_shipped_provider_passes_the_contract_kit(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = provider_test(capsys, str(SHIPPED[name]))
    assert (code, result["passed"]) == (0, True), [c for c in result["checks"] if not c["passed"]]
    assert result["provider"] == name
    assert result["static"]["passed"] is True
    assert result["signature"]["state"] == "unsigned"
    rules = {c["rule"] for c in result["checks"]}
    assert {"catalogue", "schema", "permission", "error_mapping", "timeout_unknown"} <= rules
    assert {"idempotent_replay", "health"} <= rules


def test_each_capability_of_a_report_is_checked_under_each_rule_that_concerns_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, result = provider_test(capsys, str(SHIPPED["scheduling"]))
    publish = {
        c["rule"] for c in result["checks"] if c["capability"] == "scheduling.schedule.publish"
    }
    assert publish >= {
        "catalogue",
        "schema",
        "idempotent_replay",
        "permission",
        "error_mapping",
        "timeout_unknown",
        "async_job",
    }
    assert set(result["checks"][0]) == {"capability", "rule", "name", "passed", "detail"}


@pytest.mark.parametrize(("name", "rule"), sorted(BROKEN.items()))
def test_a_broken_provider_fails_the_kit_at_the_rule_it_breaks(
    name: str, rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = provider_test(capsys, str(BROKEN_ROOT / name))
    assert code == 1
    assert result["passed"] is False
    assert result["refused"] is None
    assert rule in failed_rules(result)
    assert "catalogue" not in failed_rules(result)
    assert "health" not in failed_rules(result)


def test_a_hung_call_is_reported_as_hung(capsys: pytest.CaptureFixture[str]) -> None:
    _, result = provider_test(capsys, str(BROKEN_ROOT / "hang"))
    [hung] = [c for c in result["checks"] if c["rule"] == "timeout_unknown" and not c["passed"]]
    assert hung["capability"] == "hang.status.read"
    assert "hung" in hung["detail"]


def test_the_text_report_names_the_failed_rule_and_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["provider", "test", str(BROKEN_ROOT / "wrong_schema")])
    out = capsys.readouterr().out
    assert code == 1
    assert "wrong_schema.count.read" in out
    assert "FAILED  schema" in out
    assert "'many' is not of type 'integer'" in out


def test_the_hub_can_run_the_kit_as_a_subprocess_and_read_its_json(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "lineup", "provider", "test", "--json", str(SHIPPED["files"])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] is True
    assert result["static"]["capabilities"] == ["files.list", "files.read", "files.write"]

    broken = subprocess.run(
        [sys.executable, "-m", "lineup", "provider", "test", "--json", str(BROKEN_ROOT / "hang")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert broken.returncode == 1, broken.stderr
    assert "timeout_unknown" in failed_rules(json.loads(broken.stdout))


def test_a_package_that_is_not_there_is_refused_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, result = provider_test(capsys, str(tmp_path / "nothing.lineup-provider"))
    assert code == 2
    assert result["refused"]["stage"] == "read"
    assert result["checks"] == []


# -- keygen, pack, new --------------------------------------------------------------------


def test_a_template_package_passes_the_kit_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["provider", "new", "crm", str(tmp_path / "crm")]) == 0
    capsys.readouterr()
    assert sorted(
        p.relative_to(tmp_path / "crm").as_posix() for p in (tmp_path / "crm").rglob("*.*")
    ) == [
        "README.md",
        "adapter.py",
        "provider.json",
        "tests/contract.py",
    ]
    code, result = provider_test(capsys, str(tmp_path / "crm"))
    assert code == 0, [c for c in result["checks"] if not c["passed"]]
    assert result["static"]["capabilities"] == ["crm.greeting.read"]


def test_new_refuses_a_bad_id_and_a_directory_in_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["provider", "new", "Not-An-Id", str(tmp_path / "x")]) == 2
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("mine")
    assert main(["provider", "new", "crm", str(tmp_path / "used")]) == 2
    assert [p.name for p in (tmp_path / "used").iterdir()] == ["keep.txt"]


def test_keygen_writes_a_private_key_only_its_owner_reads_and_prints_its_trusted_key_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "signing.key"
    assert main(["provider", "keygen", str(key)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    [trusted] = parse_trusted_keys(line)
    assert line.split()[2] == trusted.key_id
    assert main(["provider", "keygen", str(key)]) == 2  # never overwritten


def test_a_packed_package_verifies_against_its_key_and_passes_the_kit_trusting_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["provider", "new", "crm", str(tmp_path / "crm")])
    main(["provider", "keygen", str(tmp_path / "signing.key")])
    trusted = tmp_path / "trusted-keys"
    trusted.write_text(capsys.readouterr().out.strip().splitlines()[-1] + "\n")
    archive = tmp_path / "crm.lineup-provider"
    assert (
        main(
            [
                "provider",
                "pack",
                str(tmp_path / "crm"),
                "--key",
                str(tmp_path / "signing.key"),
                "-o",
                str(archive),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    verified = verify(read_archive(archive.read_bytes()), parse_trusted_keys(trusted.read_text()))
    assert verified.digest in printed
    assert verified.key.key_id in printed

    code, result = provider_test(capsys, str(archive), "--trust", str(trusted))
    assert code == 0
    assert result["signature"] == {
        "state": "verified",
        "digest": verified.digest,
        "keyId": verified.key.key_id,
        "development": False,
    }
    # the same archive, with no keys given: signed, not checked
    code, result = provider_test(capsys, str(archive))
    assert (code, result["signature"]["state"]) == (0, "unchecked")


def test_pack_refuses_a_package_that_fails_the_static_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["provider", "new", "crm", str(tmp_path / "crm")])
    main(["provider", "keygen", str(tmp_path / "signing.key")])
    manifest = tmp_path / "crm" / "provider.json"
    data = json.loads(manifest.read_text())
    data["capabilities"].append({**data["capabilities"][0], "id": "crm.unhandled.read"})
    manifest.write_text(json.dumps(data))
    capsys.readouterr()
    assert (
        main(
            [
                "provider",
                "pack",
                str(tmp_path / "crm"),
                "--key",
                str(tmp_path / "signing.key"),
                "-o",
                str(tmp_path / "out.lineup-provider"),
            ]
        )
        == 2
    )
    assert "claims" in capsys.readouterr().err
    assert not (tmp_path / "out.lineup-provider").exists()
