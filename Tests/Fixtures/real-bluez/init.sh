#!/bin/busybox sh
# The guest's /init: load the modules, mount the host's root read-only over 9p and the output
# folder read-write, give bluetoothd and D-Bus writable places, then run the guest script in a
# chroot of the host and power off. What to run comes from the output folder's guest-paths
# (written by boot.sh, one entry a line, so any path works): "run SCRIPT", "out FOLDER", and
# "keep PATH" for each host path the guest needs (the checkout, the venv, hrbridge).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r module; do
    insmod "/modules/$module" || { echo "init: insmod $module failed"; dmesg | tail -n 3; }
done < /modules/order
mkdir -p /out /keep
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out
run=""
out=""
while IFS= read -r line; do
    case "$line" in
        "run "*) run="${line#run }" ;;
        "out "*) out="${line#out }" ;;
    esac
done < /out/guest-paths
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /newroot
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
# Writable places: these hide the host's folders, and a checkout under one of them (/tmp,
# /root: a root user's home) with them. Each needed path under one is held aside first and
# mounted back on top.
tmpfs_folders="/dev/shm /run /tmp /var/lib/bluetooth /var/tmp /root"
under_tmpfs() {
    for folder in $tmpfs_folders; do
        case "$1/" in "$folder/"*) return 0 ;; esac
    done
    return 1
}
count=0
while IFS= read -r line; do
    case "$line" in "keep "*) ;; *) continue ;; esac
    count=$((count + 1))
    path="${line#keep }"
    under_tmpfs "$path" || continue
    mkdir -p "/keep/$count"
    mount -o bind "/newroot$path" "/keep/$count" || echo "init: cannot hold $path aside"
done < /out/guest-paths
for folder in $tmpfs_folders; do
    mount -t tmpfs tmpfs "/newroot$folder"
done
count=0
while IFS= read -r line; do
    case "$line" in "keep "*) ;; *) continue ;; esac
    count=$((count + 1))
    path="${line#keep }"
    [ -d "/keep/$count" ] || continue
    mkdir -p "/newroot$path"
    mount -o bind "/keep/$count" "/newroot$path" || echo "init: cannot mount $path back"
done < /out/guest-paths
mkdir -p "/newroot$out"
mount -o bind /out "/newroot$out"
echo "init: guest ready"
chroot /newroot /bin/sh -c 'cd / && exec /bin/bash "$0" "$1"' "$run" "$out" < /dev/console > /dev/console 2>&1
echo "init: guest script exited with $?"
sync
poweroff -f
