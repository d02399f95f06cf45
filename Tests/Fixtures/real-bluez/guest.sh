#!/bin/bash
# Runs in the guest (a chroot of the host's root, see init.sh): the system bus, then bed.py,
# which starts bluetoothd, the virtual controllers and straps, and hrbridge. $1 is the output
# folder (shared read-write with the host); everything is logged there.
out="$1"
bed="$(dirname "$0")"
venv="$(cat "$out/venv-path")"
mkdir -p /run/dbus
dbus-daemon --system --fork --nopidfile
echo "guest: system bus up"
"$venv/bin/python" -u "$bed/bed.py" "$out" > "$out/bed.log" 2>&1
echo "guest: bed exited with $?" | tee -a "$out/bed.log"
