#!/usr/bin/env bash
# Runs list-append workloads against each database and isolation level on this
# machine, then checks every history against a ladder of models. Prints a
# Markdown table (the one in README.md). Needs PostgreSQL on 127.0.0.1:5432 and
# MariaDB on 127.0.0.1:3306; the sim rows need nothing.
#   bash scripts/ladder.sh [TXNS]        (default 4000 transactions, 10 clients, 6 keys)
#   WORKLOAD=rw-register bash scripts/ladder.sh
#   DUPLICATES=1 bash scripts/ladder.sh   (values repeat: --duplicates 1 --value-domain 4)
# A cell whose Elle-style answer (--inference-only) differs from the exact one
# shows both: "exact (inference: ...)". With repeated values there is no
# Elle-style answer to compare (inference needs unique values), and a cell
# shows the reason when it is unknown.
set -eu
cd "$(dirname "$0")/.."
n=${1:-4000}
cargo build --release -q
bin=target/release/isolde
dir=$(mktemp -d)
workload=${WORKLOAD:-list-append}
common=(-w "$workload" -n "$n" -p 10 --key-count 6 --seed 1 --no-check)
dups=${DUPLICATES:-}
[ -z "$dups" ] || common+=(--duplicates "$dups" --value-domain "${VALUE_DOMAIN:-4}")
cell() { # a check's JSON → "valid" or its anomaly types
  python3 -c '
import json, sys
d = json.load(sys.stdin)
v = d["valid?"]
if v is True:
    print("valid")
elif v == "unknown":
    print("unknown (" + (d.get("notes") or ["?"])[-1] + ")")
else:
    print(", ".join(d.get("anomaly-types", [])) or str(v))'
}
row() { # label, then the run arguments
  local label=$1; shift
  local f="$dir/$(echo "$label" | tr ' /' '__').jsonl"
  "$bin" run "$@" "${common[@]}" -o "$f" >/dev/null 2>&1 || true
  local cells=()
  for m in serializable snapshot-isolation read-committed; do
    local r e
    r=$("$bin" check -v -c "$m" "$f" | cell)
    if [ -z "$dups" ]; then
      e=$("$bin" check -v --inference-only -c "$m" "$f" | cell)
      [ "$r" = "$e" ] || r="$r (inference: $e)"
    fi
    cells+=("$r")
  done
  printf '| %s | %s | %s | %s |\n' "$label" "${cells[0]}" "${cells[1]}" "${cells[2]}"
}
echo "| database, level | serializable | snapshot-isolation | read-committed |"
echo "| --- | --- | --- | --- |"
row "sim serializable" sim -i serializable
row "sim snapshot-isolation" sim -i snapshot-isolation
row "sim read-committed" sim -i read-committed
pg=postgres://postgres@127.0.0.1:5432/test
row "PostgreSQL READ COMMITTED" postgres --url "$pg" -i read-committed
row "PostgreSQL REPEATABLE READ" postgres --url "$pg" -i repeatable-read
row "PostgreSQL SERIALIZABLE" postgres --url "$pg" -i serializable
my=mysql://root@127.0.0.1:3306/test
row "MariaDB READ COMMITTED" mysql --url "$my" -i read-committed
row "MariaDB REPEATABLE READ" mysql --url "$my" -i repeatable-read
row "MariaDB SERIALIZABLE" mysql --url "$my" -i serializable
rm -rf "$dir"
