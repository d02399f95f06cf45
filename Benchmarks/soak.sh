#!/usr/bin/env bash
# Soak benchmark (see daemon/bench_soak.py): a release build of hrbridged, then a class of 60
# simulated straps recording at 1× for 2 hours, the daemon's RSS, FDs, threads and CPU every minute.
set -euo pipefail
cd "$(dirname "$0")"
../scripts/setup-python.sh >/dev/null
(cd .. && swift build -c release --static-swift-stdlib --product hrbridged >/dev/null)
exec ../.venv/bin/python daemon/bench_soak.py --hrbridged ../.build/release/hrbridged "$@"
