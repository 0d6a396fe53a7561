#!/usr/bin/env bash
# Duplicate-value list-append checking on histories recorded by the runner
# (`isolde run`), with the workload parameters of Cai et al. (SCCP 2026),
# Appendix C, Fig. 3. Records each history once (cached), then times
# `isolde check -m list-append -c LEVEL --solver-timeout 60000 FILE` at each
# level and prints one Markdown row per history and level (see BENCHMARKS.md,
# "Duplicate values: histories recorded by the runner").
#
#   bench/duplicates_runs.sh                  # Fig. 3 left and right, every database, every level
#   bench/duplicates_runs.sh left --quick     # one size per figure (left 1,000 txns; right 100% dup, 2,000 txns)
#   DBS="sim-ser pg-ser" bench/duplicates_runs.sh right
#   MAXW=256 bench/duplicates_runs.sh left    # the runner's default key retirement instead
#
# Figures. left: 20 clients, 20 micro-ops per txn, 5,000 keys, 50% reads,
# half the keys duplicated, values Zipf theta=0.5 over 100, 1,000..5,000 txns.
# right: 100 clients, 10,000 txns, 8 micro-ops, 5,000 keys, 50% reads, values
# Zipf theta=1.5 over 100, duplicated-key share 0, 25, 50, 75, 100%.
# Key access is Zipf theta=0.8 (the paper says "Zipfian" without a theta; the
# generator benchmark bench/duplicates.sh uses 0.8 too).
# The paper keeps a fixed set of keys; the runner retires a key after a
# random write budget (1 + a Zipf draw below --max-writes-per-key, default
# 256). MAXW (default 4294967295, the largest) keeps most keys for the whole
# run: left 5,000 on sim touches 5,406 keys, against 7,289 with 256.
#
# Databases (DBS, space-separated; default all five):
#   sim-ser  isolde run sim -i serializable           (two-phase locking; stale read-only snapshots)
#   sim-si   isolde run sim -i snapshot-isolation
#   sim-lu   isolde run sim --bug lost-update
#   pg-ser   isolde run postgres -i serializable      (skipped when PG_URL does not answer)
#   pg-rr    isolde run postgres -i repeatable-read   (PostgreSQL's snapshot isolation)
#
# Environment: DBS; LEFT_SIZES (default "1000 2000 3000 4000 5000");
# RIGHT_SHARES (default "0 0.25 0.5 0.75 1"); LEVELS (default "serializable
# strict-serializable snapshot-isolation"); SEED (1); MAXW; KEY_THETA (0.8);
# SOLVER_TIMEOUT (ms, 60000); RUNS (checks per history and level, the fastest
# is shown; 1); PG_URL (postgres://postgres@127.0.0.1:5432/test); BIN (isolde
# binary; default target/release/isolde, built first); SLOW_DIR (copy every
# history whose check takes over 2 s or ends unknown there).
# Histories are cached in bench/data/duplicates_runs/ (gitignored): delete a
# file to record it again. "txns" counts the runner's outcomes (the runner
# adds one final read of every key); "check ms" is the wall time of the whole
# `isolde check` process (reading included, fastest of RUNS), "peak MB" its
# maximum RSS. A verdict the database should not get is printed in bold with
# the expected one; the histories over 2 s or unknown are listed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

DBS=${DBS:-"sim-ser sim-si sim-lu pg-ser pg-rr"}
LEVELS=${LEVELS:-"serializable strict-serializable snapshot-isolation"}
SEED=${SEED:-1}
MAXW=${MAXW:-4294967295}
KEY_THETA=${KEY_THETA:-0.8}
SOLVER_TIMEOUT=${SOLVER_TIMEOUT:-60000}
RUNS=${RUNS:-1}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/test}
SLOW_DIR=${SLOW_DIR:-}
DATA=bench/data/duplicates_runs

which=all
quick=0
for a in "$@"; do
    case $a in
    left | right | all) which=$a ;;
    --quick) quick=1 ;;
    *)
        echo "usage: $0 [left|right|all] [--quick]" >&2
        exit 2
        ;;
    esac
done

if [ -z "${BIN:-}" ]; then
    if ! log=$(cargo build --release --bin isolde 2>&1); then
        echo "$log" >&2
        exit 1
    fi
    BIN=target/release/isolde
    built="built from the $(git rev-parse --short HEAD 2>/dev/null || echo '?') tree"
else
    built="given"
fi
mkdir -p "$DATA"

# Is PostgreSQL there? One one-transaction run answers for URL, auth and database.
pg_ok=0
case " $DBS " in
*" pg-"*)
    if "$BIN" run postgres --url "$PG_URL" -n 1 -p 1 --seed 1 --no-check -o "$DATA/.probe.jsonl" >/dev/null 2>&1; then
        pg_ok=1
    else
        echo "PostgreSQL does not answer at $PG_URL: skipping the pg-ser and pg-rr rows" >&2
    fi
    rm -f "$DATA/.probe.jsonl"
    ;;
esac

# runner_args DB → the `isolde run` target and isolation flags of DB
runner_args() {
    case $1 in
    sim-ser) echo "sim -i serializable" ;;
    sim-si) echo "sim -i snapshot-isolation" ;;
    sim-lu) echo "sim --bug lost-update" ;;
    pg-ser) echo "postgres --url $PG_URL -i serializable" ;;
    pg-rr) echo "postgres --url $PG_URL -i repeatable-read" ;;
    *)
        echo "unknown database $1" >&2
        exit 2
        ;;
    esac
}

# record NAME DB ARGS... → path of the cached history (empty when skipped or failed)
record() {
    local name=$1 db=$2 f
    shift 2
    local suffix=""
    [ "$MAXW" = 4294967295 ] || suffix="-maxw$MAXW"
    [ "$KEY_THETA" = 0.8 ] || suffix="$suffix-keys$KEY_THETA"
    f="$DATA/$name-$db-seed$SEED$suffix.jsonl"
    if [ ! -s "$f" ]; then
        # shellcheck disable=SC2046 # runner_args is a word list on purpose
        if ! "$BIN" run $(runner_args "$db") --no-check -o "$f.tmp" --seed "$SEED" \
            --key-count 5000 --read-ratio 0.5 --key-dist "zipf:$KEY_THETA" \
            --max-writes-per-key "$MAXW" --value-domain 100 "$@" >"$DATA/.run.log" 2>&1; then
            echo "$name $db: the run failed:" >&2
            cat "$DATA/.run.log" >&2
            rm -f "$f.tmp"
            return 0
        fi
        mv "$f.tmp" "$f"
        echo "recorded $f: $(tail -1 "$DATA/.run.log")" >&2
    fi
    echo "$f"
}

# expected DB LEVEL → the verdict this database should get, or "" when either is fine
expected() {
    case $1:$2 in
    sim-ser:strict-serializable) echo "" ;; # read-only txns may read a stale snapshot
    sim-ser:* | pg-ser:*) echo true ;;
    sim-si:snapshot-isolation | pg-rr:snapshot-isolation) echo true ;;
    sim-si:* | pg-rr:*) echo "" ;; # write skew is likely, not certain
    sim-lu:*) echo false ;;
    esac
}

slow=()
# rows LABEL DB FILE: one row per level
rows() {
    local label=$1 db=$2 f=$3 ok fail info level t0 t1 ms mb verdict want cell
    ok=$(grep -c '"type":"ok"' "$f" || true)
    fail=$(grep -c '"type":"fail"' "$f" || true)
    info=$(grep -c '"type":"info"' "$f" || true)
    for level in $LEVELS; do
        ms=""
        for _ in $(seq "$RUNS"); do
            t0=$(date +%s%N)
            /usr/bin/time -o "$DATA/.time" -f '%M' "$BIN" check -m list-append -c "$level" \
                --solver-timeout "$SOLVER_TIMEOUT" "$f" >"$DATA/.stdout" 2>"$DATA/.stderr" || true
            t1=$(date +%s%N)
            if [ -z "$ms" ] || [ $(((t1 - t0) / 1000000)) -lt "$ms" ]; then
                ms=$(((t1 - t0) / 1000000))
                mb=$(tail -1 "$DATA/.time" | awk '{printf "%.0f", $1/1024}')
            fi
        done
        verdict=$(cut -f2 "$DATA/.stdout" | head -1)
        [ -n "$verdict" ] || verdict="error: $(head -c 200 "$DATA/.stderr")"
        want=$(expected "$db" "$level")
        cell=$verdict
        if [ -n "$want" ] && [ "$want" != "$verdict" ]; then
            cell="**$verdict** (expected $want)"
        fi
        printf '| %s | %s | %s / %s / %s | %s | %s | %s | %s |\n' \
            "$label" "$db" "$ok" "$fail" "$info" "$level" "$cell" "$ms" "$mb"
        if [ "$ms" -gt 2000 ] || [ "$verdict" = unknown ]; then
            slow+=("$f $level $verdict ${ms} ms")
            if [ -n "$SLOW_DIR" ]; then
                mkdir -p "$SLOW_DIR"
                cp "$f" "$SLOW_DIR/"
            fi
        fi
    done
}

echo "$BIN ($built) on $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; best of $RUNS; seed $SEED; --max-writes-per-key $MAXW; keys Zipf $KEY_THETA; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| workload | database | txns ok / fail / info | level | valid? | check ms | peak MB |"
echo "|---|---|---|---|---|---|---|"
for db in $DBS; do
    case $db in pg-*) [ "$pg_ok" = 1 ] || continue ;; esac
    if [ "$which" = left ] || [ "$which" = all ]; then
        sizes=${LEFT_SIZES:-"1000 2000 3000 4000 5000"}
        [ "$quick" = 0 ] || sizes=1000
        for n in $sizes; do
            f=$(record "left-$n" "$db" -p 20 -n "$n" --min-txn-length 20 --max-txn-length 20 \
                --duplicates 0.5 --value-dist zipf:0.5)
            [ -z "$f" ] || rows "left, $n txns" "$db" "$f"
        done
    fi
    if [ "$which" = right ] || [ "$which" = all ]; then
        shares=${RIGHT_SHARES:-"0 0.25 0.5 0.75 1"}
        n=10000
        if [ "$quick" = 1 ]; then
            shares=1
            n=2000
        fi
        for d in $shares; do
            f=$(record "right-$n-dup$d" "$db" -p 100 -n "$n" --min-txn-length 8 --max-txn-length 8 \
                --duplicates "$d" --value-dist zipf:1.5)
            pct=$(awk "BEGIN{printf \"%.0f\", $d*100}")
            [ -z "$f" ] || rows "right, dup $pct%, $n txns" "$db" "$f"
        done
    fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ ${#slow[@]} -gt 0 ]; then
    echo "over 2 s or unknown:" >&2
    printf '  %s\n' "${slow[@]}" >&2
fi
rm -f "$DATA/.stdout" "$DATA/.stderr" "$DATA/.time" "$DATA/.run.log"
