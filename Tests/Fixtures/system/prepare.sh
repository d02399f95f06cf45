#!/usr/bin/env bash
# Prepares the whole-system bed under .build/system-bed (once; later runs reuse it):
# - a Debian 12 root filesystem from Debian's packages (mmdebstrap, with the machine's own apt
#   sources: no mirror is named here), with systemd as init, dbus, bluez, python3 and the
#   libraries hrbridge's package depends on — but not hrbridge: the test installs the .deb;
# - the bed's two units in it (a virtual strap, the scenario driver) and mounts of the host's
#   root (read-only, for Bumble's venv) and of the run's folder (read-write);
# - an initramfs (busybox) that loads the modules the guest needs and hands over to systemd.
# Debian's kernel and Bumble's venv come from the real-BlueZ bed's prepare.sh. Prints the folder.
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=Tests/Fixtures/system
bed=.build/system-bed
mkdir -p "$bed"
bluez_bed=$(Tests/Fixtures/real-bluez/prepare.sh)
version=$(sed -n 's/.*kernel-\(.*\)$/\1/p' <<< "$(ls -d "$bluez_bed"/kernel-* | tail -n1)")
kernel="$bluez_bed/kernel-$version"

packages=systemd,systemd-sysv,dbus,bluez,udev,kmod,procps,curl,python3,apt,passwd,libdbus-1-3,libbluetooth3,libsqlite3-0,libmosquitto1
sources=$(ls /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 || true)
[ -n "$sources" ] || sources=/etc/apt/sources.list
stamp="$packages-$(cat "$here/prepare.sh" "$here"/*.service "$sources" | sha256sum | cut -c1-16)"
if [ "$(cat "$bed/rootfs.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$bed/rootfs" "$bed/rootfs.tmp"
    mmdebstrap --quiet --variant=minbase --include="$packages" bookworm "$bed/rootfs.tmp" "$sources"
    root="$bed/rootfs.tmp"
    echo hrbridge-bed > "$root/etc/hostname"
    mkdir -p "$root/host" "$root/out"
    cat > "$root/etc/fstab" <<'FSTAB'
/dev/vda / ext4 rw,errors=remount-ro 0 0
hostroot /host 9p trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose 0 0
out /out 9p trans=virtio,version=9p2000.L,msize=262144 0 0
FSTAB
    install -m644 "$here/hrbridge-bed-strap.service" "$here/hrbridge-bed-driver.service" "$root/etc/systemd/system/"
    ln -s /etc/systemd/system/hrbridge-bed-strap.service "$root/etc/systemd/system/multi-user.target.wants/"
    ln -s /etc/systemd/system/hrbridge-bed-driver.service "$root/etc/systemd/system/multi-user.target.wants/"
    # No login prompt on the console: the driver's output is what it shows.
    ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
    ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"
    mv "$root" "$bed/rootfs"
    echo "$stamp" > "$bed/rootfs.stamp"
fi

# The initramfs is rebuilt when init.sh or this script changes.
stamp="$version-$(cat "$here/init.sh" "$here/prepare.sh" Tests/Fixtures/real-bluez/initramfs.sh | sha256sum | cut -c1-16)"
if [ "$(cat "$bed/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
    # The disk and its file system, the 9p shares, Bluetooth with the virtual controller and the
    # crypto LE pairing needs (see the real-BlueZ bed's prepare.sh for the order of the RNGs).
    Tests/Fixtures/real-bluez/initramfs.sh "$kernel" "$version" "$here/init.sh" "$bed/initramfs.gz" \
        virtio_pci virtio_blk ext4 crc32c_generic sha3_generic jitterentropy_rng drbg bluetooth hci_vhci \
        ecdh_generic ecc cmac ecb af_alg algif_hash algif_skcipher 9pnet_virtio 9p
    cp "$kernel/boot/vmlinuz-$version" "$bed/vmlinuz"
    echo "$stamp" > "$bed/initramfs.stamp"
fi
echo "$bed"
