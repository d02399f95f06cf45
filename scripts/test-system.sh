#!/usr/bin/env bash
# The whole-system bed (Tests/SystemTests, docs/testing.md): builds the package from the release
# build, and a newer build of the same for the upgrade, then runs the suite (two QEMU boots).
# SYSTEM_TESTS=filter runs some of its tests only (the boots run in full either way).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .build/deb/system
installed=$(scripts/build-deb.sh --out .build/deb/system)
version=$(dpkg-deb --field "$installed" Version)
upgrade=$(scripts/build-deb.sh --version "$version.1" --out .build/deb/system)
export HRBRIDGE_SYSTEM_DEBS="$installed:$upgrade"
"${SWIFT:-swift}" test --skip-build --filter "SystemTests${SYSTEM_TESTS:+.*$SYSTEM_TESTS}"
