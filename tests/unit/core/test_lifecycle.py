"""Where each lifecycle action takes a provider (seed 003 §5): a rollback is one step back
and can be undone the same way; disabling keeps the version; an uninstall forgets the kept
one; what a standing cannot do is refused with a reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.core.lifecycle import NOT_INSTALLED, Action, Standing, Version, after, refusal

V1 = Version("1.0.0", "sha256:" + "1" * 64, "package")
V2 = Version("2.0.0", "sha256:" + "2" * 64, "package")
BUNDLED = Version("0", "builtin:notes", "bundled")


def test_install_upgrade_rollback_and_back() -> None:
    installed = after("install", NOT_INSTALLED, V1)
    assert installed == Standing("enabled", V1, None)
    upgraded = after("upgrade", installed, V2)
    assert upgraded == Standing("enabled", V2, V1)
    rolled = after("rollback", upgraded)
    assert rolled == Standing("enabled", V1, V2)
    assert after("rollback", rolled) == upgraded


def test_disable_keeps_the_version_and_what_a_rollback_returns_to() -> None:
    upgraded = Standing("enabled", V2, V1)
    disabled = after("disable", upgraded)
    assert disabled == Standing("disabled", V2, V1)
    assert after("upgrade", disabled, Version("3.0.0", "sha256:" + "3" * 64, "package")).state == (
        "disabled"
    )
    assert after("enable", disabled) == upgraded


def test_a_bundled_provider_can_be_upgraded_and_rolled_back_to_what_the_hub_ships() -> None:
    shipped = Standing("enabled", BUNDLED)
    assert after("rollback", after("upgrade", shipped, V1)).current == BUNDLED


def test_uninstall_forgets_the_kept_version() -> None:
    removed = after("uninstall", Standing("disabled", V2, V1))
    assert removed.state == "removed" and removed.previous is None
    assert refusal("rollback", removed) is not None
    assert refusal("install", removed) is None


@pytest.mark.parametrize(
    ("action", "standing", "reason"),
    [
        ("install", Standing("enabled", V1), "installed"),
        ("install", Standing("disabled", V1), "installed"),
        ("upgrade", NOT_INSTALLED, "not_installed"),
        ("enable", Standing("enabled", V1), "enabled"),
        ("disable", Standing("disabled", V1), "disabled"),
        ("rollback", Standing("enabled", V1), "no_previous"),
        ("uninstall", NOT_INSTALLED, "not_installed"),
    ],
)
def test_what_a_standing_cannot_do_is_refused(
    action: Action, standing: Standing, reason: str
) -> None:
    problem = refusal(action, standing)
    assert problem is not None and problem[0] == reason
    with pytest.raises(ValueError):
        after(action, standing, V2)


versions = st.sampled_from([V1, V2, BUNDLED])
standings = st.builds(
    Standing,
    st.sampled_from(["enabled", "disabled", "removed"]),
    st.one_of(st.none(), versions),
    st.one_of(st.none(), versions),
)
actions = st.sampled_from(["install", "upgrade", "enable", "disable", "rollback", "uninstall"])


@given(standings, actions, versions)
def test_an_allowed_action_always_leaves_a_version_in_place(
    standing: Standing, action: Action, target: Version
) -> None:
    if refusal(action, standing) is not None:
        return
    result = after(action, standing, target)
    assert result.current is not None
    if action in ("enable", "disable"):
        assert result.current == standing.current and result.previous == standing.previous
