#!/usr/bin/env bash
# Fails when any Swift file is not formatted as .swift-format says (`make format` fixes it).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard '*.swift' | grep -v -E '^(\.build|Benchmarks/\.build)')
swift format lint --strict --parallel "${files[@]}"
echo "format check: ${#files[@]} files formatted"
