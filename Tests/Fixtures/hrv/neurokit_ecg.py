"""Synthetic ECG at an H10's 130 Hz and NeuroKit2's R peaks in it, the independent detector
hrbridge's R-peak detector is checked against.

usage: neurokit_ecg.py OUT.json

For each case (heart rate, noise, baseline wander) OUT.json holds the signal in µV (ECGSYN through
ecg_simulate, mV scaled by 1000) and the R peaks (sample indices) nk.ecg_peaks finds in the signal
ecg_clean prepared, both with NeuroKit2's default "neurokit" method.
"""
import json
import sys
import warnings

import numpy as np
import neurokit2 as nk

warnings.simplefilter("ignore")
RATE = 130
CASES = [
    {"name": "rest, 60 bpm", "heart_rate": 60, "noise": 0.01, "seed": 1},
    {"name": "moderate, 120 bpm, noisy", "heart_rate": 120, "noise": 0.05, "seed": 2},
    {"name": "hard, 170 bpm", "heart_rate": 170, "noise": 0.02, "seed": 3},
    {"name": "breathing baseline, 80 bpm", "heart_rate": 80, "noise": 0.02, "seed": 4, "wander": 0.3},
]


def main():
    results = []
    for case in CASES:
        signal = nk.ecg_simulate(duration=120, sampling_rate=RATE, heart_rate=case["heart_rate"],
                                 noise=case["noise"], random_state=case["seed"])
        if case.get("wander"):
            t = np.arange(len(signal)) / RATE
            signal = signal + case["wander"] * np.sin(2 * np.pi * 0.25 * t)
        cleaned = nk.ecg_clean(signal, sampling_rate=RATE, method="neurokit")
        _, info = nk.ecg_peaks(cleaned, sampling_rate=RATE, method="neurokit")
        results.append({
            "name": case["name"],
            "signal": [round(float(v) * 1000, 1) for v in signal],
            "peaks": [int(i) for i in info["ECG_R_Peaks"]],
        })
    with open(sys.argv[1], "w") as out:
        json.dump({"rate": RATE, "cases": results}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
