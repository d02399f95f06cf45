"""Reads a `swift test` log and prints what a failure report needs: the tests that failed, the tests
that started and never ended (a crash or a hang kills the process in the middle of them), and the
first crash report. Used by scripts/run-tests.sh; `python3 scripts/test-digest.py LOG`."""
import re
import sys

STARTED = re.compile(r'^◇ Test "(.*)" started\.$')
ENDED = re.compile(r'^[✔✘➜] Test "(.*?)"(?: with \d+ test cases?)? (?:passed|failed|skipped)')
ISSUE = re.compile(r'^✘ Test "(.*?)"(?: with \d+ test cases?)? recorded an issue')
CRASH = re.compile(r"\*\*\* (Program crashed|Signal)|^Fatal error|Fatal error:|SWIFT TASK CONTINUATION MISUSE"
                   r"|Simultaneous accesses|double free|corrupted|arguments to dbus_.* were incorrect")


def main(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = [line.rstrip("\n") for line in handle]
    running = {}
    issues = []
    crash = None
    for number, line in enumerate(lines):
        if match := STARTED.match(line):
            running[match.group(1)] = number
        elif match := ENDED.match(line):
            running.pop(match.group(1), None)
        if ISSUE.match(line):
            issues.append(line)
        if crash is None and CRASH.search(line):
            crash = number
    if issues:
        print("Issues recorded:")
        for line in issues[:40]:
            print("  " + line[:600])
    if running:
        print("Started and never ended (running when the process stopped):")
        for name in sorted(running, key=running.get):
            print('  "%s" (log line %d)' % (name, running[name] + 1))
    if crash is not None:
        print("First crash report (log line %d):" % (crash + 1))
        # What the process printed just before, then the report's first lines.
        for line in lines[max(0, crash - 5):crash + 60]:
            print("  " + line[:300])
    if not issues and not running and crash is None:
        print("No failed test, crash or unfinished test in the log: see its last lines above.")


if __name__ == "__main__":
    main(sys.argv[1])
