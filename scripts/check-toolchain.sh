#!/usr/bin/env bash
# Checks that a Swift 6.2+ toolchain is on PATH; Debian does not package one.
set -euo pipefail
if ! command -v swift >/dev/null 2>&1; then
    echo "hrbridge needs Swift 6.2 or newer: install it from swift.org (or with swiftly) and put it on PATH." >&2
    exit 1
fi
version=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9]*\.[0-9]*\).*/\1/p' | head -1)
major=${version%%.*}
minor=${version#*.}
if [ "${major:-0}" -lt 6 ] || { [ "${major:-0}" -eq 6 ] && [ "${minor:-0}" -lt 2 ]; }; then
    echo "hrbridge needs Swift 6.2 or newer (warning settings in Package.swift); found: $(swift --version 2>&1 | head -1)" >&2
    exit 1
fi
