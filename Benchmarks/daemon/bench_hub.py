"""Hub benchmark: N gateways (each `hrbridged` on the BlueZ adapter, fed by its own private bus
and `NotifyBenchmark --producer`) publish every frame (`[mqtt] publish_measurements`) to Debian's
mosquitto; one hub (`[adapter] kind = "mqtt"`, no radio) follows them and serves the API; C WebSocket
clients read the hub's `/v1/ws`. Every frame carries its emit time (CLOCK_BOOTTIME) in its RR fields,
which survive the gateway's envelope (it forwards the GATT bytes), so latency is strap frame emitted
on a gateway's bus → `measurement` message decoded at a hub client. Hub CPU from /proc/PID/stat,
memory from /proc/PID/status; mosquitto's CPU beside it.

With `--postgres` the hub stores into Debian's PostgreSQL (a new cluster in the temporary folder)
and runs a class with every strap signed in (`[class] auto_join`), so every frame becomes stored
samples: the row count of `sample` before and after the window gives the ingest rate, and the
server's processes' CPU is read beside the hub's.

The clients read the stream's default kinds (every kind but `sample`); `--kinds all` makes them ask for
every kind, the session samples too (five messages per frame here: heart rate and four RR intervals).
With `--perf FILE` the hub is profiled through the measured window (`perf record -e cpu-clock -F 999
-g`, which works without hardware counters); read it with `perf report -i FILE --no-children`.

With `--postgres --pause-store S` the PostgreSQL server (the postmaster and every backend) is stopped
with SIGSTOP for S seconds in the middle of the measured window while a thread asks the hub's
`/v1/health` every 100 ms on a connection of its own: the answers' latency during the pause, and the
strap → client latency of the frames delivered during it, show whether a stopped database stalls the
live side.

usage: bench_hub.py --hrbridged PATH --producer PATH [--gateways 3] [--straps 20] [--seconds 20] [--clients 5]
                    [--postgres [--pause-store 10]] [--perf FILE] [--kinds all]
"""
import argparse
import glob
import socket
import sys
import asyncio
import json
import os
import subprocess
import signal
import tempfile
import threading
import time
import urllib.request

from bench_daemon import TOKEN, client, cpu_seconds, free_port, memory, start_broker, start_bus, unit_environment



def address(page, index):
    return "C0:FF:EE:%02X:%02X:%02X" % (page, index >> 8, index & 0xFF)


def health(port):
    request = urllib.request.Request("http://127.0.0.1:%d/v1/health" % port, headers={"Authorization": "Bearer " + TOKEN})
    return json.load(urllib.request.urlopen(request, timeout=2))


def wait_streaming(port, count, process, what):
    deadline = time.monotonic() + 90
    while True:
        try:
            if health(port)["sensorsStreaming"] == count:
                return
        except OSError:
            pass
        if process.poll() is not None:
            raise RuntimeError("%s exited with status %d" % (what, process.returncode))
        if time.monotonic() > deadline:
            raise RuntimeError("%s: not every strap streams" % what)
        time.sleep(0.05)


def postgres_binaries():
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda path: int(path.split("/")[4]))
    if not versions:
        raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
    return os.path.dirname(versions[-1])


def as_server_user():
    """The postmaster refuses root: run it as Debian's postgres user, exec'd (the PID is its own)."""
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] if os.getuid() == 0 else []


def start_postgres(directory):
    """A new cluster (trust authentication for role hrbridge) on a Unix socket; returns process, socket dir, port."""
    binaries, folder, port = postgres_binaries(), os.path.join(directory, "pg"), free_port()
    os.makedirs(folder)
    if os.getuid() == 0:
        import pwd
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        os.chmod(directory, 0o755)
    subprocess.run(as_server_user() + [binaries + "/initdb", "-D", folder + "/data", "-U", "hrbridge", "--auth=trust",
                                       "-E", "UTF8", "--no-instructions"], check=True, stdout=subprocess.DEVNULL)
    server = subprocess.Popen(as_server_user() + [binaries + "/postgres", "-D", folder + "/data", "-p", str(port),
                                                  "-k", folder, "-c", "listen_addresses="], stderr=subprocess.PIPE, text=True)
    for line in server.stderr:
        if "ready to accept connections" in line:
            break
    subprocess.run([binaries + "/psql", "-h", folder, "-p", str(port), "-U", "hrbridge", "-d", "postgres", "-c",
                    "CREATE DATABASE hrbridge"], check=True, stdout=subprocess.DEVNULL)
    return server, folder, port


def psql(folder, port, sql):
    return subprocess.run([postgres_binaries() + "/psql", "-h", folder, "-p", str(port), "-U", "hrbridge", "-d",
                           "hrbridge", "-At", "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def family(pid):
    """A process and the processes it forked (the postmaster and its backends)."""
    pids = [pid]
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = open(stat).read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                pids.append(int(stat.split("/")[2]))
        except (OSError, ValueError):
            pass
    return pids


def children_cpu(pid):
    """CPU seconds of a process and its children (the postmaster and its backends)."""
    total = 0
    for each in family(pid):
        try:
            total += cpu_seconds(each)
        except OSError:
            pass  # a backend that ended since it was listed
    return total


class StorePause(threading.Thread):
    """Stops the database `after` seconds into the window for `seconds`, asking /v1/health every 100 ms
    meanwhile; keeps each answer's latency (ms) and where the clients' latency list stood at each end."""

    def __init__(self, port, postgres_pid, after, seconds, latencies):
        super().__init__(daemon=True)
        self.port, self.postgres_pid, self.after, self.seconds = port, postgres_pid, after, seconds
        self.latencies, self.answers, self.failures, self.span = latencies, [], 0, (0, 0)

    def run(self):
        time.sleep(self.after)
        stopped = family(self.postgres_pid)
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        first, began = len(self.latencies), time.monotonic()
        try:
            while time.monotonic() - began < self.seconds:
                asked = time.monotonic()
                try:
                    health(self.port)
                    self.answers.append(1000 * (time.monotonic() - asked))
                except OSError:
                    self.failures += 1
                time.sleep(max(0, 0.1 - (time.monotonic() - asked)))
        finally:
            self.span = (first, len(self.latencies))
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)


def post_unix(path, target, body="{}"):
    """POST a JSON body (default empty) on the API's Unix socket (no token there); returns the status."""
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(path)
    connection.sendall(("POST %s HTTP/1.1\r\nHost: hub\r\nContent-Type: application/json\r\n"
                        "Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (target, len(body), body)).encode())
    reply = connection.recv(4096).decode(errors="replace")
    connection.close()
    return int(reply.split()[1])


def write_config(path, text):
    with open(path, "w") as out:
        out.write(text)
    os.chmod(path, 0o600)


async def measure(arguments, port, hub_pid, broker_pid, producers, postgres_pid=None):
    stop = asyncio.Event()
    latencies, counts = [], {}
    tasks = [asyncio.create_task(client(port, stop, latencies, counts, i, kinds=arguments.kinds))
             for i in range(arguments.clients)]
    while len(counts) < arguments.clients:
        failed = [task for task in tasks if task.done()]
        if failed:
            failed[0].result()
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    latencies.clear()
    pause = None
    if arguments.pause_store:
        pause = StorePause(port, postgres_pid, (arguments.seconds - arguments.pause_store) / 2,
                           arguments.pause_store, latencies)
        pause.start()
    hub_before, broker_before, wall_before = cpu_seconds(hub_pid), cpu_seconds(broker_pid), time.monotonic()
    await asyncio.sleep(arguments.seconds)
    wall = time.monotonic() - wall_before
    hub_cpu, broker_cpu = cpu_seconds(hub_pid) - hub_before, cpu_seconds(broker_pid) - broker_before
    stop.set()
    await asyncio.gather(*tasks)
    if pause:
        pause.join()
    return latencies, hub_cpu, broker_cpu, wall, pause


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hrbridged", required=True)
    parser.add_argument("--producer", required=True)
    parser.add_argument("--gateways", type=int, default=3)
    parser.add_argument("--straps", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--kinds", help="the clients' ?kinds= (default: the stream's default, every kind but sample)")
    parser.add_argument("--signed", action="store_true",
                        help="each gateway signs with its key_file, the hub holds them in gateway_keys")
    parser.add_argument("--perf", help="profile the hub through the measured window into this perf.data file")
    parser.add_argument("--pause-store", type=float, default=0,
                        help="with --postgres: stop the database (SIGSTOP) for this many seconds mid-window")
    arguments = parser.parse_args()
    if arguments.pause_store and (not arguments.postgres or arguments.pause_store >= arguments.seconds):
        parser.error("--pause-store needs --postgres and a window (--seconds) longer than the pause")
    processes, buses = [], []
    with tempfile.TemporaryDirectory(prefix="hrbridge-bench-hub-") as directory:
        try:
            broker, broker_port = start_broker(directory)
            processes.append(broker)
            producers, gateway_pids = [], []
            keys = os.path.join(directory, "keys")
            os.makedirs(keys, mode=0o700)
            for gateway in range(1, arguments.gateways + 1):
                folder = os.path.join(directory, "gw%d" % gateway)
                os.makedirs(folder)
                bus_address, bus_pid = start_bus(folder)
                buses.append(bus_pid)
                environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus_address)
                environment.update(unit_environment())
                producer = subprocess.Popen([arguments.producer, "--producer", bus_address, "--straps", str(arguments.straps),
                                             "--page", str(gateway)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            text=True, env=environment)
                processes.append(producer)
                assert producer.stdout.readline().strip() == "ready"
                producers.append(producer)
                port = free_port()
                config = '[adapter]\nkind = "bluez"\n[store]\npath = "%s/store.sqlite"\n' % folder
                config += '[api]\nsocket = "%s/api.sock"\ntcp_port = %d\n' % (folder, port)
                config += '[[api.tokens]]\ntoken = "%s"\nrole = "read"\n' % TOKEN
                config += '[mqtt]\nurl = "mqtt://127.0.0.1:%d"\nnode = "gw-%d"\ndiscovery = false\n' % (broker_port, gateway)
                config += 'publish_measurements = true\n'
                if arguments.signed:
                    key = os.path.join(keys, "gw-%d.key" % gateway)
                    write_config(key, os.urandom(32).hex() + "\n")
                    config += 'key_file = "%s"\n' % key
                for index in range(1, arguments.straps + 1):
                    config += '[[sensors]]\naddress = "%s"\n' % address(gateway, index)
                write_config(os.path.join(folder, "config.toml"), config)
                daemon = subprocess.Popen([arguments.hrbridged, "--config", os.path.join(folder, "config.toml"),
                                           "--log-level", "warning"], env=environment)
                processes.append(daemon)
                gateway_pids.append(daemon.pid)
                wait_streaming(port, arguments.straps, daemon, "gateway %d" % gateway)
            hub_port = free_port()
            hub_folder = os.path.join(directory, "hub")
            os.makedirs(hub_folder)
            config = '[adapter]\nkind = "mqtt"\nurl = "mqtt://127.0.0.1:%d"\nexpire = 60\n' % broker_port
            if arguments.signed:
                config += 'gateway_keys = "%s"\n' % keys
            postgres = None
            if arguments.postgres:
                postgres, pg_folder, pg_port = start_postgres(directory)
                processes.insert(0, postgres)
                config += '[store]\nurl = "postgresql://hrbridge@/hrbridge?host=%s&port=%d"\n' % (pg_folder, pg_port)
                config += '[class]\nauto_join = true\n'
                for gateway in range(1, arguments.gateways + 1):
                    for index in range(1, arguments.straps + 1):
                        config += '[[sensors]]\naddress = "%s"\n' % address(gateway, index)
            else:
                config += '[store]\npath = "%s/store.sqlite"\n' % hub_folder
            config += '[api]\nsocket = "%s/api.sock"\ntcp_port = %d\n' % (hub_folder, hub_port)
            config += '[[api.tokens]]\ntoken = "%s"\nrole = "read"\n' % TOKEN
            write_config(os.path.join(hub_folder, "config.toml"), config)
            environment = dict(os.environ)
            environment.update(unit_environment())
            hub = subprocess.Popen([arguments.hrbridged, "--config", os.path.join(hub_folder, "config.toml"),
                                    "--log-level", "warning"], env=environment)
            processes.append(hub)
            time.sleep(1)
            # One paced run per gateway, long enough for the hub to meet every strap (from its first
            # frame), the clients to connect, and the measured window.
            for producer in producers:
                producer.stdin.write("burst %d 4\n" % (4 * (arguments.seconds + (75 if arguments.postgres else 30))))
                producer.stdin.flush()
            wait_streaming(hub_port, arguments.gateways * arguments.straps, hub, "the hub")
            if postgres:
                status = post_unix(os.path.join(hub_folder, "api.sock"), "/v1/class")
                assert status == 201, "POST /v1/class answered %d" % status
                deadline = time.monotonic() + 60
                while health(hub_port)["sessionsActive"] < arguments.gateways * arguments.straps:
                    if time.monotonic() > deadline:
                        raise RuntimeError("not every strap joined the class: %d of %d sessions" % (
                            health(hub_port)["sessionsActive"], arguments.gateways * arguments.straps))
                    time.sleep(0.1)
                time.sleep(2)
                rows_before, pg_before = int(psql(pg_folder, pg_port, "SELECT count(*) FROM sample")), children_cpu(postgres.pid)
                rows_since = time.monotonic()
            profiler = None
            if arguments.perf:
                profiler = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g",
                                             "-p", str(hub.pid), "-o", arguments.perf, "--",
                                             "sleep", str(arguments.seconds)])
            latencies, hub_cpu, broker_cpu, wall, pause = asyncio.run(
                measure(arguments, hub_port, hub.pid, broker.pid, producers, postgres.pid if postgres else None))
            paused_latencies = sorted(latencies[pause.span[0]:pause.span[1]]) if pause else []
            if profiler:
                profiler.wait()
            if postgres:
                pg_cpu = children_cpu(postgres.pid) - pg_before
                rows = int(psql(pg_folder, pg_port, "SELECT count(*) FROM sample")) - rows_before
                rows_span = time.monotonic() - rows_since
                sessions = health(hub_port)["sessionsActive"]
            gateway_cpu = [cpu_seconds(pid) for pid in gateway_pids]
            mem = memory(hub.pid)
            latencies.sort()
            print("| measurement | result |")
            print("|---|---|")
            print("| load | %d gateways × %d straps × 4 Hz%s, measured over %d s |" % (
                arguments.gateways, arguments.straps, ", signed" if arguments.signed else "", arguments.seconds))
            print("| frames received by %d hub clients in the window | %d (%d per client per second; %d emitted per second) |" % (
                arguments.clients, len(latencies), len(latencies) / arguments.clients / wall,
                arguments.gateways * arguments.straps * 4))
            print("| latency strap frame → hub client, p50 / p99 / max | %.2f ms / %.2f ms / %.2f ms |" % (
                latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)], latencies[-1]))
            print("| hub CPU under load | %.1f %% of a core |" % (100 * hub_cpu / wall))
            print("| hub peak RSS (VmHWM) / RSS now | %.1f MB / %.1f MB |" % (mem["VmHWM"], mem["VmRSS"]))
            print("| mosquitto CPU under load | %.1f %% of a core |" % (100 * broker_cpu / wall))
            print("| gateways' CPU since start (s) | %s |" % ", ".join("%.1f" % value for value in gateway_cpu))
            if postgres:
                print("| hub sessions recording (class) | %d |" % sessions)
                print("| PostgreSQL ingest (rows of `sample` in the window, whole measured span) | %.0f rows/s |" % (rows / rows_span))
                print("| PostgreSQL CPU (postmaster + backends) | %.1f %% of a core |" % (100 * pg_cpu / rows_span))
            if pause:
                answers = sorted(pause.answers)
                print("| /v1/health while PostgreSQL is stopped for %g s: answers, p50 / max | %d (%d failed), %.2f ms / %.2f ms |" % (
                    arguments.pause_store, len(answers), pause.failures, answers[len(answers) // 2], answers[-1]))
                print("| frames delivered while it is stopped, latency p50 / p99 / max | %d, %.2f ms / %.2f ms / %.2f ms |" % (
                    len(paused_latencies), paused_latencies[len(paused_latencies) // 2],
                    paused_latencies[int(len(paused_latencies) * 0.99)], paused_latencies[-1]))
        finally:
            for process in reversed(processes):
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
            for pid in buses:
                os.kill(pid, 15)


if __name__ == "__main__":
    main()
