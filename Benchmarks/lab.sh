#!/usr/bin/env bash
# Lab benchmark (see daemon/bench_lab.py): the release hrbridged with N simulated H10s, heart rate
# and RR only against ECG + acceleration, all into LSL (liblsl from the pylsl wheel in .venv).
set -euo pipefail
cd "$(dirname "$0")"
../scripts/setup-python.sh >/dev/null
(cd .. && swift build -c release --static-swift-stdlib --product hrbridged >/dev/null)
liblsl=$(realpath "$(ls ../.venv/lib/python3*/site-packages/pylsl/lib/liblsl.so | head -1)")
hrbridged=$(realpath ../.build/release/hrbridged)
cd daemon
exec ../../.venv/bin/python bench_lab.py --hrbridged "$hrbridged" --liblsl "$liblsl" "$@"
