"""NeuroKit2's figures for RR series, the independent implementation hrbridge's HRV is checked
against.

usage: neurokit_reference.py SERIES.json  ->  one JSON object on stdout

SERIES.json is {"series": [[rr_ms, ...], ...]}; for each series the answer holds the first-pass
artefacts of signal_fixpeaks(method="kubios", iterative=False) (beat indices by kind), the
corrected intervals of the iterative correction, hrv_time's MeanNN, SDNN, RMSSD and pNN50 of the
corrected beats, and fractal_dfa's alpha over box sizes 4-16 (half-overlapping boxes) of the
corrected intervals.
"""
import json
import sys
import warnings

import numpy as np
import neurokit2 as nk

warnings.simplefilter("ignore")


def analyse(rr):
    rr = np.asarray(rr, dtype=float)
    peaks = np.concatenate([[0.0], np.cumsum(rr)])
    first, _ = nk.signal_fixpeaks(peaks, sampling_rate=1000, iterative=False, method="kubios")
    _, clean = nk.signal_fixpeaks(peaks, sampling_rate=1000, iterative=True, method="kubios")
    corrected = np.diff(np.asarray(clean, dtype=float))
    time = nk.hrv_time(np.asarray(clean, dtype=int), sampling_rate=1000)
    alpha, _ = nk.fractal_dfa(corrected, scale=np.arange(4, 17), overlap=True)
    return {
        "artefacts": {kind: [int(i) for i in first[kind]] for kind in ("ectopic", "missed", "extra", "longshort")},
        "corrected": corrected.tolist(),
        "meanNN": float(time["HRV_MeanNN"].iloc[0]),
        "sdnn": float(time["HRV_SDNN"].iloc[0]),
        "rmssd": float(time["HRV_RMSSD"].iloc[0]),
        "pnn50": float(time["HRV_pNN50"].iloc[0]),
        "alpha1": float(alpha),
    }


def main():
    series = json.load(open(sys.argv[1]))["series"]
    print(json.dumps({"version": nk.__version__, "results": [analyse(rr) for rr in series]}))


if __name__ == "__main__":
    main()
