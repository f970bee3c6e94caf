#!/usr/bin/env bash
# Every benchmark quoted in docs/benchmarks.md, one after the other (about 25 minutes on the
# 2-core reference machine). Needs the local PostgreSQL (127.0.0.1:5432, user postgres),
# redis-server on the PATH (each run starts its own on a free port), and for the broker
# reference a NATS server on 127.0.0.1:4222 and `pip install -e '.[bench]'`.
# Measure on a quiet machine: every line printed ends with the load average at the time.
set -euo pipefail
cd "$(dirname "$0")"
PY=../.venv/bin/python
echo "== $(date -u +%FT%TZ) $(nproc) cores; $(uptime)"
$PY bench_brokers.py
$PY bench_latency.py --configs sqlite,pg,cluster2 --rates 100,1000,5000 --seconds 10
$PY bench_throughput.py --configs sqlite,pg,cluster2,cluster3 --seconds 10
# nodes held to a fixed CPU each (a cgroup per node), as separate machines: needs root
if [ "$(id -u)" = 0 ]; then
  $PY bench_throughput.py --configs pg,cluster2,cluster3 --agents 30 --workspaces 30 --seconds 10 --node-cpu 0.3
fi
$PY bench_catchup.py --missed 100000 --configs sqlite,pg
$PY bench_idle.py --agents 2000 --window 30 --deflate
$PY bench_idle.py --agents 2000 --window 30
$PY bench_idle.py --agents 10000 --window 60
$PY bench_writer.py --seconds 10
psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS bench_context" -c "CREATE DATABASE bench_context"
$PY bench_context.py --turns 2000 --pg postgresql+asyncpg://postgres@127.0.0.1:5432/bench_context
$PY bench_hub.py --seconds 10 --idle 1000
$PY bench_session_files.py --entries 20000 --pg
