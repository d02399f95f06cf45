"""Summarises `Benchmarks/daemon-compare.sh`: reads the Markdown tables each benchmark printed
(daemon-BUILD-RUN.md, class-BUILD-RUN.md, hub-BUILD-RUN.md) and prints, per benchmark and figure,
every run's value for the old and the new build, both medians and their ratio (new / old).

usage: compare_summary.py FOLDER --old REV --new REV
"""

import argparse
import os
import re
import statistics
import sys

# (benchmark, figure, row label prefix, index of the number in the row's value)
FIGURES = [
    ("daemon", "delivered", "measurement messages received", 0),
    ("daemon", "p50 ms", "latency frame emitted → client, p50", 0),
    ("daemon", "p99 ms", "latency p99", 0),
    ("daemon", "CPU % of a core", "daemon CPU under load", 0),
    ("daemon", "peak RSS MB", "daemon peak RSS", 0),
    ("daemon", "idle CPU s", "idle daemon CPU", 0),
    ("daemon", "start → all streaming s", "daemon start → every strap streaming", 0),
    ("class", "link frames", "link frames received", 0),
    ("class", "broadcasts", "broadcasts received", 0),
    ("class", "link p50 ms", "latency link frame → client", 0),
    ("class", "link p99 ms", "latency link frame → client", 1),
    ("class", "broadcast p50 ms", "latency broadcast → client", 0),
    ("class", "broadcast p99 ms", "latency broadcast → client", 1),
    ("class", "CPU % of a core", "daemon CPU under load", 0),
    ("class", "peak RSS MB", "daemon peak RSS", 0),
    ("hub", "frames per client per s", "frames received by", 2),
    ("hub", "p50 ms", "latency strap frame → hub client", 0),
    ("hub", "p99 ms", "latency strap frame → hub client", 1),
    ("hub", "hub CPU % of a core", "hub CPU under load", 0),
    ("hub", "hub peak RSS MB", "hub peak RSS", 0),
    ("hub", "mosquitto CPU %", "mosquitto CPU under load", 0),
]

NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")


def rows(path):
    """The table's rows as (label, value) pairs."""
    found = []
    with open(path, encoding="utf-8") as table:
        for line in table:
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) == 2 and cells[0] not in ("measurement", "---"):
                found.append((cells[0], cells[1]))
    return found


def figure(path, label, index):
    """The index-th number of the first row whose label starts with `label` (None: none)."""
    if not os.path.exists(path):
        return None
    for row_label, value in rows(path):
        if row_label.startswith(label):
            numbers = NUMBER.findall(value)
            if len(numbers) > index:
                return float(numbers[index].replace(",", ""))
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    arguments = parser.parse_args()
    runs = sorted({int(name.rsplit("-", 1)[1].split(".")[0]) for name in os.listdir(arguments.folder)
                   if name.endswith(".md")})
    print("| benchmark | figure | old %s (runs) | new %s (runs) | old median | new median | new / old |" % (
        arguments.old, arguments.new))
    print("|---|---|---|---|---|---|---|")
    for benchmark, name, label, index in FIGURES:
        values = {}
        for build in ("old", "new"):
            values[build] = [figure(os.path.join(arguments.folder, "%s-%s-%d.md" % (benchmark, build, run)),
                                    label, index) for run in runs]
        present = {build: [value for value in values[build] if value is not None] for build in values}
        if not present["old"] and not present["new"]:
            continue
        medians = {build: statistics.median(present[build]) if present[build] else None for build in present}
        ratio = ("%.2f" % (medians["new"] / medians["old"])
                 if medians["old"] and medians["new"] is not None else "–")

        def shown(value):
            return "–" if value is None else ("%g" % value)

        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            benchmark, name, ", ".join(shown(value) for value in values["old"]),
            ", ".join(shown(value) for value in values["new"]), shown(medians["old"]), shown(medians["new"]), ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
