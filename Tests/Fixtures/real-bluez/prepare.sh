#!/usr/bin/env bash
# Prepares the real-BlueZ test bed under .build/real-bluez (once; later runs reuse it):
# Debian's kernel (downloaded with apt-get, unpacked, not installed), an initramfs made of
# busybox-static, the kernel modules for Bluetooth, virtio and 9p, and init.sh; and a venv with
# Bumble (pinned), which drives the virtual controllers and straps inside the guest.
# Prints the folder on success.
set -euo pipefail
cd "$(dirname "$0")/../../.."
bed=.build/real-bluez
fixtures=Tests/Fixtures/real-bluez
bumble_version=0.0.236
mkdir -p "$bed"

version=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -n1)
[ -n "$version" ] || { echo "prepare: apt-cache names no linux-image-amd64 version" >&2; exit 1; }
kernel="$bed/kernel-$version"
if [ ! -f "$kernel/boot/vmlinuz-$version" ]; then
    rm -rf "$kernel" "$bed/download"
    mkdir -p "$bed/download"
    (cd "$bed/download" && apt-get download -q "linux-image-$version" >/dev/null 2>&1)
    dpkg -x "$bed"/download/linux-image-"$version"_*.deb "$kernel.tmp"
    depmod -b "$kernel.tmp" "$version"
    mv "$kernel.tmp" "$kernel"
    rm -rf "$bed/download"
fi

# The initramfs is rebuilt when init.sh or the scripts making it change.
stamp="$version-$(cat "$fixtures/init.sh" "$fixtures/initramfs.sh" "$0" | sha256sum | cut -c1-16)"
if [ "$(cat "$bed/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
    # drbg and jitterentropy_rng first: ecdh_generic needs a default RNG (its self-test fails
    # without one, and then the kernel has no ECDH and LE pairing cannot work). jitterentropy_rng
    # looks up sha3-256 by name when it loads (no symbol dependency, so modprobe does not list it).
    "$fixtures/initramfs.sh" "$kernel" "$version" "$fixtures/init.sh" "$bed/initramfs.gz" \
        sha3_generic jitterentropy_rng drbg bluetooth hci_vhci ecdh_generic ecc cmac ecb af_alg algif_hash algif_skcipher \
        virtio_pci 9pnet_virtio 9p
    cp "$kernel/boot/vmlinuz-$version" "$bed/vmlinuz"
    echo "$stamp" > "$bed/initramfs.stamp"
fi

if [ "$("$bed/venv/bin/pip" show bumble 2>/dev/null | sed -n 's/^Version: //p')" != "$bumble_version" ]; then
    rm -rf "$bed/venv"
    /usr/bin/python3 -m venv "$bed/venv"
    "$bed/venv/bin/pip" install --quiet --disable-pip-version-check "bumble==$bumble_version"
fi
echo "$bed"
