"""Daemon benchmark: 50 straps at 4 Hz through BlueZ (D-Bus) into `hrbridged`, fanned out to
20 WebSocket clients; then the idle daemon.

One private dbus-daemon; `NotifyBenchmark --producer --straps 50` owns org.bluez and emits frames
that carry their emit time (CLOCK_BOOTTIME) in four RR fields; the daemon (release build, BlueZ
adapter, 50 configured straps, TCP listener with a read token) connects them; 20 clients read
/v1/ws (every message) and, for each `measurement` message, rebuild the emit time from
`rrIntervals` (raw = seconds × 1024) to get latency frame emitted → message at the client.
Daemon CPU comes from /proc/PID/stat (utime + stime), RSS from /proc/PID/status (VmHWM, VmRSS).

usage: bench_daemon.py --hrbridged PATH --producer PATH [--seconds 20] [--clients 20] [--straps 50] [--record]
                       [--kinds K1,K2] [--perf FILE]

With --record every strap records a session (POST /v1/sessions on the Unix socket, SQLite store)
before the window opens: the gateway recording what it relays, against the same run without it.

With --stalled-sse N [--minutes 10] [--straps 10] it measures the other end instead: N clients
open /v1/events and never read (a 4 KiB receive buffer, so the daemon's writes stall early)
while the straps send at 4 Hz; one WebSocket client does read, to show the stream still flows.
The daemon's RSS is sampled every 10 s.

With --class-run --straps 60 --link-limit 14 it plays a class beyond the link slots: 14 straps
linked at 4 Hz, the other 46 broadcasting Polar manufacturer data at 1 Hz (followed without a
link); latency broadcast emitted → `measurement` message at the client is matched by strap and
heart rate (each second's broadcast carries its own value).

With --mqtt the daemon also publishes to a mosquitto broker (Debian's, started here on a free
port) with `state_interval = 0` (every frame), and a paho-mqtt subscriber reads every sensor's
state topic: broker messages per second, latency daemon receipt (the state's `time`) →
subscriber, and the broker's CPU are printed beside the WebSocket figures.
"""
import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TOKEN = "bench-read-token-0123456789"


def ticks():
    return os.sysconf(os.sysconf_names["SC_CLK_TCK"])


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks()


def context_switches(pid):
    """Voluntary and involuntary switches summed over the process's threads alive now."""
    total = 0
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            for line in open("/proc/%d/task/%s/status" % (pid, task)):
                key, _, value = line.partition(":")
                if key.endswith("ctxt_switches"):
                    total += int(value)
        except FileNotFoundError:
            pass
    return total


def memory(pid):
    values = {}
    for line in open("/proc/%d/status" % pid):
        key, _, rest = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            values[key] = int(rest.split()[0]) / 1024
    return values


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def address(index):
    return "C0:FF:EE:00:%02X:%02X" % (index >> 8, index & 0xFF)


# Per message kind, what the clients received: [messages, bytes].
KIND_TALLY = {}
KIND_PATTERN = re.compile(r'"kind":"(\w+)"')


async def client(port, stop, latencies, counts, index, adverts=None, kinds=None):
    # Imported here so that stdlib-only scripts (bench_soak.py) can reuse this module's helpers.
    from websockets.asyncio.client import connect
    url = "ws://127.0.0.1:%d/v1/ws" % port + ("?kinds=" + kinds if kinds else "")
    async with connect(url, additional_headers={"Authorization": "Bearer " + TOKEN}, max_queue=None) as ws:
        counts[index] = 0
        while not stop.is_set():
            try:
                message = await asyncio.wait_for(ws.recv(), 1)
            except asyncio.TimeoutError:
                continue
            now = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
            counts[index] += 1
            found = KIND_PATTERN.search(message)
            tally = KIND_TALLY.setdefault(found.group(1) if found else "?", [0, 0])
            tally[0] += 1
            tally[1] += len(message)
            if '"kind":"measurement"' not in message:
                continue
            if adverts is not None and '"via":"advertisement"' in message:
                decoded = json.loads(message)
                adverts.append((decoded["sensor"], decoded["heartRate"], now))
                continue
            rr = json.loads(message).get("rrIntervals", [])
            if len(rr) != 4:
                continue
            stamp = 0
            for position, seconds in enumerate(rr):
                stamp |= int(round(seconds * 1024)) << (16 * position)
            latencies.append((now - stamp) / 1e6)


async def run(arguments, port, pid, producer):
    stop = asyncio.Event()
    latencies, counts = [], {}
    tasks = [asyncio.create_task(client(port, stop, latencies, counts, i, kinds=arguments.kinds))
             for i in range(arguments.clients)]
    while len(counts) < arguments.clients:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    latencies.clear()
    cpu_before, wall_before = cpu_seconds(pid), time.monotonic()
    switches_before = context_switches(pid)
    producer.stdin.write("burst %d 4\n" % (4 * arguments.seconds))
    producer.stdin.flush()
    await asyncio.get_running_loop().run_in_executor(None, producer.stdout.readline)
    await asyncio.sleep(0.5)
    cpu = cpu_seconds(pid) - cpu_before
    wall = time.monotonic() - wall_before
    switches = context_switches(pid) - switches_before
    stop.set()
    await asyncio.gather(*tasks)
    return latencies, cpu, wall, sum(counts.values()), switches


async def run_class(arguments, port, pid, producer):
    """Linked straps at 4 Hz, the others broadcasting at 1 Hz: both latencies, daemon CPU."""
    stop = asyncio.Event()
    latencies, counts, adverts = [], {}, []
    tasks = [asyncio.create_task(client(port, stop, latencies, counts, i, adverts)) for i in range(arguments.clients)]
    while len(counts) < arguments.clients:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    latencies.clear()
    adverts.clear()
    cpu_before, wall_before = cpu_seconds(pid), time.monotonic()
    producer.stdin.write("class %d\n" % arguments.seconds)
    producer.stdin.flush()
    emitted = {}
    loop = asyncio.get_running_loop()
    while True:
        line = (await loop.run_in_executor(None, producer.stdout.readline)).split()
        if not line or line[0] == "done":
            break
        emitted[(line[1], int(line[2]))] = int(line[3])
    await asyncio.sleep(0.5)
    cpu = cpu_seconds(pid) - cpu_before
    wall = time.monotonic() - wall_before
    stop.set()
    await asyncio.gather(*tasks)
    advert_latencies = [(received - emitted[(sensor, rate)]) / 1e6 for sensor, rate, received in adverts
                        if (sensor, rate) in emitted]
    return latencies, advert_latencies, len(emitted), cpu, wall, sum(counts.values())


def class_report(arguments, health, latencies, advert_latencies, broadcasts, cpu, wall, mem, idle_cpu):
    linked = sum(adapter["linksInUse"] for adapter in health.get("adapters", []))
    latencies.sort()
    advert_latencies.sort()
    frames = linked * 4 * arguments.seconds
    print("| measurement | result |")
    print("|---|---|")
    print("| straps | %d: %d linked at 4 Hz, %d broadcasting at 1 Hz, %d s |" % (
        arguments.straps, linked, arguments.straps - linked, arguments.seconds))
    print("| link frames received by %d clients | %d of %d |" % (arguments.clients, len(latencies),
                                                             frames * arguments.clients))
    print("| broadcasts received by %d clients | %d of %d |" % (arguments.clients, len(advert_latencies),
                                                            broadcasts * arguments.clients))
    print("| latency link frame → client, p50 / p99 | %.2f ms / %.2f ms |" % (
        latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]))
    print("| latency broadcast → client, p50 / p99 / max | %.2f ms / %.2f ms / %.2f ms |" % (
        advert_latencies[len(advert_latencies) // 2], advert_latencies[int(len(advert_latencies) * 0.99)],
        advert_latencies[-1]))
    print("| daemon CPU under load | %.1f %% of a core |" % (100 * cpu / wall))
    print("| daemon peak RSS (VmHWM) / RSS now | %.1f MB / %.1f MB |" % (mem["VmHWM"], mem["VmRSS"]))
    print("| idle daemon CPU over %d s (before the load) | %.3f s |" % (arguments.idle, idle_cpu))


def stalled_sse(arguments, port, pid, producer):
    """N SSE clients that never read, M minutes of 4 Hz frames; RSS every 10 s."""
    request = ("GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
               "Accept: text/event-stream\r\n\r\n" % TOKEN).encode()
    sockets = []
    for _ in range(arguments.stalled_sse):
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(request)
        sockets.append(stalled)
    reader_counts = {}
    stop = asyncio.Event()

    async def follow():
        task = asyncio.create_task(client(port, stop, [], reader_counts, 0))
        seconds = 60 * arguments.minutes
        producer.stdin.write("burst %d 4\n" % (4 * seconds))
        producer.stdin.flush()
        samples = []
        start = time.monotonic()
        done = asyncio.get_running_loop().run_in_executor(None, producer.stdout.readline)
        while not done.done():
            samples.append((time.monotonic() - start, memory(pid)["VmRSS"], reader_counts.get(0, 0)))
            await asyncio.wait([done], timeout=10)
        stop.set()
        await task
        return samples

    before = memory(pid)["VmRSS"]
    cpu_before = cpu_seconds(pid)
    samples = asyncio.run(follow())
    cpu = cpu_seconds(pid) - cpu_before
    mem = memory(pid)
    open_now = 0
    for stalled in sockets:
        stalled.setblocking(False)
        try:
            open_now += 1 if stalled.recv(1, socket.MSG_PEEK) else 0
        except BlockingIOError:
            open_now += 1
        except OSError:
            pass
        stalled.close()
    rss = sorted(value for _, value, _ in samples)
    print("| measurement | result |")
    print("|---|---|")
    print("| stalled SSE clients | %d (still connected at the end: %d) |" % (arguments.stalled_sse, open_now))
    print("| load | %d straps × 4 Hz for %d min |" % (arguments.straps, arguments.minutes))
    print("| RSS before the load | %.1f MB |" % before)
    print("| RSS during the load: median / max (every 10 s) | %.1f MB / %.1f MB |" % (rss[len(rss) // 2], rss[-1]))
    print("| RSS at the end / peak (VmHWM) | %.1f MB / %.1f MB |" % (mem["VmRSS"], mem["VmHWM"]))
    print("| messages the reading WebSocket client got | %d |" % samples[-1][2])
    print("| daemon CPU over the load | %.1f s |" % cpu)
    print()
    print("| minute | RSS MB | messages read |")
    print("|---|---|---|")
    for seconds, value, read in samples:
        if int(seconds) % 60 < 10:
            print("| %.0f | %.1f | %d |" % (seconds / 60, value, read))


def start_broker(directory):
    """Debian's mosquitto on a free loopback port; returns the process and the port."""
    port = free_port()
    config = os.path.join(directory, "mosquitto.conf")
    with open(config, "w") as out:
        out.write("user root\nlistener %d 127.0.0.1\nallow_anonymous true\nlog_dest stderr\n" % port)
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", config], stderr=subprocess.PIPE, text=True)
    for line in broker.stderr:
        if " running" in line:
            break
    return broker, port


class MQTTReader:
    """A paho-mqtt subscriber on every sensor state topic, timing each message against its `time`."""

    def __init__(self, port):
        import datetime
        import paho.mqtt.client as mqtt
        self.latencies, self.count, self.started = [], 0, time.monotonic()
        self.ready = False

        def on_message(client, userdata, message):
            now = time.time()
            self.count += 1
            stamp = json.loads(message.payload).get("time")
            if stamp:
                sent = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
                self.latencies.append((now - sent) * 1000)

        def on_subscribe(client, userdata, mid, reasons, properties):
            self.ready = True

        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        self.client.on_message = on_message
        self.client.on_subscribe = on_subscribe
        self.client.on_connect = lambda client, *rest: client.subscribe("hrbridge/bench/sensor/+/state", 0)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        while not self.ready:
            time.sleep(0.05)
        # The retained states of the connected straps are not part of the run.
        time.sleep(0.5)
        self.latencies.clear()
        self.count, self.started = 0, time.monotonic()

    def finish(self):
        wall = time.monotonic() - self.started
        self.client.loop_stop()
        return self.latencies, self.count, wall


def start_bus(directory):
    """A private dbus-daemon (a system bus that lets everyone do everything) in `directory`:
    its address and PID."""
    config = os.path.join(directory, "bus.conf")
    with open(config, "w") as out:
        out.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=%s/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
<allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
<allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/>
<allow receive_type="error"/></policy></busconfig>
""" % directory)
    bus = subprocess.run(["dbus-daemon", "--config-file=" + config, "--fork", "--print-address=1", "--print-pid=1"],
                         check=True, capture_output=True, text=True).stdout.split()
    return bus[0], int(bus[1])


def unit_environment():
    """The Environment= assignments of systemd/hrbridge.service."""
    unit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "systemd", "hrbridge.service")
    assignments = {}
    for line in open(unit):
        if line.startswith("Environment="):
            for word in line[len("Environment="):].split():
                key, _, value = word.partition("=")
                assignments[key] = value
    return assignments


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hrbridged", required=True)
    parser.add_argument("--producer", required=True)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--straps", type=int, default=50)
    parser.add_argument("--idle", type=int, default=10)
    parser.add_argument("--stalled-sse", type=int, default=0)
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--adapters", type=int, default=1)
    parser.add_argument("--link-limit", type=int, default=0)
    parser.add_argument("--mqtt", action="store_true", help="publish to a mosquitto broker and read it back")
    parser.add_argument("--record", action="store_true", help="every strap records a session during the window")
    parser.add_argument("--kinds", help="the message kinds the clients ask for (default: the stream's default)")
    parser.add_argument("--perf", help="profile the daemon through the measured window into this perf.data file")
    parser.add_argument("--class-run", action="store_true",
                        help="straps beyond --link-limit broadcast at 1 Hz, the linked ones notify at 4 Hz")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hrbridge-bench-daemon-") as directory:
        bus_address, bus_pid = start_bus(directory)
        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus_address)
        # The daemon runs with the environment its systemd unit gives it.
        environment.update(unit_environment())
        producer = subprocess.Popen([arguments.producer, "--producer", bus_address, "--straps", str(arguments.straps),
                                     "--adapters", str(arguments.adapters), "--link-limit", str(arguments.link_limit)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)
        daemon = None
        broker = None
        try:
            assert producer.stdout.readline().strip() == "ready"
            port = free_port()
            with open(os.path.join(directory, "config.toml"), "w") as out:
                out.write('[adapter]\nkind = "bluez"\n[store]\npath = "%s/store.sqlite"\n' % directory)
                out.write('[api]\nsocket = "%s/api.sock"\ntcp_port = %d\n' % (directory, port))
                out.write('[[api.tokens]]\ntoken = "%s"\nrole = "read"\n' % TOKEN)
                for index in range(1, arguments.straps + 1):
                    out.write('[[sensors]]\naddress = "%s"\n' % address(index))
                if arguments.mqtt:
                    broker, broker_port = start_broker(directory)
                    out.write('[mqtt]\nurl = "mqtt://127.0.0.1:%d"\nnode = "bench"\nstate_interval = 0\n' % broker_port)
            # It holds a token: private, or the daemon refuses it.
            os.chmod(os.path.join(directory, "config.toml"), 0o600)
            daemon = subprocess.Popen([arguments.hrbridged, "--config", os.path.join(directory, "config.toml"),
                                       "--log-level", "warning"], env=environment)
            started = time.monotonic()
            import urllib.request
            deadline = time.monotonic() + 60
            while True:
                try:
                    request = urllib.request.Request("http://127.0.0.1:%d/v1/health" % port,
                                                     headers={"Authorization": "Bearer " + TOKEN})
                    health = json.load(urllib.request.urlopen(request, timeout=2))
                    linked = min(arguments.straps, arguments.link_limit * arguments.adapters or arguments.straps)
                    if health["sensorsStreaming"] == linked:
                        all_streaming = time.monotonic() - started
                        break
                except OSError:
                    pass
                if daemon.poll() is not None:
                    raise RuntimeError("the daemon exited with status %d" % daemon.returncode)
                if time.monotonic() > deadline:
                    raise RuntimeError("the daemon did not connect every strap")
                time.sleep(0.05)
            if arguments.record:
                from bench_hub import post_unix
                for index in range(1, arguments.straps + 1):
                    body = json.dumps({"sensors": [address(index)], "activity": "running"})
                    status = post_unix(os.path.join(directory, "api.sock"), "/v1/sessions", body)
                    assert status == 201, "POST /v1/sessions answered %d" % status
                print("| sessions recording | %d |" % arguments.straps)
            if arguments.stalled_sse:
                stalled_sse(arguments, port, daemon.pid, producer)
                return
            idle_before = cpu_seconds(daemon.pid)
            time.sleep(arguments.idle)
            idle_cpu = cpu_seconds(daemon.pid) - idle_before
            if arguments.class_run:
                latencies, adverts, broadcasts, cpu, wall, _ = asyncio.run(run_class(arguments, port, daemon.pid,
                                                                                     producer))
                class_report(arguments, health, latencies, adverts, broadcasts, cpu, wall, memory(daemon.pid),
                             idle_cpu)
                return
            reader = MQTTReader(broker_port) if arguments.mqtt else None
            broker_cpu = cpu_seconds(broker.pid) if arguments.mqtt else 0
            profiler = None
            if arguments.perf:
                profiler = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g",
                                             "-p", str(daemon.pid), "-o", arguments.perf, "--",
                                             "sleep", str(arguments.seconds)])
            latencies, cpu, wall, messages, switches = asyncio.run(run(arguments, port, daemon.pid, producer))
            if profiler:
                profiler.wait()
            if reader:
                broker_cpu = cpu_seconds(broker.pid) - broker_cpu
                mqtt_latencies, mqtt_count, mqtt_wall = reader.finish()
            mem = memory(daemon.pid)
            latencies.sort()
            count = len(latencies)
            expected = arguments.clients * arguments.straps * 4 * arguments.seconds
            print("| measurement | result |")
            print("|---|---|")
            print("| notifications emitted | %d (%d straps × 4 Hz × %d s) |" % (arguments.straps * 4 * arguments.seconds,
                                                                          arguments.straps, arguments.seconds))
            print("| measurement messages received by %d clients | %d of %d |" % (arguments.clients, count, expected))
            print("| all messages received | %d |" % messages)
            print("| received per kind: messages, mean bytes | %s |" % ", ".join(
                "%s %d × %.0f B" % (kind, number, size / number)
                for kind, (number, size) in sorted(KIND_TALLY.items(), key=lambda item: -item[1][1])))
            print("| latency frame emitted → client, p50 | %.2f ms |" % latencies[count // 2])
            print("| latency p99 | %.2f ms |" % latencies[int(count * 0.99)])
            print("| latency max | %.2f ms |" % latencies[-1])
            print("| daemon CPU under load | %.1f %% of a core |" % (100 * cpu / wall))
            print("| daemon context switches under load (its threads) | %.0f per second |" % (switches / wall))
            print("| daemon peak RSS (VmHWM) / RSS now | %.1f MB / %.1f MB |" % (mem["VmHWM"], mem["VmRSS"]))
            print("| idle daemon CPU over %d s (%d straps connected, no frames) | %.3f s |" % (arguments.idle,
                                                                                    arguments.straps, idle_cpu))
            print("| daemon start → every strap streaming (health polled every 50 ms) | %.2f s |" % all_streaming)
            if reader:
                mqtt_latencies.sort()
                print("| MQTT state messages read by the subscriber | %d (%.0f per second) |" % (
                    mqtt_count, mqtt_count / mqtt_wall))
                print("| MQTT latency daemon receipt → subscriber, p50 / p99 | %.1f ms / %.1f ms |" % (
                    mqtt_latencies[len(mqtt_latencies) // 2], mqtt_latencies[int(len(mqtt_latencies) * 0.99)]))
                print("| broker (mosquitto) CPU under load | %.1f %% of a core |" % (100 * broker_cpu / wall))
            for adapter in health.get("adapters", []):
                print("| %s: links in use / straps streaming / slot refusals | %d / %d / %d |" % (
                    adapter["name"], adapter["linksInUse"], len(adapter["sensors"]), adapter["slotRefusals"]))
        finally:
            if daemon is not None:
                daemon.terminate()
                daemon.wait(timeout=30)
            producer.kill()
            os.kill(bus_pid, 15)
            if arguments.mqtt and broker is not None:
                broker.terminate()


if __name__ == "__main__":
    main()
