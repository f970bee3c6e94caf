"""The open-files limit ``lineup serve`` asks for at start."""

from __future__ import annotations

import resource

from lineup.hub.connections import open_files_target


def test_the_soft_limit_is_raised_to_the_hard_limit():
    assert open_files_target(1024, 524288) == 524288


def test_an_unlimited_hard_limit_gives_a_large_finite_soft_limit():
    assert open_files_target(1024, resource.RLIM_INFINITY) == 1 << 20


def test_a_limit_is_never_lowered():
    assert open_files_target(4096, 4096) == 4096
    unlimited = resource.RLIM_INFINITY
    assert open_files_target(unlimited, unlimited) == unlimited
