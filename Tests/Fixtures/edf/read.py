"""Reads an EDF+ file with pyEDFlib (the EDFlib project's reader, PyPI) and prints one JSON object:
the header as pyEDFlib reports it, every signal's label, unit, sample frequency and physical
values, the annotations it returns, and each data record's onset (its first TAL, read from the
record bytes with the layout pyEDFlib reports).

usage: read.py FILE
"""
import json
import sys

import pyedflib


def main():
    path = sys.argv[1]
    reader = pyedflib.EdfReader(path)
    try:
        count = reader.signals_in_file
        result = {
            "filetype": reader.filetype,
            "start": reader.getStartdatetime().isoformat(),
            "records": reader.datarecords_in_file,
            "record_duration": reader.datarecord_duration,
            "signals": [
                {
                    "label": reader.getLabel(i), "unit": reader.getPhysicalDimension(i),
                    "frequency": reader.getSampleFrequency(i), "transducer": reader.getTransducer(i),
                    "values": [float(v) for v in reader.readSignal(i)],
                }
                for i in range(count)
            ],
            "annotations": [[float(o), float(d), t] for o, d, t in zip(*reader.readAnnotations())],
        }
        header_bytes = 256 * (count + 2)
        per_record = [int(reader.getNSamples()[i] // max(reader.datarecords_in_file, 1)) for i in range(count)]
    finally:
        reader.close()
    # Record onsets: the annotation signal follows the data signals in each record.
    with open(path, "rb") as file:
        raw = file.read()
    record_bytes = 2 * sum(per_record) + 120
    onsets = []
    for index in range(result["records"]):
        start = header_bytes + index * record_bytes + 2 * sum(per_record)
        tal = raw[start:start + 120].split(b"\x14")[0].decode("ascii")
        onsets.append(float(tal))
    result["onsets"] = onsets
    print(json.dumps(result))


if __name__ == "__main__":
    main()
