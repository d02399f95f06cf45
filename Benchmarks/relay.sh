#!/usr/bin/env bash
# Relay benchmark in the real-bluetoothd bed (Tests/Fixtures/real-bluez, QEMU + Bumble): the
# release build of hrbridge as a heart-rate sensor. Scenario `relay`: a Bumble strap sends 120
# frames at 4 Hz, `hrbridge relay` passes them to two Bumble apps (latency strap → app per frame,
# the relay's CPU seconds over the window); scenario `relaydaemon`: the daemon's [peripheral] and
# its /v1/ws WebSocket side by side (latency strap → app and strap → WebSocket message).
# Usage: Benchmarks/relay.sh [HRBRIDGE] (default: a release build made here).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
    hrbridge="$(realpath "$1")"
else
    swift build -c release --static-swift-stdlib --product hrbridge >/dev/null
    hrbridge="$(pwd)/.build/release/hrbridge"
fi
out=".build/real-bluez/bench-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
python3 - "$out/plan.json" "$hrbridge" <<'PY'
import json, sys
# The bed's frames (Tests/RealBlueZTests/RealBlueZBed.swift), then a frame too long for 20 bytes.
frames = ["0648", "1649a003", "0e4a6400", "1e4b0a00c003", "074d00", "164e9a03a203", "0650", "0751",
          "075100", "1652b003", "0653"]
long = "165a" + "".join("%02x%02x" % ((900 + i) & 0xFF, (900 + i) >> 8) for i in range(10))
json.dump({"hrbridge": sys.argv[2], "scenarios": ["relay", "relaydaemon"], "frames": frames,
           "relayFrames": frames + [long]}, open(sys.argv[1], "w"))
PY
Tests/Fixtures/real-bluez/boot.sh "$out"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    path = os.path.join(out, name, "result.json")
    return json.load(open(path)) if os.path.exists(path) else {}
relay, daemon = load("relay"), load("relaydaemon")
def row(label, stats):
    if stats:
        print("%-44s %5d  %7.1f  %7.1f" % (label, stats["count"], stats["p50"] * 1000, stats["p99"] * 1000))
print("%-44s %5s  %7s  %7s" % ("path (4 Hz)", "n", "p50 ms", "p99 ms"))
row("strap → hrbridge relay → 2 apps", relay.get("latencySeconds"))
row("strap → daemon [peripheral] → app", daemon.get("latencyApp"))
row("strap → daemon → /v1/ws WebSocket client", daemon.get("latencyWebSocket"))
cpu = relay.get("cpu")
if cpu:
    print("relay CPU at 4 Hz to 2 apps: %.2f s per minute (%.1f %% of a core) over %.0f s"
          % (cpu["perMinute"], cpu["perMinute"] / 60 * 100, cpu["windowSeconds"]))
for name in ("relay", "relaydaemon"):
    if os.path.exists(os.path.join(out, name, "failure.txt")):
        print("%s failed: see %s" % (name, os.path.join(out, name, "failure.txt")))
print("output: %s" % out)
PY
