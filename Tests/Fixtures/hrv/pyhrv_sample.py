"""Prints the real NN-interval series pyhrv ships (60 minutes of a real recording, ms) as JSON.

usage: pyhrv_sample.py WHEEL  ->  {"source": ..., "series": [..]}

The wheel is pyhrv 0.5.0 from PyPI, downloaded without its dependencies by
scripts/setup-python.sh; only its data file is read.
"""
import io
import json
import sys
import zipfile

import numpy as np

NAME = "pyhrv/files/SampleNNISeriesLong.npy"

with zipfile.ZipFile(sys.argv[1]) as wheel:
    series = np.load(io.BytesIO(wheel.read(NAME)))
print(json.dumps({"source": "pyhrv 0.5.0 " + NAME, "series": [float(value) for value in series]}))
