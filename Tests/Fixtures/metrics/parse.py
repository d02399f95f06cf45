#!/usr/bin/env python3
"""Parses Prometheus text exposition from a file (parse.py FILE) with the Prometheus project's own Python parser
(PyPI prometheus-client) and prints every sample as a JSON line: {"name", "labels", "value"}.
Exits 1 with the parser's error when the text is not valid exposition."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

try:
    for family in text_string_to_metric_families(open(sys.argv[1], encoding="utf-8").read()):
        for sample in family.samples:
            print(json.dumps({"name": sample.name, "labels": sample.labels, "value": sample.value,
                              "type": family.type}))
except Exception as error:  # the parser raises ValueError and others on malformed text
    print(f"invalid exposition: {error}", file=sys.stderr)
    sys.exit(1)
