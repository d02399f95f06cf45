#!/usr/bin/env bash
# The daemon benchmarks, this tree's build against an older revision's, alternating in one run:
# 50 straps × 20 WebSocket clients, the class of 60 (14 linked, 46 broadcasting) and the hub
# (3 gateways × 20 straps). Prints each run's figures and the medians side by side.
#
#   Benchmarks/daemon-compare.sh OLD_REVISION [--runs 3]
#
# The old revision is built in release mode in a git worktree under .build/bench-old/. A
# revision from before the daemon had its own executable (`hrbridge daemon`) is run through a
# wrapper that execs it, so that the process measured is the daemon itself.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: Benchmarks/daemon-compare.sh OLD_REVISION [--runs N]" >&2; exit 2; }
old_revision=$(git rev-parse --short "$1")
shift
runs=3
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

scripts/setup-python.sh >/dev/null
old_tree=.build/bench-old/$old_revision
if [ ! -d "$old_tree" ]; then
    mkdir -p .build/bench-old
    git worktree add --detach "$old_tree" "$old_revision" >/dev/null
fi
if [ -d "$old_tree/Sources/hrbridged" ]; then
    (cd "$old_tree" && swift build -c release --static-swift-stdlib --product hrbridged >/dev/null)
    old_daemon=$PWD/$old_tree/.build/release/hrbridged
else
    (cd "$old_tree" && swift build -c release --static-swift-stdlib --product hrbridge >/dev/null)
    old_daemon=$PWD/$old_tree/hrbridged-wrapper
    printf '#!/bin/sh\nexec %s daemon "$@"\n' "$PWD/$old_tree/.build/release/hrbridge" >"$old_daemon"
    chmod +x "$old_daemon"
fi
swift build -c release --static-swift-stdlib --product hrbridged >/dev/null
new_daemon=$PWD/.build/release/hrbridged
(cd Benchmarks && swift build -c release --product NotifyBenchmark >/dev/null)
producer=$PWD/Benchmarks/.build/release/NotifyBenchmark

results=.build/bench-compare-daemon
rm -rf "$results"
mkdir -p "$results"
python=$PWD/.venv/bin/python
for run in $(seq 1 "$runs"); do
    for build in old new; do
        daemon=$old_daemon
        [ "$build" = new ] && daemon=$new_daemon
        echo "run $run, $build build ($daemon)" >&2
        "$python" Benchmarks/daemon/bench_daemon.py --hrbridged "$daemon" --producer "$producer" \
            --seconds 10 --clients 20 --straps 50 >"$results/daemon-$build-$run.md"
        "$python" Benchmarks/daemon/bench_daemon.py --hrbridged "$daemon" --producer "$producer" \
            --class-run --straps 60 --link-limit 14 --clients 5 --seconds 30 >"$results/class-$build-$run.md"
        "$python" Benchmarks/daemon/bench_hub.py --hrbridged "$daemon" --producer "$producer" \
            --gateways 3 --straps 20 --seconds 20 --clients 5 >"$results/hub-$build-$run.md"
    done
done
exec "$python" Benchmarks/daemon/compare_summary.py "$results" --old "$old_revision" \
    --new "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo '+changes')"
