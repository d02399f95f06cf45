"""A minimal bleak client, as a Linux user would write one: scan for the straps, connect,
start_notify on the Heart Rate Measurement, and only record the emit time each frame carries
(bytes 3..10, little-endian CLOCK_BOOTTIME nanoseconds). Prints "ready", then one JSON result.

usage: bleak_client.py STRAPS EXPECTED_TOTAL [PRINT_FILE]

With PRINT_FILE it also decodes each frame (heart rate, contact, energy, RR intervals) and writes
one JSON line per frame with json.dumps, flushed, as a monitor script would.
"""
import asyncio
import datetime
import json
import resource
import sys
import time

from bleak import BleakClient, BleakScanner

HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"
MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def address(index):
    return "C0:FF:EE:00:%02X:%02X" % (index >> 8, index & 0xFF)


def usage():
    # Peak RSS from VmHWM: ru_maxrss survives exec and would count the parent's pages at fork.
    own = resource.getrusage(resource.RUSAGE_SELF)
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return own.ru_utime + own.ru_stime, peak


def decode(data):
    flags = data[0]
    index = 1
    if flags & 0x01:
        heart_rate = int.from_bytes(data[1:3], "little")
        index = 3
    else:
        heart_rate = data[1]
        index = 2
    contact = ("detected" if flags & 0x02 else "notDetected") if flags & 0x04 else "notSupported"
    energy = None
    if flags & 0x08:
        energy = int.from_bytes(data[index:index + 2], "little")
        index += 2
    intervals = []
    if flags & 0x10:
        while index + 1 < len(data):
            intervals.append(int.from_bytes(data[index:index + 2], "little") / 1024)
            index += 2
    return {"heartRate": heart_rate, "sensorContact": contact, "energyExpended": energy, "rrIntervals": intervals}


async def main(straps, expected, print_path=None):
    out = open(print_path, "w") if print_path else None
    wanted = {address(index) for index in range(1, straps + 1)}
    found = {}
    all_found = asyncio.Event()

    def seen(device, _advertisement):
        if device.address in wanted:
            found[device.address] = device
            if len(found) == len(wanted):
                all_found.set()

    async with BleakScanner(seen, service_uuids=[HEART_RATE]):
        await asyncio.wait_for(all_found.wait(), 60)
    clients = [BleakClient(found[a]) for a in sorted(wanted)]
    await asyncio.gather(*(client.connect() for client in clients))

    latencies = []
    done = asyncio.Event()
    last = [0]

    def handler(sensor):
        return lambda characteristic, data: notified(sensor, data)

    def notified(sensor, data):
        now = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        latencies.append((now - int.from_bytes(data[3:11], "little")) / 1000)
        if out is not None:
            line = decode(data)
            line["time"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
            line["sensor"] = sensor
            out.write(json.dumps(line) + "\n")
            out.flush()
        last[0] = now
        if len(latencies) >= expected:
            done.set()

    for client in clients:
        await client.start_notify(MEASUREMENT, handler(client.address))
    cpu_before, _ = usage()
    print("ready", flush=True)
    started = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
    # Stop after 5 s without a frame once frames flowed (loss), or 180 s without any; sleep until
    # that deadline rather than ticking (the hrbridge participant waits the same way).
    while not done.is_set():
        deadline = last[0] + 5e9 if last[0] else started + 180e9
        remaining = (deadline - time.clock_gettime_ns(time.CLOCK_BOOTTIME)) / 1e9
        if remaining <= 0:
            break
        try:
            await asyncio.wait_for(done.wait(), remaining)
        except asyncio.TimeoutError:
            pass
    cpu_after, peak = usage()
    received = list(latencies)
    for client in clients:
        await client.disconnect()
    received.sort()
    count = len(received)
    print(json.dumps({
        "participant": "bleak", "received": count, "expected": expected,
        "p50_us": received[count // 2] if count else 0,
        "p99_us": received[int(count * 0.99)] if count else 0,
        "max_us": received[-1] if count else 0,
        "cpu_us_per_notification": (cpu_after - cpu_before) / max(count, 1) * 1e6,
        "peak_rss_kb": peak,
    }, sort_keys=True), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None))
