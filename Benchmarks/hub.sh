#!/usr/bin/env bash
# Hub benchmark (see daemon/bench_hub.py): release builds of hrbridge and NotifyBenchmark, then
# N gateways × M straps at 4 Hz → mosquitto → one hub with no radio → WebSocket clients.
set -euo pipefail
cd "$(dirname "$0")"
../scripts/setup-python.sh >/dev/null
(cd .. && swift build -c release --static-swift-stdlib --product hrbridged >/dev/null)
swift build -c release --product NotifyBenchmark >/dev/null
exec ../.venv/bin/python daemon/bench_hub.py --hrbridged ../.build/release/hrbridged \
    --producer .build/release/NotifyBenchmark "$@"
