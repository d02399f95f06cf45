#!/bin/busybox sh
# The guest's /init: load the modules, mount the host's root read-only over 9p and the output
# folder read-write, give bluetoothd and D-Bus writable places, then run the guest script in a
# chroot of the host and power off. Kernel arguments: hrbridge.run=SCRIPT hrbridge.out=FOLDER.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r module; do
    insmod "/modules/$module" || { echo "init: insmod $module failed"; dmesg | tail -n 3; }
done < /modules/order
run=""
out=""
for argument in $(cat /proc/cmdline); do
    case "$argument" in
        hrbridge.run=*) run="${argument#hrbridge.run=}" ;;
        hrbridge.out=*) out="${argument#hrbridge.out=}" ;;
    esac
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /newroot
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
for folder in /dev/shm /run /tmp /var/lib/bluetooth /var/tmp /root; do
    mount -t tmpfs tmpfs "/newroot$folder"
done
mkdir -p "/newroot$out"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out "/newroot$out"
echo "init: guest ready"
chroot /newroot /bin/sh -c "cd / && exec /bin/bash '$run' '$out'" < /dev/console > /dev/console 2>&1
echo "init: guest script exited with $?"
sync
poweroff -f
