#!/usr/bin/env bash
# The whole-system bed: OUT is the run's folder, OLD_DEB and NEW_DEB two builds of the package
# (the second newer, for the upgrade). Makes a fresh disk from the prepared root filesystem, then
# boots it twice under QEMU with systemd as PID 1: boot 1 installs the package and plays the
# service's scenarios, then reboots; boot 2 checks what survived, upgrades and purges. The guest's
# driver (guest.py) writes what it saw to OUT; the assertions are the Swift tests'
# (Tests/SystemTests). Exit status 0 when both boots ran, 2 when this host cannot run the bed.
set -euo pipefail
out="$(realpath "$1")"
old_deb="$(realpath "$2")"
new_deb="$(realpath "$3")"
here="$(cd "$(dirname "$0")" && pwd -P)"
root="$(cd "$here/../../.." && pwd -P)"
for tool in qemu-system-x86_64 mmdebstrap mkfs.ext4; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed (make test-setup installs it)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "the system bed builds a root filesystem with its owners: it needs root" >&2; exit 2; }
bed="$root/$("$here/prepare.sh")"
venv="$(realpath "$root/.build/real-bluez/venv")"
# apt installs a local package by its canonical file name only.
cp "$old_deb" "$new_deb" "$out/"
cat > "$out/bed.env" <<ENV
VENV=$venv
FIXTURES=$here
BLUEZ_FIXTURES=$root/Tests/Fixtures/real-bluez
OLD_DEB=/out/$(basename "$old_deb")
NEW_DEB=/out/$(basename "$new_deb")
ENV
disk="$bed/disk.ext4"
rm -f "$disk"
mkfs.ext4 -q -F -L hrbridge-bed -d "$bed/rootfs" "$disk" 3G

# KVM when it works (nested virtualisation here hangs at boot): a kernel without a root panics
# at once, and -no-reboot then ends QEMU; otherwise TCG.
accel="tcg,thread=multi"
if [ -w /dev/kvm ] && timeout 20 qemu-system-x86_64 -accel kvm -m 256 -nographic -no-reboot -nic none \
    -kernel "$bed/vmlinuz" -append "console=ttyS0 panic=-1" </dev/null 2>&1 | grep -q "Kernel panic"; then
    accel=kvm
fi
echo "accel $accel" > "$out/accel"

for phase in 1 2; do
    echo "boot $phase: $(date -u +%T)" >> "$out/boots"
    timeout "${SYSTEM_BED_TIMEOUT:-1500}" qemu-system-x86_64 \
        -accel "$accel" -cpu max -smp 2 -m 2048 -nographic -no-reboot -nic none \
        -kernel "$bed/vmlinuz" -initrd "$bed/initramfs.gz" \
        -append "console=ttyS0 quiet panic=-1 rdinit=/init hrbridge.phase=$phase systemd.show_status=false" \
        -drive "file=$disk,format=raw,if=virtio,cache=unsafe" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=${out//,/,,},mount_tag=out,security_model=none" \
        </dev/null 2>&1 | tr -d '\r' > "$out/console-$phase.log" || true
    echo "boot $phase ended: $(date -u +%T)" >> "$out/boots"
done
rm -f "$disk"
