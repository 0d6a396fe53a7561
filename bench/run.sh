#!/usr/bin/env bash
# Times `isolde check -c MODELS FILE` (whole run, parse included)
# on generated list-append histories, best of N runs, and prints a table.
#
#   bench/run.sh                      # 10k, 100k, 1M txns x valid, g2, lost-update, mixed
#   SIZES="100000" KINDS="valid" RUNS=5 bench/run.sh
#
# Environment: SIZES, KINDS (space-separated), RUNS (default 3), SEED (1),
# MODELS (-c, default strict-serializable), FLAGS (more check flags, e.g.
# --inference-only),
# TIMEOUT per run in seconds (120), EXTRA=0 skips the gzip/zstd/JSON rows,
# BIN=path times another isolde binary (e.g. an older build) on the same data,
# ISOLDE_THREADS=1 keeps isolde on one thread.
# Histories are cached in bench/data/ (gitignored): delete it to regenerate.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"10000 100000 1000000"}
KINDS=${KINDS:-"valid g2 lost-update mixed"}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
TIMEOUT=${TIMEOUT:-120}
MODELS=${MODELS:-strict-serializable}
FLAGS=${FLAGS:-}
EXTRA=${EXTRA:-1}
DATA=bench/data
BIN=${BIN:-target/release/isolde}
GEN=target/release/examples/gen_history

if ! log=$(cargo build --release --bin isolde --example gen_history 2>&1); then
    echo "$log" >&2
    exit 1
fi
mkdir -p "$DATA"

# gen KIND TXNS FORMAT → path of the cached history
gen() {
    local f="$DATA/$1-$2.$3"
    if [ ! -s "$f" ]; then
        "$GEN" --txns "$2" --kind "$1" --format "$3" --seed "$SEED" --out "$f.tmp"
        mv "$f.tmp" "$f"
    fi
    echo "$f"
}

# measure FILE → "seconds cpu-seconds KB verdict" of the fastest of RUNS
# runs (wall clock; CPU = user + system, all threads).
measure() {
    local file=$1 best="" best_cpu="" best_kb="" verdict="" out
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$DATA/.time" -f '%e %U %S %M' timeout "$TIMEOUT" "$BIN" check -c "$MODELS" $FLAGS "$file" \
            >"$DATA/.stdout" 2>/dev/null || true
        out=$(tail -1 "$DATA/.time")
        verdict=$(cut -f2 "$DATA/.stdout" 2>/dev/null || true)
        [ -n "$verdict" ] || verdict="timeout/error"
        set -- $out
        if [ -z "$best" ] || awk "BEGIN{exit !($1 < $best)}"; then
            best=$1; best_cpu=$(awk "BEGIN{printf \"%.2f\", $2 + $3}"); best_kb=$4
        fi
    done
    echo "$best $best_cpu $best_kb $verdict"
}

row() { # LABEL FILE
    local size mb r
    size=$(stat -c %s "$2")
    mb=$(awk "BEGIN{printf \"%.1f\", $size/1e6}")
    r=$(measure "$2")
    set -- "$1" "$mb" $r
    printf '| %-26s | %8s | %8s | %8s | %9s | %-8s |\n' "$1" "$2" "$3" "$4" "$(awk "BEGIN{printf \"%.0f\", $5/1024}")" "$6"
}

echo "$BIN -c $MODELS $FLAGS ($(git rev-parse --short HEAD 2>/dev/null || echo '?') tree) on $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; best of $RUNS; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-26s | %8s | %8s | %8s | %9s | %-8s |\n' "history (txns, kind)" "MB" "time s" "CPU s" "peak MB" "valid?"
printf '|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..28})" "----------" "----------" "----------" "-----------" "----------"
for n in $SIZES; do
    for k in $KINDS; do
        row "$n $k" "$(gen "$k" "$n" edn)"
    done
done
if [ "$EXTRA" = 1 ]; then
    f=$(gen valid 100000 edn)
    [ -s "$f.gz" ] || gzip -6 -c "$f" >"$f.gz"
    row "100000 valid (gzip)" "$f.gz"
    if command -v zstd >/dev/null; then
        [ -s "$f.zst" ] || zstd -q -3 -c "$f" >"$f.zst"
        row "100000 valid (zstd)" "$f.zst"
    fi
    f=$(gen g2 100000 edn)
    [ -s "$f.gz" ] || gzip -6 -c "$f" >"$f.gz"
    row "100000 g2 (gzip)" "$f.gz"
    row "100000 valid (JSON lines)" "$(gen valid 100000 json)"
fi
rm -f "$DATA/.stdout" "$DATA/.time"
