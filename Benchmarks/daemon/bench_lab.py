"""The lab benchmark (issue 41): N simulated H10 straps through the release `hrbridged` into LSL.

Two modes, alternated run by run: `hr` (each strap's heart rate and RR to LSL, no raw signal) and
`raw` (the same plus ECG at 130 Hz and acceleration at --acc-rate Hz, started by [lsl] on every
strap). A pylsl inlet per stream pulls everything, so the outlets really send. Daemon CPU from
/proc/PID/stat over the measured window (after a warm-up), RSS from /proc/PID/status, and the
samples the inlets received per second. LSL is pinned to this machine (LSLAPICFG).

usage: bench_lab.py --hrbridged PATH --liblsl PATH [--straps 10] [--seconds 60] [--runs 3] [--acc-rate 50]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time

from bench_daemon import cpu_seconds, memory


def scenario(straps):
    return json.dumps({
        "version": 1, "seed": 41,
        "straps": [
            {"name": "H10 %02d" % index, "address": "A0:9E:1A:00:00:%02X" % index, "pmd": True,
             "segments": [{"type": "steady", "duration": "120m", "intensity": 0.5}]}
            for index in range(straps)
        ],
    })


def config(directory, straps, mode, liblsl, acc_rate):
    streams = '["hr", "rr"]' if mode == "hr" else '["hr", "rr", "ecg", "acc"]'
    sensors = "".join('[[sensors]]\naddress = "A0:9E:1A:00:00:%02X"\n\n' % index for index in range(straps))
    return f"""[adapter]
kind = "mock"
scenario = "{directory}/scenario.json"
speed = 1

[store]
path = "{directory}/store.sqlite"

[api]
socket = "{directory}/api.sock"

{sensors}
[lsl]
enabled = true
library = "{liblsl}"
host = "bench"
streams = {streams}
acc_rate = {acc_rate}
"""


def consume(ids, stop, counts):
    import pylsl
    inlets = {}
    deadline = time.monotonic() + 60
    # One query per stream: a resolve of everything on the machine misses some of 40 answers.
    while len(inlets) < len(ids) and time.monotonic() < deadline:
        for source_id in ids:
            if source_id in inlets:
                continue
            found = pylsl.resolve_byprop("source_id", source_id, timeout=2.0)
            if found:
                inlets[source_id] = pylsl.StreamInlet(found[0], max_buflen=30)
    counts["streams"] = len(inlets)
    inlets = list(inlets.values())
    while not stop.is_set():
        for inlet in inlets:
            chunk, _ = inlet.pull_chunk(timeout=0.0)
            counts["samples"] += len(chunk)
        time.sleep(0.05)


def run(args, mode):
    with tempfile.TemporaryDirectory(prefix="hrbridge-lab-") as directory:
        with open(os.path.join(directory, "scenario.json"), "w") as file:
            file.write(scenario(args.straps))
        path = os.path.join(directory, "config.toml")
        with open(path, "w") as file:
            file.write(config(directory, args.straps, mode, args.liblsl, args.acc_rate))
        lsl_config = os.path.join(directory, "lsl_api.cfg")
        with open(lsl_config, "w") as file:
            # liblsl's default PortRange (32) shows only about 16 outlets of one process.
            file.write("[multicast]\nResolveScope = machine\n[lab]\nKnownPeers = {127.0.0.1}\n[ports]\nPortRange = 512\n")
        os.environ["LSLAPICFG"] = lsl_config
        daemon = subprocess.Popen(
            [args.hrbridged, "--config", path, "--log-level", "warning"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=dict(os.environ))
        stop = threading.Event()
        counts = {"samples": 0, "streams": 0}
        kinds = ["hr", "rr"] + ([] if mode == "hr" else ["ecg", "acc"])
        ids = ["hrbridge:bench:A0:9E:1A:00:00:%02X:%s" % (index, kind) for index in range(args.straps) for kind in kinds]
        expected = len(ids)
        consumer = threading.Thread(target=consume, args=(ids, stop, counts), daemon=True)
        consumer.start()
        try:
            deadline = time.monotonic() + 90
            while counts["streams"] < expected and time.monotonic() < deadline:
                if daemon.poll() is not None:
                    raise SystemExit("hrbridged exited with status %d" % daemon.returncode)
                time.sleep(0.2)
            time.sleep(args.warmup)
            cpu_before, wall_before, samples_before = cpu_seconds(daemon.pid), time.monotonic(), counts["samples"]
            time.sleep(args.seconds)
            cpu = cpu_seconds(daemon.pid) - cpu_before
            wall = time.monotonic() - wall_before
            samples = counts["samples"] - samples_before
            rss = memory(daemon.pid)
        finally:
            stop.set()
            daemon.terminate()
            daemon.wait(timeout=30)
        return {
            "mode": mode, "streams": counts["streams"], "cpu_percent": 100 * cpu / wall,
            "samples_per_second": samples / wall, "rss_mb": rss.get("VmRSS"), "peak_rss_mb": rss.get("VmHWM"),
        }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hrbridged", required=True)
    parser.add_argument("--liblsl", required=True)
    parser.add_argument("--straps", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--acc-rate", type=int, default=50)
    args = parser.parse_args()
    results = {"hr": [], "raw": []}
    for index in range(args.runs):
        for mode in ("hr", "raw"):
            result = run(args, mode)
            results[mode].append(result)
            print(json.dumps({"run": index + 1, **result}), flush=True)
    for mode, rows in results.items():
        print(json.dumps({
            "mode": mode, "median_cpu_percent": statistics.median(r["cpu_percent"] for r in rows),
            "median_samples_per_second": statistics.median(r["samples_per_second"] for r in rows),
            "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] or 0 for r in rows),
        }), flush=True)


if __name__ == "__main__":
    main()
