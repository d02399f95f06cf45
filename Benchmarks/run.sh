#!/usr/bin/env bash
# Runs the benchmarks and prints the figures recorded in README.md.
# Time: release build, median of 15 runs of 1,000,000 frames.
# Allocations: valgrind counts heap allocations for 0 and for 100,000 frames (one run each);
# the difference divided by 100,000 is allocations per frame.
set -euo pipefail
cd "$(dirname "$0")"
../scripts/ensure-system-packages.sh valgrind
swift build -c release >/dev/null
bin=.build/release/DecodeBenchmark

echo "== decode time (valid vectors only)"
"$bin" --frames 1000000 --runs 15
echo "== decode time (valid + malformed vectors)"
"$bin" --frames 1000000 --runs 15 --with-malformed

allocs() {
    valgrind --tool=memcheck --leak-check=no "$bin" --frames "$1" --runs 1 "${@:2}" 2>&1 \
        | sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ','
}
for mode in "" "--with-malformed"; do
    base=$(allocs 0 $mode)
    loaded=$(allocs 100000 $mode)
    echo "== allocations ${mode:-(valid only)}: $base at 0 frames, $loaded at 100000 frames"
    awk -v a="$base" -v b="$loaded" 'BEGIN { printf "allocations_per_frame=%.3f\n", (b - a) / 100000 }'
done

echo "== builder ingest, 24 h at 4 Hz (heart rate + RR), statistics, zones, HRV and energy on"
.build/release/BuilderBenchmark --hours 24 --hz 4 --runs 5 --batch 4
.build/release/BuilderBenchmark --hours 24 --hz 4 --runs 5 --batch 1

echo "== DFA α1 window update (artefact correction + DFA of 2 minutes of beats), 2,000 runs each"
.build/release/HRVBenchmark --runs 2000

echo "== BlueZ notifications: emit on the bus -> decoded measurement (10,000 paced at 2,000/s, then 20,000 unpaced)"
.build/release/NotifyBenchmark --count 10000 --rate 2000
.build/release/NotifyBenchmark --count 20000 --rate 0

echo "== store: one year of 1 Hz heart rate (31.5 million samples), batched ingest, hourly and daily buckets"
.build/release/StoreBenchmark --days 365
