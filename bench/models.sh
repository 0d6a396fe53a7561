#!/usr/bin/env bash
# Times `isolde check --model M FILE` (whole run, parse included) with
# /usr/bin/time on generated 1M-op histories of elle-cli's non-transactional
# models (examples/gen_models.rs), best of N runs, with peak memory.
#
#   bench/models.sh
#   OPS=100000 MODELS="counter bank" RUNS=5 bench/models.sh
#
# Environment: OPS (1000000), MODELS (space-separated), RUNS (3), SEED (1),
# READ_EVERY (set-full: one read per that many ops on average, 20000),
# BIN=path times another isolde binary. Histories are cached in
# bench/data/ (gitignored): delete it to regenerate.
set -euo pipefail
cd "$(dirname "$0")/.."

OPS=${OPS:-1000000}
MODELS=${MODELS:-"counter bank set set-full long-fork"}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
READ_EVERY=${READ_EVERY:-20000}
DATA=bench/data
BIN=${BIN:-target/release/isolde}
GEN=target/release/examples/gen_models

if ! log=$(cargo build --release --bin isolde --example gen_models 2>&1); then
    echo "$log" >&2
    exit 1
fi
mkdir -p "$DATA"

printf "%-10s %9s %10s %9s %9s %s\n" model ops bytes "best s" "peak MB" verdict
for m in $MODELS; do
    f="$DATA/model-$m-$OPS-$SEED-$READ_EVERY.edn"
    if [ ! -s "$f" ]; then
        "$GEN" --model "$m" --ops "$OPS" --seed "$SEED" --read-every "$READ_EVERY" > "$f.tmp"
        mv "$f.tmp" "$f"
    fi
    flags=()
    [ "$m" = long-fork ] && flags=(--group-size 3)
    best="" peak="" verdict=""
    for _ in $(seq "$RUNS"); do
        out=$( { /usr/bin/time -f "%e %M" "$BIN" check --model "$m" "${flags[@]}" "$f" > "$DATA/.out"; } 2>&1 || true)
        read -r secs kb <<< "$(tail -n1 <<< "$out")"
        verdict=$(cut -f2 "$DATA/.out")
        if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; peak=$((kb / 1024)); fi
    done
    printf "%-10s %9s %10s %9s %9s %s\n" "$m" "$(wc -l < "$f")" "$(stat -c %s "$f")" "$best" "$peak" "$verdict"
done
