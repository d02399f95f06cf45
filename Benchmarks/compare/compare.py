"""Side-by-side notification benchmark: hrbridge, bleak and a libdbus floor on one private bus.

One dbus-daemon; per scenario and participant a fresh producer (NotifyBenchmark --producer) owns
org.bluez, the participant connects and subscribes, says "ready", the producer emits the burst,
and the participant reports latency (emit -> delivered, from the time stamped in each frame),
CPU per notification and peak RSS. Scenarios: 1 strap at 4 Hz, 50 straps at 4 Hz, and a flood
(one strap, as fast as the producer goes). Prints a Markdown table of medians over --runs runs
and the ratios against the targets of the issue.

A fourth scenario, "flood, a JSON line per frame to a file", is what a user of `monitor --json`
runs: hrbridge is the CLI itself (`hrbridge monitor --json`, release build) with stdout to a file,
bleak decodes and writes json.dumps lines, the floor writes each frame's bytes in hex; every
participant flushes each line. CPU is counted from "ready" to the last line in the file.

usage: compare.py --notify PATH --consumer PATH --floor PATH [--hrbridge PATH] [--runs 3] [--quick]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={directory}/bus</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
<allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
<allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/>
<allow receive_type="error"/></policy>
<limit name="max_incoming_bytes">1000000000</limit><limit name="max_outgoing_bytes">1000000000</limit>
<limit name="max_match_rules_per_connection">100000</limit>
</busconfig>
"""


def start_bus(directory):
    path = os.path.join(directory, "bus.conf")
    with open(path, "w") as config:
        config.write(CONFIG.format(directory=directory))
    daemon = subprocess.run(
        ["dbus-daemon", "--config-file=" + path, "--fork", "--print-address=1", "--print-pid=1"],
        check=True, capture_output=True, text=True)
    address, pid = daemon.stdout.split()[:2]
    return address, int(pid)


def read_line(process, what, timeout):
    """The next stdout line of `process`, or an error naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    import select
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("%s ended early (exit %s)" % (what, process.poll()))
            return line.strip()
    raise RuntimeError("%s: no answer in %d s" % (what, timeout))


def run_once(address, arguments, participant, straps, per_strap, rate):
    environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    producer = subprocess.Popen(
        [arguments.notify, "--producer", address, "--straps", str(straps)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)
    expected = straps * per_strap
    commands = {
        "floor": [arguments.floor, str(straps), str(expected)],
        "hrbridge": [arguments.consumer, "--straps", str(straps), "--expect", str(expected)],
        "bleak": [sys.executable, os.path.join(os.path.dirname(__file__), "bleak_client.py"), str(straps),
                  str(expected)],
    }
    consumer = None
    try:
        if read_line(producer, "producer", 30) != "ready":
            raise RuntimeError("producer did not start")
        consumer = subprocess.Popen(commands[participant], stdout=subprocess.PIPE, text=True, env=environment)
        if read_line(consumer, participant, 120) != "ready":
            raise RuntimeError(participant + " did not get ready")
        producer.stdin.write("burst %d %s\n" % (per_strap, rate))
        producer.stdin.flush()
        done = read_line(producer, "producer burst", 600)
        result = json.loads(read_line(consumer, participant + " result", 600))
        sent = dict(part.split("=") for part in done.split()[1:])
        result["emit_rate"] = int(sent["sent"]) / max(float(sent["seconds"]), 1e-9)
        return result
    finally:
        for process in (consumer, producer):
            if process is not None:
                process.kill()
                process.wait()


def process_cpu_seconds(pid):
    """User + system CPU of a running process, from /proc."""
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def count_lines(path, marker):
    try:
        with open(path, "rb") as file:
            return sum(1 for line in file if marker in line)
    except FileNotFoundError:
        return 0


def wait_for_lines(path, marker, wanted, quiet_seconds, give_up_seconds):
    """Waits until `wanted` lines hold `marker`, or none came for `quiet_seconds` (loss)."""
    started = time.monotonic()
    last_count, last_change = -1, time.monotonic()
    while True:
        count = count_lines(path, marker)
        if count >= wanted:
            return count
        if count != last_count:
            last_count, last_change = count, time.monotonic()
        elif time.monotonic() - last_change > quiet_seconds and count > 0:
            return count
        if time.monotonic() - started > give_up_seconds:
            return count
        time.sleep(0.05)


def run_print_once(address, arguments, participant, per_strap, directory):
    """One flood where the participant writes a line per frame to a file."""
    environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    output = os.path.join(directory, "lines-%s.txt" % participant)
    if os.path.exists(output):
        os.unlink(output)
    producer = subprocess.Popen(
        [arguments.notify, "--producer", address, "--straps", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)
    consumer = None
    sink = None
    try:
        if read_line(producer, "producer", 30) != "ready":
            raise RuntimeError("producer did not start")
        if participant in ("hrbridge", "before"):
            sink = open(output, "w")
            binary = arguments.hrbridge if participant == "hrbridge" else arguments.hrbridge_before
            consumer = subprocess.Popen(
                [binary, "monitor", "--json", "C0:FF:EE:00:00:01"], stdout=sink,
                stderr=subprocess.DEVNULL, env=environment)
            # Ready once it says the strap is connected (its own status line).
            if wait_for_lines(output, b'"event":"connected"', 1, 120, 120) < 1:
                raise RuntimeError("hrbridge monitor did not connect")
            marker = b'"heartRate"'
        else:
            command = {
                "floor": [arguments.floor, "1", str(per_strap), output],
                "bleak": [sys.executable, os.path.join(os.path.dirname(__file__), "bleak_client.py"), "1",
                          str(per_strap), output],
            }[participant]
            consumer = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment)
            if read_line(consumer, participant, 120) != "ready":
                raise RuntimeError(participant + " did not get ready")
            marker = b"\n"
        cpu_before = process_cpu_seconds(consumer.pid)
        producer.stdin.write("burst %d 0\n" % per_strap)
        producer.stdin.flush()
        read_line(producer, "producer burst", 600)
        if participant in ("hrbridge", "before"):
            received = wait_for_lines(output, marker, per_strap, 5, 600)
            cpu = process_cpu_seconds(consumer.pid) - cpu_before
        else:
            # floor and bleak measure their own CPU from "ready" to the last frame, then exit.
            result = json.loads(read_line(consumer, participant + " result", 600))
            cpu = result["cpu_us_per_notification"] * max(result["received"], 1) / 1e6
            received = count_lines(output, marker)
        return {"received": received, "expected": per_strap,
                "cpu_us_per_notification": cpu / max(received, 1) * 1e6}
    finally:
        for process in (consumer, producer):
            if process is not None:
                process.kill()
                process.wait()
        if sink is not None:
            sink.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--notify", required=True)
    parser.add_argument("--consumer", required=True, help="NotifyConsumer, the hrbridge participant")
    parser.add_argument("--floor", required=True)
    parser.add_argument("--hrbridge", help="the hrbridge CLI (release build) for the print-to-file scenario")
    parser.add_argument("--hrbridge-before", help="an earlier hrbridge build, printed beside it as \"before\"")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only-print", action="store_true", help="only the print-to-file scenario")
    parser.add_argument("--quick", action="store_true", help="shorter scenarios, one run")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.runs = 1
    scenarios = [
        ("1 strap, 4 Hz", 1, 30 if arguments.quick else 120, 4),
        ("50 straps, 4 Hz", 50, 12 if arguments.quick else 40, 4),
        ("flood, 1 strap, unpaced", 1, 20000, 0),
    ]
    if arguments.only_print:
        scenarios = []
    participants = ["floor", "hrbridge", "bleak"]
    print_frames = 20000
    with tempfile.TemporaryDirectory(prefix="hrbridge-compare-") as directory:
        address, pid = start_bus(directory)
        try:
            results = {}
            printed = {}
            print_participants = participants + (["before"] if arguments.hrbridge_before else [])
            if arguments.hrbridge:
                for run in range(arguments.runs):
                    for participant in print_participants:
                        result = run_print_once(address, arguments, participant, print_frames, directory)
                        printed.setdefault(participant, []).append(result)
                        print("# print to file, %s, run %d: %s" % (participant, run + 1, json.dumps(result)),
                              file=sys.stderr, flush=True)
            for name, straps, per_strap, rate in scenarios:
                for run in range(arguments.runs):
                    for participant in participants:
                        result = run_once(address, arguments, participant, straps, per_strap, rate)
                        results.setdefault((name, participant), []).append(result)
                        print("# %s, %s, run %d: %s" % (name, participant, run + 1, json.dumps(result)),
                              file=sys.stderr, flush=True)
        finally:
            os.kill(pid, 15)
    if scenarios:
        report(results, scenarios, participants, arguments.runs)
    if printed:
        report_print(printed, list(printed), arguments.runs)


def median(results, key):
    return statistics.median(result[key] for result in results)


def report(results, scenarios, participants, runs):
    print("| scenario | client | received | p50 | p99 | CPU per notification | peak RSS | producer rate |")
    print("|---|---|---|---|---|---|---|---|")
    for name, straps, per_strap, rate in scenarios:
        for participant in participants:
            runs_of = results[(name, participant)]
            received = sum(r["received"] for r in runs_of)
            expected = sum(r["expected"] for r in runs_of)
            print("| %s | %s | %d/%d | %.0f µs | %.0f µs | %.1f µs | %.1f MB | %.0f/s |" % (
                name, participant, received, expected, median(runs_of, "p50_us"), median(runs_of, "p99_us"),
                median(runs_of, "cpu_us_per_notification"), median(runs_of, "peak_rss_kb") / 1024,
                median(runs_of, "emit_rate")))
    print()
    print("Ratios (hrbridge / other, medians of %d run(s)); targets: p50 ≤ 1 × bleak and ≤ 1.2 × floor, "
          "CPU ≤ 0.6 × bleak and ≤ 2 × floor, peak RSS ≤ 0.5 × bleak, no loss in the flood." % runs)
    print()
    print("| scenario | p50 / bleak | p50 / floor | CPU / bleak | CPU / floor | RSS / bleak | lost (hrbridge) |")
    print("|---|---|---|---|---|---|---|")
    for name, *_ in scenarios:
        ours, bleak, floor = (results[(name, p)] for p in ("hrbridge", "bleak", "floor"))

        def ratio(key, other):
            return median(ours, key) / max(median(other, key), 1e-9)

        lost = sum(r["expected"] - r["received"] for r in ours)
        print("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d |" % (
            name, ratio("p50_us", bleak), ratio("p50_us", floor), ratio("cpu_us_per_notification", bleak),
            ratio("cpu_us_per_notification", floor), ratio("peak_rss_kb", bleak), lost))


def report_print(printed, participants, runs):
    print()
    print("Flood of 20,000 frames, one JSON line per frame to a file (hrbridge: `hrbridge monitor --json`, "
          "release build; medians of %d run(s)); targets: CPU ≤ 0.6 × bleak and ≤ 2.5 × floor, no loss." % runs)
    print()
    print("| client | lines | CPU per notification |")
    print("|---|---|---|")
    for participant in participants:
        runs_of = printed[participant]
        received = sum(r["received"] for r in runs_of)
        expected = sum(r["expected"] for r in runs_of)
        print("| %s | %d/%d | %.1f µs |" % (participant, received, expected,
                                          median(runs_of, "cpu_us_per_notification")))
    ours = median(printed["hrbridge"], "cpu_us_per_notification")
    print()
    print("| CPU / bleak | CPU / floor | lost (hrbridge) |")
    print("|---|---|---|")
    print("| %.2f | %.2f | %d |" % (
        ours / max(median(printed["bleak"], "cpu_us_per_notification"), 1e-9),
        ours / max(median(printed["floor"], "cpu_us_per_notification"), 1e-9),
        sum(r["expected"] - r["received"] for r in printed["hrbridge"])))


if __name__ == "__main__":
    main()
