#!/usr/bin/env bash
# Makes a busybox initramfs for a QEMU bed (the real-BlueZ bed's and the whole-system bed's):
#   initramfs.sh KERNEL_DIR VERSION INIT OUT MODULE…
# INIT becomes /init; each MODULE and what it depends on (modprobe --show-depends against the
# unpacked kernel in KERNEL_DIR) is copied to /modules, in load order, listed in /modules/order.
set -euo pipefail
kernel="$1" version="$2" init="$3" out="$4"
shift 4
staging=$(mktemp -d "$(dirname "$out")/initramfs.XXXXXX")
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging"/{bin,proc,sys,dev,newroot,modules}
cp /bin/busybox "$staging/bin/busybox"
cp "$init" "$staging/init"
chmod 755 "$staging/init"
: > "$staging/modules/order"
for module in "$@"; do
    modprobe -d "$kernel" -S "$version" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r file; do
    name=$(basename "$file")
    cp "$file" "$staging/modules/$name"
    echo "$name" >> "$staging/modules/order"
done
(cd "$staging" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$out"
