#!/usr/bin/env bash
# Runs `swift test ARGS…` with its output kept in .build/test-logs/NAME.log; when it fails, ends
# with a digest (failed tests, tests that started and never ended, the first crash report), so the
# last lines of a CI log say what went wrong even when a crash printed pages after it.
#
#   scripts/run-tests.sh NAME [swift test arguments…]
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1
shift
mkdir -p .build/test-logs
log=.build/test-logs/$name.log
# The crashed thread only, no registers or image list: the report stays short enough to read.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-preset=friendly,threads=crashed,registers=none,images=none}
${SWIFT:-swift} test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "=== swift test $* failed (exit $status); digest of $log ==="
    python3 scripts/test-digest.py "$log"
fi
exit "$status"
