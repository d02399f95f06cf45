#!/usr/bin/env bash
# Fails when the documentation has drifted: the module graph in docs/internals.md differs from
# Package.swift or its service graph from BridgeDaemon.services, the README outgrows 250 lines, or a relative link in README.md or docs/ points
# at a file that is not in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/module-graph.py --check
python3 scripts/service-graph.py --check
lines=$(wc -l < README.md)
if [ "$lines" -gt 250 ]; then
    echo "README.md has $lines lines (at most 250: the rest belongs in docs/)"
    exit 1
fi
python3 - <<'PY'
import os, re, sys
problems = []
for path in ["README.md"] + sorted("docs/" + name for name in os.listdir("docs") if name.endswith(".md")):
    text = open(path).read()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
        if not os.path.exists(resolved):
            problems.append("%s: link to %s, which is not in the repository" % (path, target))
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
PY
echo "docs check: README $lines lines, links resolve, module graph and service graph current"
