#!/usr/bin/env bash
# Store write throughput, SQLite vs PostgreSQL, same machine, same run: StoreBenchmark ingests the
# same heart-rate samples into a new SQLite file and into a new database on Debian's PostgreSQL
# (a cluster made for this run in a temporary folder, on a Unix socket, stopped by PID), in
# batches of 10,000 (a backlog catching up) and of 500 (a hub's second of 60 straps at 4 Hz with RR).
# usage: Benchmarks/store-compare.sh [--days N] [--runs N]
set -euo pipefail
cd "$(dirname "$0")"
days=7
runs=3
while [ $# -gt 0 ]; do
    case "$1" in
    --days) days=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--days N] [--runs N]" >&2; exit 64 ;;
    esac
done
../scripts/ensure-system-packages.sh postgresql util-linux
swift build -c release --product StoreBenchmark >/dev/null
bin=.build/release/StoreBenchmark
bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
folder=$(mktemp -d /tmp/hrbridge-pg-bench-XXXXXX)
as_server=()
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$folder"
    as_server=(setpriv --reuid=postgres --regid=postgres --init-groups --)
fi
"${as_server[@]}" "$bindir/initdb" -D "$folder/data" -U hrbridge --auth=trust -E UTF8 --no-instructions >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_server[@]}" "$bindir/postgres" -D "$folder/data" -p "$port" -k "$folder" -c listen_addresses= \
    2>"$folder/server.log" &
server=$!
trap 'kill -INT $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$folder"' EXIT
until grep -q "ready to accept connections" "$folder/server.log"; do sleep 0.1; done
for run in $(seq 1 "$runs"); do
    for batch in 10000 500; do
        "$bindir/psql" -h "$folder" -p "$port" -U hrbridge -d postgres -qc "DROP DATABASE IF EXISTS bench" \
            -c "CREATE DATABASE bench" >/dev/null
        echo "run=$run $("$bin" --days "$days" --batch "$batch" --ingest-only)"
        echo "run=$run $("$bin" --days "$days" --batch "$batch" --ingest-only \
            --url "postgresql://hrbridge@/bench?host=$folder&port=$port")"
    done
done
