#!/usr/bin/env bash
# Boots the real-BlueZ guest once: OUT must hold plan.json (written by the test). The guest runs
# the plan's scenarios (bed.py) and powers off; its console goes to OUT/console.log.
# Exit status 0 when the guest ran, 2 when this host cannot run QEMU (the reason on stderr).
set -euo pipefail
out="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
if ! command -v qemu-system-x86_64 >/dev/null; then
    echo "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)" >&2
    exit 2
fi
bed="$("$here/prepare.sh")"
echo "$root/$bed/venv" > "$out/venv-path"
# No KVM in the machines this runs on (nested virtualisation hangs): TCG, which boots in ~10 s.
timeout "${REAL_BLUEZ_TIMEOUT:-900}" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 2048 -nographic -no-reboot -nic none \
    -kernel "$root/$bed/vmlinuz" -initrd "$root/$bed/initramfs.gz" \
    -append "console=ttyS0 quiet panic=-1 rdinit=/init hrbridge.run=$here/guest.sh hrbridge.out=$out" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$out,mount_tag=out,security_model=none" \
    </dev/null 2>&1 | tr -d '\r' > "$out/console.log"
