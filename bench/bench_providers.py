"""What a provider package costs before it runs, and what its contract run costs: the checks a
hub makes on every discovery and install (read the archive, tree digest, Ed25519 signature,
manifest, static check of the adapter's claims), and the contract kit run as the hub runs it
(``python -m lineup provider test --json`` in a child process), on the two packages LineUp
ships.

    .venv/bin/python bench/bench_providers.py [--rounds 200] [--kit-runs 3]

Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lineup
from lineup.core import package as pkg
from lineup.providers.packaging.loader import read_package_dir

SHIPPED = Path(lineup.__file__).resolve().parent / "providers"


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def checks(name: str, rounds: int) -> None:
    private, public = pkg.new_signing_key()
    trusted = [pkg.TrustedKey(pkg.key_id_of(public), public)]
    archive = pkg.write_archive(pkg.sign(read_package_dir(SHIPPED / name), private))
    times: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        files = pkg.read_archive(archive)
        verified = pkg.verify(files, trusted)
        pkg.static_check(files, verified.manifest, lineup.__version__)
        times.append(time.perf_counter() - start)
    print(
        f"{name}: {len(archive) / 1024:.1f} KiB archive, {len(files)} files; "
        f"checks before running p50 {_ms(times, 0.5):.2f} ms, p95 {_ms(times, 0.95):.2f} ms"
    )


def kit(name: str, runs: int) -> None:
    times: list[float] = []
    report: dict[str, object] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as work:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "lineup", "provider", "test", str(SHIPPED / name), "--json"],
                capture_output=True,
                cwd=work,
                check=False,
            )
            times.append(time.perf_counter() - start)
            report = json.loads(done.stdout)
    checks_run = report.get("checks")
    count = len(checks_run) if isinstance(checks_run, list) else 0
    print(
        f"{name}: contract kit in a child process, {count} checks, passed={report.get('passed')}: "
        f"median {statistics.median(times) * 1000:.0f} ms over {runs} runs"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--kit-runs", type=int, default=3)
    args = parser.parse_args()
    for name in ("scheduling", "files"):
        checks(name, args.rounds)
        kit(name, args.kit_runs)


if __name__ == "__main__":
    main()
