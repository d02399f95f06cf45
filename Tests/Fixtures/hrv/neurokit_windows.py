"""NeuroKit2's DFA alpha1 per 2-minute window, every 5 s, with window membership decided in
whole milliseconds (the independent check of hrbridge's window edges).

usage: neurokit_windows.py SERIES.json  ->  one JSON object on stdout

SERIES.json is {"series": [[rr_ms, ...], ...]} with whole-millisecond intervals. A beat ends at
the integer sum of the intervals up to it; the window ending at E holds the beats ending in
(E - 120000, E]. Windows end at 120000, 125000, ... up to the last beat. Each window's intervals
are corrected with signal_fixpeaks(method="kubios", iterative=True) and alpha1 is fractal_dfa's
alpha over box sizes 4-16 (half-overlapping boxes), or null under 100 corrected beats.
"""
import json
import sys
import warnings

import numpy as np
import neurokit2 as nk

warnings.simplefilter("ignore")

LENGTH = 120000
STEP = 5000


def window(rr):
    peaks = np.concatenate([[0], np.cumsum(rr)]).astype(float)
    _, clean = nk.signal_fixpeaks(peaks, sampling_rate=1000, iterative=True, method="kubios")
    corrected = np.diff(np.asarray(clean, dtype=float))
    alpha = None
    if len(corrected) >= 100:
        value, _ = nk.fractal_dfa(corrected, scale=np.arange(4, 17), overlap=True)
        alpha = float(value)
    return len(corrected), alpha


def analyse(rr):
    rr = [int(value) for value in rr]
    ends = np.cumsum(rr)
    result = []
    end = LENGTH
    while end <= ends[-1]:
        inside = [rr[i] for i in range(len(rr)) if end - LENGTH < ends[i] <= end]
        beats, alpha = window(inside)
        result.append({"end": end, "raw": len(inside), "beats": beats, "alpha1": alpha})
        end += STEP
    return result


def main():
    series = json.load(open(sys.argv[1]))["series"]
    print(json.dumps({"version": nk.__version__, "windows": [analyse(rr) for rr in series]}))


if __name__ == "__main__":
    main()
