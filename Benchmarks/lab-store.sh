#!/usr/bin/env bash
# Raw signals in the store (see daemon/bench_lab_store.py): the release `hrbridge workout run`
# records N simulated H10s for H hours with and without --ecg --acc; store size per hour of ECG
# and the heart-rate queries on both stores, side by side.
set -euo pipefail
cd "$(dirname "$0")"
../scripts/ensure-system-packages.sh sqlite3
(cd .. && swift build -c release --product hrbridge >/dev/null)
hrbridge=$(realpath ../.build/release/hrbridge)
cd daemon
exec python3 bench_lab_store.py --hrbridge "$hrbridge" "$@"
