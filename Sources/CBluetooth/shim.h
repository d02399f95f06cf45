// BlueZ's libbluetooth for the Doctor module, which is the only importer of this target.
#ifndef HRBRIDGE_CBLUETOOTH_SHIM_H
#define HRBRIDGE_CBLUETOOTH_SHIM_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/// One HCI device as the kernel reports it.
typedef struct {
    int dev_id;
    char name[9];
    char address[18];
    int up;      // 1 up, 0 down, -1 unknown (hci_devinfo failed)
    int bus;     // HCI_USB, HCI_UART…
} cbt_device;

/// Opens a raw HCI socket: the file descriptor, or -errno (EAFNOSUPPORT: no kernel Bluetooth).
static inline int cbt_open_hci_socket(void) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    return fd < 0 ? -errno : fd;
}

/// Fills up to `max` devices through HCIGETDEVLIST and hci_devinfo: the count, or -errno.
static inline int cbt_list_devices(int fd, cbt_device *out, int max) {
    struct hci_dev_list_req *list = calloc(1, sizeof(*list) + (size_t)max * sizeof(struct hci_dev_req));
    if (!list) return -ENOMEM;
    list->dev_num = (uint16_t)max;
    if (ioctl(fd, HCIGETDEVLIST, list) < 0) {
        int error = errno;
        free(list);
        return -error;
    }
    int count = list->dev_num;
    for (int i = 0; i < count; i++) {
        struct hci_dev_info info;
        memset(&info, 0, sizeof(info));
        memset(&out[i], 0, sizeof(out[i]));
        out[i].dev_id = list->dev_req[i].dev_id;
        if (hci_devinfo(out[i].dev_id, &info) < 0) {
            out[i].up = -1;
            continue;
        }
        memcpy(out[i].name, info.name, 8);
        ba2str(&info.bdaddr, out[i].address);
        out[i].up = hci_test_bit(HCI_UP, &info.flags) ? 1 : 0;
        out[i].bus = info.type & 0x0f;
    }
    free(list);
    return count;
}

/// The default route's device id (the first up adapter), or -1.
static inline int cbt_default_route(void) { return hci_get_route(NULL); }

/// The bus name of an HCI device type: "USB", "UART"…
static inline const char *cbt_bus_name(int bus) { return hci_bustostr(bus); }

#endif
