"""``lineup direct`` refuses bad options with a clear message before serving anything."""

from __future__ import annotations

import pytest

from lineup.cli import main


@pytest.fixture(autouse=True)
def _no_token_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LINEUP_DIRECT_TOKEN", raising=False)


def test_a_short_token_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["direct", "--token", "short", "--port", "0"]) == 2
    assert "at least 8 characters" in capsys.readouterr().err


def test_an_agent_module_that_cannot_be_imported_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["direct", "--port", "0", "--module", "no_such_package.bot:build_agent"])
    assert code == 2
    assert "no_such_package" in capsys.readouterr().err


def test_a_module_without_a_function_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["direct", "--port", "0", "--module", "my_pkg.bot"]) == 2
    assert "PKG.MOD:FUNC" in capsys.readouterr().err


def test_the_command_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "direct" in capsys.readouterr().out
