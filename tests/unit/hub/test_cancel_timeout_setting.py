"""The hub's cancel timeout (README "LINEUP_CANCEL_TIMEOUT"): read from the environment, shown
as the system level of ``tasks.cancelTimeoutMinutes``, and never zero."""

from __future__ import annotations

import math

import pytest

from lineup.hub.config import Settings
from lineup.hub.scoped_settings import system_values


def test_the_cancel_timeout_comes_from_the_environment_in_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEUP_CANCEL_TIMEOUT", "90")
    settings = Settings.from_env()
    assert settings.cancel_timeout == 90.0
    assert system_values(settings)["tasks.cancelTimeoutMinutes"] == 2


def test_by_default_a_cancel_waits_ten_minutes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LINEUP_CANCEL_TIMEOUT", raising=False)
    settings = Settings.from_env()
    assert settings.cancel_timeout == 600.0
    assert system_values(settings)["tasks.cancelTimeoutMinutes"] == 10


@pytest.mark.parametrize("seconds", [0.0, -5.0, math.nan])
def test_a_cancel_timeout_that_is_not_positive_is_refused_at_start(seconds: float) -> None:
    with pytest.raises(ValueError, match="LINEUP_CANCEL_TIMEOUT"):
        Settings(database_url="sqlite:///unused.db", cancel_timeout=seconds)
