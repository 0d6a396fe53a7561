#!/usr/bin/env bash
# Duplicate-value list-append checking with the workload parameters of Cai et
# al. (SCCP 2026), Appendix C, on histories from a simulated serializable
# database and two broken ones (snapshot isolation, lost update). Prints one
# Markdown row per history and level (see BENCHMARKS.md, "Duplicate values").
#
#   bench/duplicates.sh                 # Fig. 3 left and right, all levels
#   bench/duplicates.sh left --quick    # one size per figure
#   bench/duplicates.sh right --level serializable --save /tmp/dup   # keep the EDN
#   bench/duplicates.sh --file /tmp/dup/*.edn   # check saved histories again
#   bench/duplicates.sh right --exact   # the exact solver alone (no replays, no windows)
#
# Arguments go to the benchmark binary: left|right|all, --quick,
# --level NAME (repeatable), --save DIR, --file PATH..., --time-ms N
# (default 60000), --exact.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! log=$(cargo bench --bench duplicates --no-run 2>&1); then
    echo "$log" >&2
    exit 1
fi
exe=$(printf '%s\n' "$log" | sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1)
exec "$exe" --bench "$@"
