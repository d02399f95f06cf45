#!/bin/busybox sh
# The system guest's /init: load the modules (the guest's root has none of its own), mount the
# disk and hand over to systemd as PID 1.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r module; do
    insmod "/modules/$module" 2>/dev/null || true
done < /modules/order
mount -t ext4 -o rw /dev/vda /newroot || { echo "init: cannot mount /dev/vda"; sleep 2; poweroff -f; }
umount /proc /sys
umount /dev
exec switch_root /newroot /sbin/init
