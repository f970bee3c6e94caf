"""The public surface of lineup.sdk, and the small pure pieces behind it."""

from __future__ import annotations

import inspect

import lineup.sdk
from lineup.sdk import Backoff


def test_the_public_surface_is_sorted_and_importable():
    assert lineup.sdk.__all__ == sorted(lineup.sdk.__all__)
    for name in lineup.sdk.__all__:
        assert getattr(lineup.sdk, name) is not None


def test_the_public_surface_names_what_agents_use():
    expected = {
        "Agent",
        "AgentConfig",
        "AgentHost",
        "Approval",
        "Capabilities",
        "CapabilitySpec",
        "Choice",
        "ConnectionRefusedByHub",
        "DirectEndpoint",
        "DirectModeError",
        "DirectOptions",
        "HostedAgent",
        "InputAnswer",
        "InvocationOutcome",
        "MessageContext",
        "Review",
        "TaskCancelled",
        "TaskContext",
        "Transport",
        "new_direct_token",
        "pair",
        "rotate_credential",
    }
    assert expected <= set(lineup.sdk.__all__)


def test_every_public_class_and_function_is_documented():
    for name in lineup.sdk.__all__:
        member = getattr(lineup.sdk, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            assert member.__doc__, name


def test_backoff_grows_exponentially_up_to_its_cap():
    backoff = Backoff(initial=0.2, maximum=10.0)
    no_jitter = [backoff.delay(attempt, rand=lambda: 0.0) for attempt in range(8)]
    assert no_jitter == [0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 10.0, 10.0]
    assert backoff.delay(1000, rand=lambda: 0.0) == 10.0


def test_backoff_jitter_shortens_a_delay_by_at_most_its_fraction():
    backoff = Backoff(initial=1.0, maximum=1.0, jitter=0.5)
    assert backoff.delay(0, rand=lambda: 0.999999) > 0.5
    assert backoff.delay(0, rand=lambda: 0.0) == 1.0


def test_a_task_cancelled_is_a_cancelled_error():
    import asyncio

    assert issubclass(lineup.sdk.TaskCancelled, asyncio.CancelledError)


def test_the_sdk_imports_neither_the_hub_nor_direct_mode():
    """An agent installs and runs without the hub's code; direct mode builds on the SDK's
    public names, never the other way round."""
    import subprocess
    import sys

    probe = (
        "import sys, lineup.sdk, lineup.sdk.demo; "
        "print(sorted(m for m in sys.modules if m.startswith(('lineup.hub', 'lineup.direct'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
