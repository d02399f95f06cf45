#!/usr/bin/env python3
"""The pmd scenario's synthetic ECG, made on the host (the guest's Bumble venv has no NeuroKit2):
NeuroKit2's ecg_simulate (ECGSYN) at the H10's 130 Hz, scaled from mV to whole µV.

usage: pmd_ecg.py OUT.json  ->  {"rate": 130, "microvolts": [...]}
"""
import json
import sys

import neurokit2 as nk

RATE = 130
# Longer than the scenario's runs together stream (the strap starts at sample 0 in each run).
SECONDS = 240

signal = nk.ecg_simulate(duration=SECONDS, sampling_rate=RATE, heart_rate=72, noise=0.02, random_state=41)
with open(sys.argv[1], "w") as file:
    json.dump({"rate": RATE, "microvolts": [int(round(value * 1000)) for value in signal]}, file)
