#!/usr/bin/env python3
"""An `isolde run exec` client for Jepsen's model workloads on SQLite.

Usage: isolde run exec -w bank -- python3 examples/sqlite_models_client.py DB_FILE
(also -w counter, set, set-full, long-fork).

bank, counter, set and set-full ops come one Jepsen op per line:
    {"f": "transfer", "value": {"from": 1, "to": 2, "amount": 3}}
    {"f": "add", "value": 4}
    {"f": "read", "value": null}
and are answered {"type": "ok"} (a read with its "value": bank's balances
as {"0": 97, ...}, the counter's number, the set's elements as a list), or
{"type": "fail", "error": "negative ..."} for a transfer that would overdraw
(unless ISOLDE_ALLOW_NEGATIVE=1). long-fork sends transactions of
["w", k, 1] and ["r", k, null], answered as rw-register's.
The table is (k, v): bank's accounts, the counter's row 0, a set's
elements, long-fork's keys. Run on an empty input (isolde's setup), the
program creates the table and, for bank, opens ISOLDE_ACCOUNTS accounts
with ISOLDE_TOTAL_AMOUNT in account 0.
"""
import json
import os
import sqlite3
import sys

TABLE = os.environ.get("ISOLDE_TABLE", "isolde_bank")  # unique per run
WORKLOAD = os.environ.get("ISOLDE_WORKLOAD", "bank")
ALLOW_NEGATIVE = os.environ.get("ISOLDE_ALLOW_NEGATIVE") == "1"
BUSY = ("locked", "busy")  # lock contention: SQLite did not commit


class Refused(Exception):
    pass


def get(db, k):
    row = db.execute(f"SELECT v FROM {TABLE} WHERE k = ?", (k,)).fetchone()
    return None if row is None else int(row[0])


def op(db, f, value):
    """One model op; returns the reply's value."""
    if f == "transfer":
        src, dst, amount = value["from"], value["to"], value["amount"]
        if get(db, src) - amount < 0 and not ALLOW_NEGATIVE:
            raise Refused(f"negative: account {src} would be overdrawn")
        db.execute(f"UPDATE {TABLE} SET v = v - ? WHERE k = ?", (amount, src))
        db.execute(f"UPDATE {TABLE} SET v = v + ? WHERE k = ?", (amount, dst))
        return value
    if f == "add" and WORKLOAD == "counter":
        db.execute(f"UPDATE {TABLE} SET v = v + ? WHERE k = 0", (value,))
        return value
    if f == "add":
        db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)", (value, value))
        return value
    # read
    if WORKLOAD == "bank":
        rows = db.execute(f"SELECT k, v FROM {TABLE}").fetchall()
        return {str(k): v for k, v in rows}
    if WORKLOAD == "counter":
        return get(db, 0)
    return [k for (k,) in db.execute(f"SELECT k FROM {TABLE}")]


def txn(db, mops):
    out = []
    for f, k, v in mops:
        if f == "w":
            db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)", (k, v))
        else:
            v = get(db, k)
        out.append([f, k, v])
    return out


def setup(db):
    db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
    if WORKLOAD == "bank":
        total = int(os.environ.get("ISOLDE_TOTAL_AMOUNT", "100"))
        for k in range(int(os.environ.get("ISOLDE_ACCOUNTS", "8"))):
            db.execute(f"INSERT OR IGNORE INTO {TABLE} (k, v) VALUES (?, ?)",
                       (k, total if k == 0 else 0))
    elif WORKLOAD == "counter":
        db.execute(f"INSERT OR IGNORE INTO {TABLE} (k, v) VALUES (0, 0)")


def main():
    db = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    if os.environ.get("ISOLDE_WORKER") == str(2**32 - 1):  # isolde's setup call
        setup(db)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            db.execute("BEGIN IMMEDIATE")
            if "f" in request:
                value = op(db, request["f"], request["value"])
            else:
                value = txn(db, request["value"])
            db.execute("COMMIT")
            reply = {"type": "ok", "value": value}
        except (sqlite3.Error, Refused) as e:
            definite = isinstance(e, (Refused, sqlite3.IntegrityError)) or any(
                b in str(e) for b in BUSY)
            try:
                if db.in_transaction:
                    db.execute("ROLLBACK")
            except sqlite3.Error:
                definite = False
            reply = {"type": "fail" if definite else "info", "error": str(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
