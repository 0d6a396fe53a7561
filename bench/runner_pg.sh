#!/usr/bin/env bash
# Times `isolde run postgres` on the README's ladder workload (list-append,
# 10 clients, 6 hot keys, --seed 1, not checked) at each isolation level, with
# isolde's default short deadlock_timeout and with --server-defaults (the
# server's 1 s), under /usr/bin/time; prints a Markdown table of txn/s.
# Needs PostgreSQL on 127.0.0.1:5432 (superuser postgres, database test).
#
#   bench/runner_pg.sh            # 2500 transactions, best of 3 runs
#   TXNS=4000 RUNS=1 bench/runner_pg.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TXNS=${TXNS:-2500}
RUNS=${RUNS:-3}
URL=${URL:-postgres://postgres@127.0.0.1:5432/test}
BIN=${BIN:-target/release/isolde}
cargo build --release -q --bin isolde
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# rate LEVEL [EXTRA...] → "txn/s wall-seconds" of the fastest of RUNS runs
rate() {
    local level=$1 best="" t
    shift
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$dir/time" -f '%e' timeout 600 "$BIN" run postgres --url "$URL" -i "$level" \
            -n "$TXNS" -p 10 --key-count 6 --seed 1 --no-check -o "$dir/h.jsonl" "$@" >/dev/null 2>&1 || true
        t=$(tail -1 "$dir/time")
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    awk -v n="$TXNS" -v t="$best" 'BEGIN{printf "%.0f/s (%.1f s)", (n + 1) / t, t}'
}

echo "| level | default (short deadlock_timeout) | --server-defaults |"
echo "| --- | --- | --- |"
for level in read-committed repeatable-read serializable; do
    echo "| $level | $(rate "$level") | $(rate "$level" --server-defaults) |"
done
