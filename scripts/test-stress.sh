#!/usr/bin/env bash
# Runs the whole test suite N times in a row on the already-built tree (make test builds it),
# optionally with CPU hogs (one core, or every core), and prints each run's wall time and failures.
#
#   scripts/test-stress.sh N [--load | --load-both] [--no-real-bluez] [--no-benchmarks]
#
# --load keeps one core busy (a loaded CI machine); --load-both keeps every core busy.
#
# Each run is what make test runs: the suite, then the real-BlueZ bed in QEMU alone (about
# 2.5 minutes more); --no-real-bluez leaves the bed out.
#
# First it compiles the benchmarks package (Benchmarks/, release, its own .build): CI does not
# build it (a second full release build), and it once stopped compiling unnoticed. A benchmark
# that does not compile fails the stress run before it starts; --no-benchmarks skips the check.
#
# Exits 0 only when every run passed. Logs: .build/stress/run-K.log.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/test-stress.sh N [--load | --load-both] [--no-real-bluez] [--no-benchmarks]" >&2; exit 2; }
runs=""
load=false
hogs=1
real=true
benchmarks=true
for argument in "$@"; do
    case "$argument" in
        --load) load=true ;;
        --load-both) load=true; hogs=$(nproc) ;;
        --no-real-bluez) real=false ;;
        --no-benchmarks) benchmarks=false ;;
        ''|*[!0-9]*) usage ;;
        *) runs=$argument ;;
    esac
done
[ -n "$runs" ] && [ "$runs" -ge 1 ] || usage

if [ ! -d .build/debug ] || ! ls .build/debug/*.xctest >/dev/null 2>&1; then
    echo "no built tests: run 'make test' (or 'swift build --build-tests') first" >&2
    exit 2
fi

logs=.build/stress
mkdir -p "$logs"
if $benchmarks; then
    echo "compiling the benchmarks (swift build --package-path Benchmarks -c release)"
    if ! swift build --package-path Benchmarks -c release >"$logs/benchmarks-build.log" 2>&1; then
        grep -E 'error:' "$logs/benchmarks-build.log" | head -20 >&2
        echo "the benchmarks do not compile: see $logs/benchmarks-build.log" >&2
        exit 1
    fi
fi
hog_pids=()
stop_hog() {
    for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    hog_pids=()
}
trap 'stop_hog; exit 130' INT TERM
# However the script ends (a failed command under set -e included), no busy loop is left behind.
trap stop_hog EXIT
if $load; then
    # Busy loops pinned to cores 0… for the whole stress run, as a loaded CI machine would have.
    for core in $(seq 0 $((hogs - 1))); do
        if command -v taskset >/dev/null 2>&1; then
            taskset -c "$core" sh -c 'while :; do :; done' &
        else
            sh -c 'while :; do :; done' &
        fi
        hog_pids+=($!)
    done
    echo "CPU hog on $hogs core(s): pids ${hog_pids[*]}"
fi

passed=0
failed=0
summary=()
for run in $(seq 1 "$runs"); do
    log="$logs/run-$run.log"
    start=$(date +%s.%N)
    # As make test runs them: line-buffered, a hang bounded and digested (scripts/run-tests.sh).
    TEST_TIME_LIMIT=1200 scripts/run-tests.sh "stress-$run-unit" --skip-build --skip RealBlueZTests \
        --skip SystemTests >"$log" 2>&1
    status=$?
    if [ "$status" -eq 0 ] && $real; then
        TEST_TIME_LIMIT=2400 scripts/run-tests.sh "stress-$run-real-bluez" --skip-build --filter RealBlueZTests \
            >>"$log" 2>&1
        status=$?
        # The bed keeps only the last run's output: a failed run's is kept beside its log.
        [ "$status" -eq 0 ] || cp -a .build/real-bluez/runs "$logs/run-$run-real-bluez" 2>/dev/null || true
    fi
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    closing=$(grep -E 'Test run with [0-9]+ tests? .*(passed|failed)' "$log" | sed 's/ after .*//' | paste -sd ';' -)
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        line="run $run: passed in $seconds s — $closing"
    else
        failed=$((failed + 1))
        line="run $run: FAILED (exit $status) in $seconds s — ${closing:-no closing line} — $log"
    fi
    echo "$line"
    summary+=("$line")
    if [ "$status" -ne 0 ]; then
        # The failing tests and their first issues.
        grep -E 'Test .* (failed after|recorded an issue)' "$log" | head -20 | sed 's/^/    /'
        # What was running when a hang was stopped or a crash ended it.
        sed -n '/^Started and never ended/,+12p' "$log" | sed 's/^/    /'
    fi
done
stop_hog
echo "stress: $passed of $runs runs passed$($load && echo " ($hogs core(s) loaded)")"
[ "$failed" -eq 0 ]
