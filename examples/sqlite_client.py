#!/usr/bin/env python3
"""An `isolde run exec` client for SQLite: the template for any database.

Usage: isolde run exec -- python3 examples/sqlite_client.py DB_FILE

isolde starts one copy per worker and writes one transaction per line:
    {"value": [["append", 3, 7], ["r", 4, null]]}
and reads one line back:
    {"type": "ok", "value": [["append", 3, 7], ["r", 4, [1, 7]]]}
or {"type": "fail", "error": "..."} (certainly not committed) or
{"type": "info", "error": "..."} (unknown). Lists are stored as
comma-separated text, so an append is one atomic upsert.
"""
import json
import os
import sqlite3
import sys

TABLE = os.environ.get("ISOLDE_TABLE", "isolde_append")  # unique per run
REGISTER = os.environ.get("ISOLDE_WORKLOAD") == "rw-register"
BUSY = ("locked", "busy")  # lock contention: SQLite did not commit


def run(db, txn):
    db.execute("BEGIN IMMEDIATE")
    out = []
    for f, k, v in txn:
        if f == "r":
            row = db.execute(f"SELECT v FROM {TABLE} WHERE k = ?", (k,)).fetchone()
            if row is None:
                v = None
            elif REGISTER:
                v = int(row[0])
            else:
                v = [int(x) for x in row[0].split(",")]
        elif f == "append":
            db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?) ON CONFLICT (k) "
                       "DO UPDATE SET v = v || ',' || excluded.v", (k, str(v)))
        else:  # "w"
            db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?) ON CONFLICT (k) "
                       "DO UPDATE SET v = excluded.v", (k, v))
        out.append([f, k, v])
    db.execute("COMMIT")
    return out


def main():
    db = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (k INTEGER PRIMARY KEY, v NOT NULL)")
    for line in sys.stdin:
        txn = json.loads(line)["value"]
        try:
            reply = {"type": "ok", "value": run(db, txn)}
        except sqlite3.Error as e:
            definite = isinstance(e, sqlite3.IntegrityError) or any(b in str(e) for b in BUSY)
            try:
                if db.in_transaction:
                    db.execute("ROLLBACK")
            except sqlite3.Error:
                definite = False
            reply = {"type": "fail" if definite else "info", "error": str(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
