"""One audit chain for a cluster: three hub nodes on one PostgreSQL database record
governance actions at the same time — every workspace's projects, members and rules — and the
chain they write together has no gap and no fork, and ``lineup audit verify`` finds it whole."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.cluster.conftest import Node
from tests.e2e.processes import LINEUP
from tests.support.people import Person

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROUNDS = 6


def _work(node: Node, name: str) -> int:
    """A person on ``node`` makes projects and rules; how many audited actions that was."""
    person = Person.at(node.url, f"{name}@example.test")
    try:
        actions = 0
        for i in range(ROUNDS):
            project = person.send("/projects", {"name": f"{name} {i}"}, 201)["id"]
            person.send(
                "/policy/rules",
                {"capability": "scheduling.*", "effect": "allow", "projectId": project},
                201,
            )
            actions += 2
        return actions
    finally:
        person.close()


def test_three_nodes_write_one_chain_that_verifies(
    start_cluster: Callable[..., list[Node]], pg_database: str
) -> None:
    nodes = start_cluster(LINEUP_PROVIDERS="")
    with ThreadPoolExecutor(len(nodes)) as pool:
        done = list(pool.map(_work, nodes, [f"p{n.name}" for n in nodes]))
    assert sum(done) == 2 * ROUNDS * len(nodes)
    environment = {**os.environ, "LINEUP_DATABASE_URL": pg_database}
    verified = subprocess.run(
        [LINEUP, "audit", "verify"], env=environment, capture_output=True, text=True, timeout=60
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"{sum(done)} entries" in verified.stdout
    exported = subprocess.run(
        [LINEUP, "audit", "export"], env=environment, capture_output=True, text=True, timeout=60
    )
    seqs = [int(line.split('"seq":')[1].split(",")[0]) for line in exported.stdout.splitlines()]
    assert seqs == list(range(1, sum(done) + 1))
