"""Raw signals in the store: what an hour of ECG costs on disk, and whether it slows heart rate.

The release `hrbridge workout run` records the same simulated session twice, N H10s (the
simulator's "pmd" straps) for H hours at --speed max: once with --ecg --acc, once without. Then:
the bytes the waveform table and its rows take (SQLite's dbstat), per strap and hour, and the
heart-rate queries a user runs, timed on both stores, alternating, median of R runs:
`workouts show` (the workout's heart-rate samples and chart) and `samples --type heartRate
--bucket minute` (statistics per minute over the session) through the CLI, and the store's own
heart-rate query on the sample table through sqlite3 (`.timer on`, the query alone).

usage: bench_lab_store.py --hrbridge PATH [--straps 10] [--hours 2] [--runs 11]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def scenario(straps, hours):
    return {
        "version": 1, "seed": 41,
        "straps": [
            {
                "name": f"Polar H10 {index:08X}", "address": f"A0:9E:1A:00:00:{index + 1:02X}", "pmd": True,
                "restingHeartRate": 50 + index, "maximumHeartRate": 185,
                "segments": [{"type": "steady", "duration": f"{hours * 60}m", "intensity": 0.3 + 0.04 * index}],
            }
            for index in range(straps)
        ],
    }


def run(command):
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return elapsed, result


def sqlite(path, sql):
    return subprocess.run(["sqlite3", path, sql], capture_output=True, text=True, check=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hrbridge", required=True)
    parser.add_argument("--straps", type=int, default=10)
    parser.add_argument("--hours", type=int, default=2)
    parser.add_argument("--runs", type=int, default=11)
    arguments = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="hrbridge-lab-store-")
    path = os.path.join(directory, "h10s.json")
    with open(path, "w") as file:
        json.dump(scenario(arguments.straps, arguments.hours), file)
    stores = {"with": os.path.join(directory, "with.sqlite"), "without": os.path.join(directory, "without.sqlite")}
    for name, store in stores.items():
        extra = ["--ecg", "--acc", "--acc-rate", "50"] if name == "with" else []
        elapsed, _ = run([arguments.hrbridge, "workout", "run", "--scenario", path, "--speed", "max", "--json",
                          "--store", store] + extra)
        sqlite(store, "PRAGMA wal_checkpoint(TRUNCATE)")
        print(f"recorded {name} raw signals: {elapsed:.1f} s, file {os.path.getsize(store) / 1e6:.1f} MB")
    store = stores["with"]
    workout = sqlite(store, "SELECT id FROM workout")
    hours = arguments.hours * arguments.straps
    for kind, rows, samples, blob in [line.split("|") for line in sqlite(
            store, "SELECT kind, COUNT(*), SUM(count), SUM(length(data)) FROM waveform GROUP BY kind").splitlines()]:
        print(f"{kind}: {int(rows) / hours:,.0f} frames and {int(samples) / hours:,.0f} samples per strap-hour; "
              f"values {int(blob) / hours / 1e6:.3f} MB per strap-hour ({int(blob) / int(samples):.2f} bytes a sample)")
    pages = sqlite(store, "SELECT SUM(pgsize) FROM dbstat WHERE name = 'waveform'")
    print(f"waveform table on disk (rows, key, blobs): {int(pages) / hours / 1e6:.3f} MB per strap-hour "
          f"(ECG + acceleration at 50 Hz)")
    heart_rates = sqlite(store, "SELECT COUNT(*) FROM sample WHERE type = 'heartRate'")
    print(f"heart-rate samples in each store: {heart_rates}")

    commands = {
        "workouts show": lambda s: [arguments.hrbridge, "workouts", "show", sqlite(s, "SELECT id FROM workout"),
                                    "--store", s],
        "samples --bucket minute": lambda s: [arguments.hrbridge, "samples", "--type", "heartRate", "--bucket",
                                              "minute", "--store", s],
    }
    timings = {(label, name): [] for label in commands for name in stores}
    query = ("SELECT COUNT(*), AVG(value) FROM sample WHERE type = 'heartRate' AND workoutId = "
             f"'{workout}'")
    sql_timings = {name: [] for name in stores}
    for _ in range(arguments.runs):
        for name, store in stores.items():
            for label, command in commands.items():
                elapsed, _ = run(command(store))
                timings[(label, name)].append(elapsed)
            workout_id = sqlite(store, "SELECT id FROM workout")
            out = subprocess.run(["sqlite3", store], input=".timer on\n" + query.replace(workout, workout_id) + ";\n",
                                 capture_output=True, text=True, check=True).stdout
            real = [float(line.split()[3]) for line in out.splitlines() if line.startswith("Run Time:")]
            sql_timings[name].append(real[0] * 1000)
    for label in commands:
        with_ms = statistics.median(timings[(label, "with")]) * 1000
        without_ms = statistics.median(timings[(label, "without")]) * 1000
        print(f"{label}: {with_ms:.1f} ms with raw signals, {without_ms:.1f} ms without "
              f"(ratio {with_ms / without_ms:.2f}, medians of {arguments.runs})")
    with_ms, without_ms = statistics.median(sql_timings["with"]), statistics.median(sql_timings["without"])
    print(f"the workout's heart rate in SQL: {with_ms:.2f} ms with, {without_ms:.2f} ms without "
          f"(ratio {with_ms / without_ms:.2f})")
    store = stores["with"]
    started = time.monotonic()
    run([arguments.hrbridge, "workouts", "export", workout, "--format", "edf", "-o",
         os.path.join(directory, "s01"), "--store", store])
    print(f"EDF+ export of every strap's ECG and acceleration: {time.monotonic() - started:.1f} s")
    started = time.monotonic()
    run([arguments.hrbridge, "workouts", "export", workout, "--format", "csv", "--signal", "ecg", "-o",
         os.path.join(directory, "ecg.csv"), "--store", store])
    print(f"CSV export of every strap's ECG: {time.monotonic() - started:.1f} s, "
          f"{os.path.getsize(os.path.join(directory, 'ecg.csv')) / 1e6:.0f} MB")
    subprocess.run(["rm", "-rf", directory])


if __name__ == "__main__":
    main()
