#!/usr/bin/env bash
# Side-by-side notification benchmark: hrbridge, bleak (PyPI, the client Linux users pick) and a
# libdbus "floor" client, on one private bus. Installs what it needs (gcc, libdbus-1-dev,
# dbus-daemon; bleak into the project's .venv), builds NotifyBenchmark in release mode, compiles
# the floor, and prints the Markdown tables recorded in README.md.
# Options are passed to compare/compare.py: --runs N (default 3), --quick (short, one run),
# --only-print (only the print-to-file scenario: `hrbridge monitor --json` against bleak and the floor).
set -euo pipefail
cd "$(dirname "$0")"
../scripts/ensure-system-packages.sh gcc libdbus-1-dev dbus-daemon pkg-config python3-venv
../scripts/setup-python.sh >/dev/null
if ! ../.venv/bin/python -c "import bleak" 2>/dev/null \
    || [ "$(../.venv/bin/pip show bleak 2>/dev/null | sed -n 's/^Version: //p')" != "3.1.0" ]; then
    ../.venv/bin/pip install --quiet --disable-pip-version-check "bleak==3.1.0"
fi
swift build -c release --product NotifyBenchmark >/dev/null
swift build -c release --static-swift-stdlib --product NotifyConsumer >/dev/null
# The CLI as `make release` builds it, for the print-to-file scenario.
(cd .. && swift build -c release --static-swift-stdlib --product hrbridge >/dev/null)
mkdir -p .build
cc -O2 -Wall -o .build/floor compare/floor.c $(pkg-config --cflags --libs dbus-1)
exec ../.venv/bin/python compare/compare.py --notify .build/release/NotifyBenchmark --consumer .build/release/NotifyConsumer --floor .build/floor --hrbridge ../.build/release/hrbridge "$@"
