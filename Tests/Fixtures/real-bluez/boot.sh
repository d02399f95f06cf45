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
# leaves room for a loaded machine. A boot that never reaches init (seen under TCG on a loaded
# host: nothing after SeaBIOS for the whole bound) is stopped once init is overdue and tried
# again, once: "init: guest ready" on the console is the readiness line.
boot() {
    rm -f "$out/qemu.pid" "$out/qemu.status"
    {
        set +e
        timeout "${REAL_BLUEZ_TIMEOUT:-1500}" qemu-system-x86_64 \
            -accel tcg,thread=multi -cpu max -smp 2 -m 2048 -nographic -no-reboot -nic none \
            -pidfile "$out/qemu.pid" \
            -kernel "$root/$bed/vmlinuz" -initrd "$root/$bed/initramfs.gz" \
            -append "console=ttyS0 quiet panic=-1 rdinit=/init" \
            -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
            -virtfs "local,path=${out//,/,,},mount_tag=out,security_model=none" \
            </dev/null 2>&1
        echo $? > "$out/qemu.status"
    } | stdbuf -oL tr -d '\r' > "$out/console.log" &
    local pipeline=$! waited=0
    until grep -q "init: guest ready" "$out/console.log" 2>/dev/null; do
        if ! kill -0 "$pipeline" 2>/dev/null; then break; fi
        if [ "$waited" -ge "${REAL_BLUEZ_BOOT_LIMIT:-480}" ]; then
            echo "boot.sh: no init after ${waited} s: the boot is stopped" >&2
            kill "$(cat "$out/qemu.pid" 2>/dev/null)" 2>/dev/null || true
            wait "$pipeline" || true
            return 125
        fi
        sleep 1
        waited=$((waited + 1))
    done
    wait "$pipeline" || true
    return "$(cat "$out/qemu.status" 2>/dev/null || echo 1)"
}
status=0
boot || status=$?
if [ "$status" = 125 ]; then
    cp "$out/console.log" "$out/console-first-boot.log"
    status=0
    boot || status=$?
fi
exit "$status"
