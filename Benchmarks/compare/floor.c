/* The floor: the least a client can do with libdbus to follow heart-rate notifications.
 *
 * Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS), adds one match rule for
 * PropertiesChanged under /org/bluez, calls Connect and StartNotify for each strap, prints
 * "ready", then for each signal only extracts the Value bytes and the emit time they carry
 * (bytes 3..10, little-endian CLOCK_BOOTTIME nanoseconds). No decoding, no object tree, no
 * reconnection: what no real client can beat. Prints one JSON result line at the end.
 *
 * usage: floor STRAPS EXPECTED_TOTAL
 */
#include <dbus/dbus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_BOOTTIME, &spec);
    return (uint64_t)spec.tv_sec * 1000000000u + (uint64_t)spec.tv_nsec;
}

// Peak RSS from VmHWM: ru_maxrss survives exec and would count the parent's pages at fork.
static long peak_rss_kb(void) {
    long peak = 0;
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return 0;
    while (fgets(line, sizeof line, status))
        if (sscanf(line, "VmHWM: %ld", &peak) == 1) break;
    fclose(status);
    return peak;
}

static double cpu_seconds(long *peak_kb) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    *peak_kb = peak_rss_kb();
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static void call(DBusConnection *bus, const char *path, const char *interface, const char *member) {
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *message = dbus_message_new_method_call("org.bluez", path, interface, member);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, message, 10000, &error);
    dbus_message_unref(message);
    if (reply == NULL) {
        fprintf(stderr, "floor: %s %s: %s\n", member, path, error.message);
        exit(1);
    }
    dbus_message_unref(reply);
}

/* Returns the Value bytes of a PropertiesChanged(GattCharacteristic1) signal, or NULL. */
static const uint8_t *value_bytes(DBusMessage *message, int *length) {
    DBusMessageIter args, entries, entry, variant, bytes;
    const char *name;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING)
        return NULL;
    dbus_message_iter_next(&args);
    if (dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return NULL;
    dbus_message_iter_recurse(&args, &entries);
    while (dbus_message_iter_get_arg_type(&entries) == DBUS_TYPE_DICT_ENTRY) {
        dbus_message_iter_recurse(&entries, &entry);
        dbus_message_iter_get_basic(&entry, &name);
        if (strcmp(name, "Value") == 0) {
            dbus_message_iter_next(&entry);
            dbus_message_iter_recurse(&entry, &variant);
            if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY) return NULL;
            dbus_message_iter_recurse(&variant, &bytes);
            const uint8_t *data;
            dbus_message_iter_get_fixed_array(&bytes, &data, length);
            return data;
        }
        dbus_message_iter_next(&entries);
    }
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: floor STRAPS EXPECTED_TOTAL [PRINT_FILE]\n");
        return 64;
    }
    int straps = atoi(argv[1]), expected = atoi(argv[2]);
    /* With PRINT_FILE: one line per frame, its bytes in hex, flushed (the print-to-file scenario). */
    FILE *out = argc == 4 ? fopen(argv[3], "w") : NULL;
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *bus = dbus_bus_get(DBUS_BUS_SYSTEM, &error);
    if (bus == NULL) {
        fprintf(stderr, "floor: %s\n", error.message);
        return 1;
    }
    dbus_bus_add_match(bus,
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
        "member='PropertiesChanged',path_namespace='/org/bluez'", &error);
    for (int index = 1; index <= straps; index++) {
        char device[96], characteristic[128];
        snprintf(device, sizeof device, "/org/bluez/hci0/dev_C0_FF_EE_00_%02X_%02X", index >> 8, index & 0xFF);
        snprintf(characteristic, sizeof characteristic, "%s/service0010/char0011", device);
        call(bus, device, "org.bluez.Device1", "Connect");
        call(bus, characteristic, "org.bluez.GattCharacteristic1", "StartNotify");
    }
    long peak_kb;
    double cpu_before = cpu_seconds(&peak_kb);
    printf("ready\n");
    fflush(stdout);
    double *latencies = malloc(sizeof(double) * (size_t)(expected > 0 ? expected : 1));
    int received = 0;
    uint64_t last = 0, started = now_ns();
    while (received < expected) {
        if (!dbus_connection_read_write(bus, 1000)) break;
        DBusMessage *message;
        while (received < expected && (message = dbus_connection_pop_message(bus)) != NULL) {
            if (dbus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged")) {
                int length = 0;
                const uint8_t *value = value_bytes(message, &length);
                if (value != NULL && length >= 11) {
                    uint64_t stamp = 0;
                    for (int byte = 0; byte < 8; byte++) stamp |= (uint64_t)value[3 + byte] << (8 * byte);
                    if (out != NULL) {
                        for (int byte = 0; byte < length; byte++) fprintf(out, byte ? " %02x" : "%02x", value[byte]);
                        fputc('\n', out);
                        fflush(out);
                    }
                    last = now_ns();
                    latencies[received++] = (double)(last - stamp) / 1000.0;
                }
            }
            dbus_message_unref(message);
        }
        uint64_t now = now_ns();
        if ((last > 0 && now - last > 5000000000u) || (last == 0 && now - started > 180000000000u)) break;
    }
    double cpu = cpu_seconds(&peak_kb) - cpu_before;
    qsort(latencies, (size_t)received, sizeof(double), compare);
    double p50 = received ? latencies[received / 2] : 0, p99 = received ? latencies[(int)(received * 0.99)] : 0;
    double max = received ? latencies[received - 1] : 0;
    printf("{\"participant\":\"floor\",\"received\":%d,\"expected\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,"
           "\"max_us\":%.1f,\"cpu_us_per_notification\":%.2f,\"peak_rss_kb\":%ld}\n",
        received, expected, p50, p99, max, cpu / (received ? received : 1) * 1e6, peak_kb);
    return 0;
}
