#!/usr/bin/env bash
# Daemon benchmark (see daemon/bench_daemon.py): release builds of hrbridge and NotifyBenchmark,
# then 50 straps at 4 Hz through a private bus into `hrbridged` and out to 20 WebSocket clients.
set -euo pipefail
cd "$(dirname "$0")"
../scripts/setup-python.sh >/dev/null
(cd .. && swift build -c release --static-swift-stdlib --product hrbridged >/dev/null)
swift build -c release --product NotifyBenchmark >/dev/null
exec ../.venv/bin/python daemon/bench_daemon.py --hrbridged ../.build/release/hrbridged \
    --producer .build/release/NotifyBenchmark "$@"
