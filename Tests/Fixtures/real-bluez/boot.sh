#!/usr/bin/env bash
# Boots the real-BlueZ guest once: OUT must hold plan.json (written by the test). The guest runs
# the plan's scenarios (bed.py) and powers off; its console goes to OUT/console.log.
# Exit status 0 when the guest ran, 2 when this host cannot run QEMU (the reason on stderr).
set -euo pipefail
out="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd -P)"
root="$(cd "$here/../../.." && pwd -P)"
if ! command -v qemu-system-x86_64 >/dev/null; then
    echo "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)" >&2
    exit 2
fi
bed="$("$here/prepare.sh")"
venv="$(realpath "$root/$bed/venv")"
echo "$venv" > "$out/venv-path"
# What the guest runs, and the host paths it needs (init.sh mounts them back where its tmpfs
# would hide them: a checkout under /tmp, /root, /var/tmp or /run). hrbridge as the plan names
# it and as it resolves. A path inside another one listed is covered by it.
hrbridge="$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hrbridge"])' "$out/plan.json")"
needed=("$root" "$here" "$venv" "$(dirname "$hrbridge")" "$(dirname "$(realpath "$hrbridge")")")
{
    echo "run $here/guest.sh"
    echo "out $out"
    kept=()
    for path in "${needed[@]}"; do
        covered=0
        for other in "${needed[@]}"; do [[ "$path/" != "$other/"?* ]] || covered=1; done
        for other in "${kept[@]}"; do [ "$path" != "$other" ] || covered=1; done
        [ "$covered" = 1 ] || { kept+=("$path"); echo "keep $path"; }
    done
} > "$out/guest-paths"
# No KVM in the machines this runs on (nested virtualisation hangs): TCG, which boots in ~10 s.
# The whole run takes 7-9 minutes on 2 quiet cores (the relay's scenarios included); the bound
# leaves room for a loaded machine.
timeout "${REAL_BLUEZ_TIMEOUT:-1500}" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu max -smp 2 -m 2048 -nographic -no-reboot -nic none \
    -kernel "$root/$bed/vmlinuz" -initrd "$root/$bed/initramfs.gz" \
    -append "console=ttyS0 quiet panic=-1 rdinit=/init" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=${out//,/,,},mount_tag=out,security_model=none" \
    </dev/null 2>&1 | tr -d '\r' > "$out/console.log"
