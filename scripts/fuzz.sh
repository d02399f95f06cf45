#!/usr/bin/env bash
# Fuzzes the GATT decoders, the advertisement decoder (Polar's manufacturer data), the Polar PMD
# frame decoders (ECG, acceleration) and the D-Bus
# value reader with libFuzzer (Swift's -sanitize=fuzzer, with AddressSanitizer). Each harness is
# built from the library's own sources plus its entry point in Tests/Fuzz, starts from the small
# corpus committed in Tests/Fuzz/corpus and runs RUNS inputs (default 10 million). Exits non-zero
# on the first crash (the input is kept in .build/fuzz/). Usage: scripts/fuzz.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000000}
out=.build/fuzz
mkdir -p "$out"
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)

# swift-log as a module of its own (the DBus sources import it).
if [ ! -f "$out/Logging.swiftmodule" ]; then
    [ -d .build/checkouts/swift-log ] || swift package resolve >/dev/null
    swiftc -sanitize=address -parse-as-library -O -emit-library -static -emit-module -module-name Logging -package-name swift_log \
        -emit-module-path "$out/Logging.swiftmodule" -o "$out/libLogging.a" $(find .build/checkouts/swift-log/Sources/Logging -name "*.swift")
fi

# swift-metrics' CoreMetrics and Metrics too (the DBus sources count forged signals).
if [ ! -f "$out/Metrics.swiftmodule" ]; then
    [ -d .build/checkouts/swift-metrics ] || swift package resolve >/dev/null
    swiftc -sanitize=address -parse-as-library -O -emit-library -static -emit-module -module-name CoreMetrics -package-name swift_metrics \
        -emit-module-path "$out/CoreMetrics.swiftmodule" -o "$out/libCoreMetrics.a" $(find .build/checkouts/swift-metrics/Sources/CoreMetrics -name "*.swift")
    swiftc -sanitize=address -parse-as-library -O -emit-library -static -emit-module -module-name Metrics -package-name swift_metrics \
        -I "$out" -emit-module-path "$out/Metrics.swiftmodule" -o "$out/libMetrics.a" $(find .build/checkouts/swift-metrics/Sources/Metrics -name "*.swift")
fi

echo "building the GATT harness"
swiftc "${flags[@]}" -module-name GATTFuzz $(find Sources/GATT -name '*.swift') Tests/Fuzz/GATTFuzzer.swift -o "$out/gatt" 2>&1 | { grep -v "Cannot export local symbol" || true; }
echo "building the advertisement harness"
swiftc "${flags[@]}" -module-name AdvertisementFuzz $(find Sources/GATT -name '*.swift') Tests/Fuzz/AdvertisementFuzzer.swift -o "$out/advertisement" 2>&1 | { grep -v "Cannot export local symbol" || true; }
echo "building the PMD harness"
swiftc "${flags[@]}" -module-name PMDFuzz $(find Sources/GATT -name '*.swift') Tests/Fuzz/PMDFuzzer.swift -o "$out/pmd" 2>&1 | { grep -v "Cannot export local symbol" || true; }
echo "building the D-Bus harness"
swiftc "${flags[@]}" -module-name DBusFuzz -I Sources/CDBus $(pkg-config --cflags dbus-1 | sed 's/-I/-Xcc -I/g') \
    -I "$out" -L "$out" -lLogging -lMetrics -lCoreMetrics $(find Sources/DBus -name '*.swift') Tests/Fuzz/DBusFuzzer.swift -o "$out/dbus" 2>&1 | { grep -v "Cannot export local symbol" || true; }

# Seeds for the D-Bus harness: real messages marshalled by GLib (BlueZ's signals and replies).
mkdir -p Tests/Fuzz/corpus/dbus
if [ -z "$(ls -A Tests/Fuzz/corpus/dbus)" ]; then
    /usr/bin/python3 Tests/Fuzz/dbus_seeds.py Tests/Fuzz/corpus/dbus
fi

status=0
for harness in gatt advertisement pmd dbus; do
    work="$out/corpus-$harness"
    mkdir -p "$work"
    echo "fuzzing $harness: $runs inputs"
    start=$(date +%s)
    if ! "$out/$harness" -runs="$runs" -max_len=4096 -artifact_prefix="$out/$harness-" -print_final_stats=1 \
        "$work" "Tests/Fuzz/corpus/$harness" >"$out/$harness.log" 2>&1; then
        echo "$harness: CRASH, see $out/$harness.log"
        tail -30 "$out/$harness.log"
        status=1
        continue
    fi
    seconds=$(( $(date +%s) - start ))
    echo "$harness: $runs inputs in ${seconds} s, no crash ($(grep -E 'cov:' "$out/$harness.log" | tail -1 | grep -oE 'cov: [0-9]+' || true))"
done
exit $status
