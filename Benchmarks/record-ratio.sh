#!/usr/bin/env bash
# Issue 35's gateway target: recording every strap within 1.2 × the CPU of relaying them.
# 50 straps at 4 Hz through a private bus into the release `hrbridged` and out to 20 WebSocket
# clients, relaying and recording (`--record`, SQLite) alternating, the order reversed every other
# round. Prints each window's CPU and the ratio three ways: medians, sums, per-round median.
#
#   Benchmarks/record-ratio.sh [--rounds 6] [--seconds 30] [--hrbridged PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=6
seconds=30
daemon=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --hrbridged) daemon=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
scripts/setup-python.sh >/dev/null
if [ -z "$daemon" ]; then
    swift build -c release --static-swift-stdlib --product hrbridged >/dev/null
    daemon=$PWD/.build/release/hrbridged
fi
(cd Benchmarks && swift build -c release --product NotifyBenchmark >/dev/null)
producer=$PWD/Benchmarks/.build/release/NotifyBenchmark
results=.build/bench-record-ratio
rm -rf "$results"
mkdir -p "$results"
for round in $(seq 1 "$rounds"); do
    order="relay record"
    [ $((round % 2)) -eq 0 ] && order="record relay"
    for mode in $order; do
        extra=()
        [ "$mode" = record ] && extra=(--record)
        .venv/bin/python Benchmarks/daemon/bench_daemon.py --hrbridged "$daemon" --producer "$producer" \
            --seconds "$seconds" --clients 20 --straps 50 "${extra[@]}" >"$results/$round-$mode.md"
        echo "round $round, $mode: $(grep -E 'daemon CPU under load' "$results/$round-$mode.md" | cut -d'|' -f3)" >&2
    done
done
.venv/bin/python - "$results" "$rounds" <<'PY'
import re, statistics, sys
results, rounds = sys.argv[1], int(sys.argv[2])
def cpu(round, mode):
    text = open(f"{results}/{round}-{mode}.md").read()
    return float(re.search(r"daemon CPU under load \| ([0-9.]+) %", text).group(1))
relay = [cpu(r, "relay") for r in range(1, rounds + 1)]
record = [cpu(r, "record") for r in range(1, rounds + 1)]
print("| rounds | relaying | recording | recording / relaying: medians, sums, per-round median |")
print("|---|---|---|---|")
print("| %d | %s %% | %s %% | %.2f ×, %.2f ×, %.2f × |" % (
    rounds, ", ".join("%.1f" % value for value in relay), ", ".join("%.1f" % value for value in record),
    statistics.median(record) / statistics.median(relay), sum(record) / sum(relay),
    statistics.median(b / a for a, b in zip(relay, record))))
PY
