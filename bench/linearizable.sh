#!/usr/bin/env bash
# Times `isolde check --model cas-register FILE` (whole run, parse included)
# with /usr/bin/time on Knossos-style register histories from
# examples/gen_register.rs: 5 clients, reads/writes/CAS over 5 values, 1%
# crashed (:info) ops; each size once valid and once with one impossible
# read in the middle (--corrupt). Best of N runs, with peak memory.
#
#   bench/linearizable.sh
#   SIZES="10000 100000" CRASH=0 RUNS=5 bench/linearizable.sh
#
# Environment: SIZES (ops, "1000 10000 100000"), CRASH (crash rate, 0.01),
# RUNS (3), SEED (1), KEYS (0: one register; K: K independent registers,
# values [key value] as in Jepsen's etcd test), BIN=path times another
# isolde binary. Histories are cached in bench/data/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"1000 10000 100000"}
CRASH=${CRASH:-0.01}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
KEYS=${KEYS:-0}
DATA=bench/data
BIN=${BIN:-target/release/isolde}
GEN=target/release/examples/gen_register

if ! log=$(cargo build --release --bin isolde --example gen_register 2>&1); then
    echo "$log" >&2
    exit 1
fi
mkdir -p "$DATA"

printf "%-8s %9s %8s %9s %9s %s\n" kind ops lines "best s" "peak MB" verdict
for n in $SIZES; do
    for kind in valid corrupt; do
        f="$DATA/register-$kind-$n-$CRASH-$SEED.edn"
        [ "$KEYS" != 0 ] && f="$DATA/register-$kind-$n-$CRASH-$SEED-keys$KEYS.edn"
        if [ ! -s "$f" ]; then
            flags=(--ops "$n" --crash-rate "$CRASH" --seed "$SEED" --keys "$KEYS")
            [ "$kind" = corrupt ] && flags+=(--corrupt)
            "$GEN" "${flags[@]}" > "$f.tmp"
            mv "$f.tmp" "$f"
        fi
        best="" peak="" verdict=""
        for _ in $(seq "$RUNS"); do
            out=$( { /usr/bin/time -f "%e %M" "$BIN" check --model cas-register "$f" > "$DATA/.out"; } 2>&1 || true)
            read -r secs kb <<< "$(tail -n1 <<< "$out")"
            verdict=$(cut -f2 "$DATA/.out")
            if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; peak=$((kb / 1024)); fi
        done
        printf "%-8s %9s %8s %9s %9s %s\n" "$kind" "$n" "$(wc -l < "$f")" "$best" "$peak" "$verdict"
    done
done
