"""Soak benchmark: a class of 60 simulated straps recording through `hrbridged` for hours, at 1×.

The daemon runs the simulator (`[adapter] kind = "mock"`, `speed = 1`) on a scenario written here:
N linked straps, each with RR intervals and its own athlete (age, weight, resting and maximum heart
rate), warming up and then doing intervals for longer than the run. Every strap is configured
(`[[sensors]]`) and `[class] auto_join` is on, so starting the class (`POST /v1/class` on the Unix
socket) starts one recorded session per strap. The measured window opens once `/v1/health` shows N
straps streaming and N sessions active and `/v1/sessions` N of them running.

Every --interval seconds one CSV line goes to stdout: minutes into the window, the daemon's RSS
(VmRSS) and peak RSS (VmHWM), open file descriptors (/proc/PID/fd), threads, CPU over the interval
(% of one core), active sessions and the newest sample row id (samples stored so far). At the end:
RSS at minute 10 against the end, the highest FD and thread counts against minute 10, mean CPU, the
samples in the store and the workouts they belong to; then SIGTERM, which ends and saves every
session, and the saved workouts are counted. --markdown FILE writes the curve and the summary as
markdown. Exit status 1 when the daemon dies, or when a check fails.

The store is SQLite in the run's temporary folder (read with Python's sqlite3 while the daemon
writes), or with --postgres a PostgreSQL cluster made for the run (bench_hub.start_postgres).

usage: bench_soak.py --hrbridged PATH [--minutes 120] [--interval 60] [--straps 60] [--markdown PATH]
                     [--postgres]
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

from bench_daemon import TOKEN, address, cpu_seconds, free_port, memory, unit_environment
from bench_hub import health, post_unix, psql, start_postgres, write_config

COLUMNS = ["minute", "rss_mb", "peak_rss_mb", "fds", "threads", "cpu_pct", "sessions", "samples"]


def log(message):
    print(message, file=sys.stderr, flush=True)


def scenario(straps, minutes):
    """N straps: a ramp of 3–5 min, then 3 min work / 2 min recovery for longer than the run."""
    repeats = min(1000, (minutes + 10) // 5 + 1)
    result = []
    for index in range(straps):
        result.append({
            "name": "Soak Strap %02d" % (index + 1), "address": address(index + 1),
            "restingHeartRate": 50 + (index * 7) % 21, "maximumHeartRate": 175 + (index * 11) % 21,
            "age": 20 + (index * 13) % 40, "weight": 55 + (index * 17) % 40,
            "sex": "male" if index % 2 else "female",
            "segments": [
                {"type": "ramp", "duration": 180 + 30 * (index % 5), "from": 0.2, "to": 0.5},
                {"type": "intervals", "repeat": repeats,
                 "work": {"duration": "3m", "intensity": 0.6 + 0.08 * (index % 4)},
                 "recovery": {"duration": "2m", "intensity": 0.35}},
            ],
        })
    return {"version": 1, "seed": 2026, "straps": result}


def configuration(arguments, directory, port, store):
    text = '[adapter]\nkind = "mock"\nscenario = "%s/scenario.json"\nspeed = 1\n' % directory
    text += store
    text += '[api]\nsocket = "%s/api.sock"\ntcp_port = %d\n' % (directory, port)
    text += '[[api.tokens]]\ntoken = "%s"\nrole = "read"\n' % TOKEN
    text += '[class]\nauto_join = true\nactivity = "hiit"\n'
    for index, strap in enumerate(scenario(arguments.straps, arguments.minutes)["straps"]):
        athlete = "athlete-%02d" % (index + 1)
        text += '[[athletes]]\nid = "%s"\nage = %d\nsex = "%s"\nweight = %d\nresting_hr = %d\nmax_hr = %d\n' % (
            athlete, strap["age"], strap["sex"], strap["weight"], strap["restingHeartRate"], strap["maximumHeartRate"])
        text += '[[sensors]]\naddress = "%s"\nathlete = "%s"\n' % (strap["address"], athlete)
    return text


def get(port, path):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), headers={"Authorization": "Bearer " + TOKEN})
    return json.load(urllib.request.urlopen(request, timeout=10))


def threads(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("Threads:"):
            return int(line.split()[1])


class Store:
    """Row counts of the daemon's store, SQLite (read-only, beside the daemon) or PostgreSQL."""

    def __init__(self, path=None, postgres=None):
        self.path, self.postgres = path, postgres

    def query(self, sqlite_sql, postgres_sql):
        if self.postgres:
            return psql(*self.postgres, postgres_sql).split("|")
        connection = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True, timeout=30)
        try:
            return connection.execute(sqlite_sql).fetchone()
        finally:
            connection.close()

    def newest_sample(self):
        return int(self.query("SELECT max(id) FROM sample", "SELECT max(id) FROM sample")[0] or 0)

    def samples(self):
        """Samples, and the workouts they were recorded in."""
        row = self.query("SELECT count(*), count(DISTINCT workoutId) FROM sample",
                         "SELECT count(*), count(DISTINCT workout_id) FROM sample")
        return int(row[0]), int(row[1])

    def finished_workouts(self):
        return int(self.query("SELECT count(*) FROM workout WHERE state = 'finished'",
                              "SELECT count(*) FROM workout WHERE state = 'finished'")[0])


def wait_until(what, condition, daemon, seconds):
    deadline = time.monotonic() + seconds
    while True:
        try:
            if condition():
                return
        except OSError:
            pass
        if daemon.poll() is not None:
            raise DaemonDied("the daemon exited with status %d %s" % (daemon.returncode, what))
        if time.monotonic() > deadline:
            raise RuntimeError("timed out %s" % what)
        time.sleep(0.2)


class DaemonDied(RuntimeError):
    pass


def soak(arguments, daemon, port, store):
    """The measured window: one row every interval. Returns the rows."""
    pid = daemon.pid
    rows = []
    start = time.monotonic()
    last_cpu, last_wall = cpu_seconds(pid), start
    print(",".join(COLUMNS), flush=True)
    step = 0
    while True:
        now = time.monotonic()
        try:
            sessions = health(port)["sessionsActive"]
        except OSError:
            sessions = -1
        mem, cpu = memory(pid), cpu_seconds(pid)
        row = {"minute": (now - start) / 60, "rss_mb": mem["VmRSS"], "peak_rss_mb": mem["VmHWM"],
               "fds": len(os.listdir("/proc/%d/fd" % pid)), "threads": threads(pid),
               "cpu_pct": 100 * (cpu - last_cpu) / (now - last_wall) if step else None,
               "sessions": sessions, "samples": store.newest_sample(), "cpu_s": cpu}
        last_cpu, last_wall = cpu, now
        rows.append(row)
        print(",".join(format_value(key, row[key]) for key in COLUMNS), flush=True)
        if now - start >= 60 * arguments.minutes - 0.5:
            return rows
        step += 1
        until = start + min(step * arguments.interval, 60 * arguments.minutes)
        while time.monotonic() < until:
            if daemon.poll() is not None:
                raise DaemonDied("the daemon died %.1f min into the window (exit status %d)" % (
                    (time.monotonic() - start) / 60, daemon.returncode))
            time.sleep(min(1, max(0, until - time.monotonic())))


def format_value(key, value):
    if value is None:
        return ""
    if key == "minute":
        return "%.2f" % value
    return "%.1f" % value if isinstance(value, float) else str(value)


def summary(arguments, rows, stored, workouts, saved, stop_seconds, status, problems):
    reference_minute = 10 if arguments.minutes > 10 else 0
    reference = next(row for row in rows if row["minute"] >= reference_minute - 0.01)
    end = rows[-1]
    wall = 60 * (end["minute"] - rows[0]["minute"])
    mean_cpu = 100 * (end["cpu_s"] - rows[0]["cpu_s"]) / wall if wall else 0
    lines = [
        "| measurement | result |",
        "|---|---|",
        "| load | %d simulated straps at 1×, each recording a session (class, auto_join), %.1f min measured |" % (
            arguments.straps, end["minute"]),
        "| RSS at minute %.0f → end | %.1f MB → %.1f MB (%+.1f MB) |" % (
            reference["minute"], reference["rss_mb"], end["rss_mb"], end["rss_mb"] - reference["rss_mb"]),
        "| peak RSS (VmHWM) at the end | %.1f MB |" % end["peak_rss_mb"],
        "| file descriptors at minute %.0f → max | %d → %d |" % (
            reference["minute"], reference["fds"], max(row["fds"] for row in rows)),
        "| threads at minute %.0f → max | %d → %d |" % (
            reference["minute"], reference["threads"], max(row["threads"] for row in rows)),
        "| mean daemon CPU over the window | %.1f %% of a core |" % mean_cpu,
        "| sessions active at the end | %d of %d |" % (end["sessions"], arguments.straps),
        "| samples stored (rows of `sample`, in how many workouts) | %d (%d workouts) |" % (stored, workouts),
        "| SIGTERM → exit (every session ended and saved) | %.1f s, exit status %s, %d workouts finished |" % (
            stop_seconds, status, saved),
    ]
    lines += ["| **problem** | %s |" % problem for problem in problems]
    return lines


def markdown(arguments, rows, lines):
    out = ["# hrbridged soak: %d straps, %d min, sampled every %d s" % (arguments.straps, arguments.minutes,
                                                                     arguments.interval), ""]
    out += ["| minute | RSS MB | peak RSS MB | FDs | threads | CPU % of a core | sessions | newest sample id |",
            "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        out.append("| " + " | ".join(format_value(key, row[key]) for key in COLUMNS) + " |")
    out += [""] + lines
    with open(arguments.markdown, "w") as file:
        file.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hrbridged", required=True)
    parser.add_argument("--minutes", type=int, default=120)
    parser.add_argument("--interval", type=int, default=60, help="seconds between samples")
    parser.add_argument("--straps", type=int, default=60)
    parser.add_argument("--markdown", help="also write the curve and the summary as a markdown table here")
    parser.add_argument("--postgres", action="store_true", help="store into a PostgreSQL cluster made for the run")
    arguments = parser.parse_args()
    processes = []
    with tempfile.TemporaryDirectory(prefix="hrbridge-bench-soak-") as directory:
        try:
            with open(os.path.join(directory, "scenario.json"), "w") as out:
                json.dump(scenario(arguments.straps, arguments.minutes), out, indent=1)
            if arguments.postgres:
                server, folder, pg_port = start_postgres(directory)
                processes.append(server)
                store = Store(postgres=(folder, pg_port))
                store_config = '[store]\nurl = "postgresql://hrbridge@/hrbridge?host=%s&port=%d"\n' % (folder, pg_port)
            else:
                store = Store(path=os.path.join(directory, "store.sqlite"))
                store_config = '[store]\npath = "%s"\n' % store.path
            port = free_port()
            config = os.path.join(directory, "config.toml")
            write_config(config, configuration(arguments, directory, port, store_config))
            environment = dict(os.environ)
            environment.update(unit_environment())
            daemon_log = open(os.path.join(directory, "daemon.log"), "w")
            daemon = subprocess.Popen([arguments.hrbridged, "--config", config, "--log-level", "warning"],
                                      env=environment, stdout=daemon_log, stderr=subprocess.STDOUT)
            processes.append(daemon)
            log("hrbridged %d: waiting for %d straps" % (daemon.pid, arguments.straps))
            wait_until("before every strap streamed",
                       lambda: health(port)["sensorsStreaming"] == arguments.straps, daemon, 120)
            status = post_unix(os.path.join(directory, "api.sock"), "/v1/class")
            assert status == 201, "POST /v1/class answered %d" % status

            def recording():
                running = [s for s in get(port, "/v1/sessions")["sessions"] if s["state"] == "running"]
                return health(port)["sessionsActive"] == arguments.straps and len(running) == arguments.straps

            wait_until("before every strap recorded a session", recording, daemon, 120)
            log("%d sessions recording; the window opens (%d min, a row every %d s)" % (
                arguments.straps, arguments.minutes, arguments.interval))
            rows = soak(arguments, daemon, port, store)
            problems = []
            final = health(port)
            if final["status"] != "ok":
                problems.append("health %s: %s" % (final["status"], ", ".join(final.get("problems", []))))
            if final.get("store", {}).get("lost"):
                problems.append("%d samples lost" % final["store"]["lost"])
            if final["sessionsActive"] != arguments.straps:
                problems.append("%d sessions active at the end" % final["sessionsActive"])
            stored, workouts = store.samples()
            if rows[-1]["samples"] <= rows[0]["samples"] or workouts < arguments.straps:
                problems.append("the store did not record every session through the window")
            stopping = time.monotonic()
            daemon.terminate()
            exit_status = daemon.wait(timeout=120)
            stop_seconds = time.monotonic() - stopping
            saved = store.finished_workouts()
            if exit_status != 0 or saved < arguments.straps:
                problems.append("stopping: exit status %d, %d workouts finished" % (exit_status, saved))
            lines = summary(arguments, rows, stored, workouts, saved, stop_seconds, exit_status, problems)
            print()
            print("\n".join(lines))
            if arguments.markdown:
                markdown(arguments, rows, lines)
            if problems:
                sys.exit(1)
        except DaemonDied as error:
            log(str(error))
            daemon_log.flush()
            log("the daemon's last output:\n" + "".join(open(daemon_log.name).readlines()[-30:]))
            sys.exit(1)
        finally:
            for process in reversed(processes):
                if process.poll() is None:
                    process.terminate()
                    try:
                        process.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        process.kill()


if __name__ == "__main__":
    main()
