#!/usr/bin/env bash
# Runs `swift test ARGS…` with its output kept in .build/test-logs/NAME.log; when it fails, ends
# with a digest (failed tests, tests that started and never ended, the first crash report), so the
# last lines of a CI log say what went wrong even when a crash printed pages after it.
#
#   TEST_TIME_LIMIT=SECONDS scripts/run-tests.sh NAME [swift test arguments…]
#
# A run past TEST_TIME_LIMIT (0: none) is a hang: the process tree is printed, the tests are
# stopped, and the digest names the tests that started and never ended; the run fails.
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1
shift
limit=${TEST_TIME_LIMIT:-0}
mkdir -p .build/test-logs
log=.build/test-logs/$name.log
# The crashed thread only, no registers or image list: the report stays short enough to read.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-preset=friendly,threads=crashed,registers=none,images=none}
watchdog=""
if [ "$limit" -gt 0 ]; then
    tests_shell=$$
    (
        sleeper=""
        trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM
        sleep "$limit" >/dev/null 2>&1 &
        sleeper=$!
        wait "$sleeper"
        # The script ended some other way meanwhile: nothing here is ours to stop.
        kill -0 "$tests_shell" 2>/dev/null || exit 0
        echo
        echo "=== swift test $* still running after ${limit} s: stopped as hung; the processes then ==="
        ps -eo pid,ppid,stat,etimes,args --forest | grep -v ' \[' | cut -c1-240
        # This run's swift test and everything it started (the test process, its peers), taken
        # first, then stopped top down so nothing can start another child meanwhile; not tee,
        # which ends with the output, nor this watchdog. (A forked dbus-daemon is not among them:
        # it holds none of the output, and the next run stops it.)
        descendants() { for child in $(pgrep -P "$1"); do echo "$child"; descendants "$child"; done; }
        for process in $(pgrep -P "$tests_shell"); do
            [ "$process" = "$BASHPID" ] || [ "$(ps -o comm= -p "$process")" = tee ] && continue
            tree="$process $(descendants "$process")"
            kill -KILL $tree 2>/dev/null
        done
    ) &
    watchdog=$!
    trap 'kill "$watchdog" 2>/dev/null' EXIT
fi
# Line-buffered (stdbuf reaches the test process through the environment): on a pipe, a killed
# run would otherwise lose its last block, and with it the tests that were running.
stdbuf -oL -eL "${SWIFT:-swift}" test "$@" 2>&1 | tee "$log"
status=$?
if [ -n "$watchdog" ]; then
    kill "$watchdog" 2>/dev/null
    wait "$watchdog" 2>/dev/null
fi
if [ "$status" -ne 0 ]; then
    echo
    echo "=== swift test $* failed (exit $status); digest of $log ==="
    python3 scripts/test-digest.py "$log"
fi
exit "$status"
