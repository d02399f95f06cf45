"""Pulls samples from one LSL stream with pylsl's inlet (liblsl from the pylsl wheel).

usage: pull.py SOURCE_ID COUNT
Prints {"event": "resolved", "name": …} once the stream is found, then one line
{"event": "samples", "values": [[…], …], "timestamps": […]} with the first COUNT samples.
"""
import json
import sys
import time

import pylsl


def main():
    source_id, count = sys.argv[1], int(sys.argv[2])
    streams = []
    deadline = time.monotonic() + 60
    while not streams and time.monotonic() < deadline:
        streams = pylsl.resolve_byprop("source_id", source_id, timeout=1.0)
    if not streams:
        print(json.dumps({"event": "error", "message": "not resolved"}), flush=True)
        return 1
    info = streams[0]
    print(json.dumps({"event": "resolved", "name": info.name(), "type": info.type()}), flush=True)
    inlet = pylsl.StreamInlet(info, max_buflen=60)
    values, timestamps = [], []
    while len(values) < count and time.monotonic() < deadline + 60:
        chunk, stamps = inlet.pull_chunk(timeout=1.0)
        values.extend(chunk)
        timestamps.extend(stamps)
    print(json.dumps({"event": "samples", "values": values[:count], "timestamps": timestamps[:count]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
