#!/usr/bin/env python3
"""An `isolde run exec` client for Jepsen's model workloads on SQLite.

Usage: isolde run exec -w bank -- python3 examples/sqlite_models_client.py DB_FILE
(also -w counter, set, set-full, long-fork, comments, sequential,
cas-register, mutex).

bank, counter, set and set-full ops come one Jepsen op per line:
    {"f": "transfer", "value": {"from": 1, "to": 2, "amount": 3}}
    {"f": "add", "value": 4}
    {"f": "read", "value": null}
and are answered {"type": "ok"} (a read with its "value": bank's balances
as {"0": 97, ...}, the counter's number, the set's elements as a list), or
{"type": "fail", "error": "negative ..."} for a transfer that would overdraw
(unless ISOLDE_ALLOW_NEGATIVE=1). long-fork sends transactions of
["w", k, 1] and ["r", k, null], answered as rw-register's.
comments, sequential, cas-register and mutex ops come the same way:
    {"f": "write", "value": 7}          comments: insert id 7
    {"f": "read", "value": null}        comments: every id, as a list
    {"f": "write", "value": [3, 2]}     sequential: insert subkey 2 of key 3
    {"f": "read", "value": [3, null]}   sequential: key 3's subkeys' values,
                                        latest first, null where missing
    {"f": "read", "value": null}        cas-register: the value, or null
    {"f": "write", "value": 4}          cas-register
    {"f": "cas", "value": [4, 1]}       cas-register: fail if it is not 4
    {"f": "acquire", "value": null}     mutex: fail if the lock is held
    {"f": "release", "value": null}     mutex: fail if ISOLDE_WORKER does
                                        not hold it
The table is (k, v): bank's accounts, the counter's row 0, a set's
elements, long-fork's keys, comments' ids (v: the id's table, id mod
ISOLDE_KEY_COUNT), sequential's subkeys (row k * ISOLDE_KEY_COUNT + i),
the register's row 0, the lock's row 0 (its holder, or -1). Run on an
empty input (isolde's setup), the program creates the table and, for
bank, opens ISOLDE_ACCOUNTS accounts with ISOLDE_TOTAL_AMOUNT in account 0;
for mutex, the free lock.
"""
import json
import os
import sqlite3
import sys

TABLE = os.environ.get("ISOLDE_TABLE", "isolde_bank")  # unique per run
WORKLOAD = os.environ.get("ISOLDE_WORKLOAD", "bank")
ALLOW_NEGATIVE = os.environ.get("ISOLDE_ALLOW_NEGATIVE") == "1"
BUSY = ("locked", "busy")  # lock contention: SQLite did not commit
KEY_COUNT = int(os.environ.get("ISOLDE_KEY_COUNT", "10"))
WORKER = int(os.environ.get("ISOLDE_WORKER", "0"))
FREE = -1


class Refused(Exception):
    pass


def get(db, k):
    row = db.execute(f"SELECT v FROM {TABLE} WHERE k = ?", (k,)).fetchone()
    return None if row is None else int(row[0])


def put(db, k, v):
    db.execute(f"UPDATE {TABLE} SET v = ? WHERE k = ?", (v, k))


def op(db, f, value):
    """One model op; returns the reply's value."""
    if WORKLOAD == "comments":
        if f == "write":
            db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)", (value, value % KEY_COUNT))
            return value
        ids = []
        for table in range(KEY_COUNT):  # one statement per table
            ids += [k for (k,) in db.execute(f"SELECT k FROM {TABLE} WHERE v = ?", (table,))]
        return sorted(ids)
    if WORKLOAD == "sequential":
        k = value[0]
        if f == "write":
            row = k * KEY_COUNT + value[1]
            db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (?, ?)", (row, row))
            return value
        return [get(db, k * KEY_COUNT + i) for i in reversed(range(KEY_COUNT))]
    if WORKLOAD == "cas-register":
        current = get(db, 0)
        if f == "read":
            return current
        if f == "cas":
            if current != value[0]:
                raise Refused(f"cas: the register holds {current}")
            put(db, 0, value[1])
        elif current is None:
            db.execute(f"INSERT INTO {TABLE} (k, v) VALUES (0, ?)", (value,))
        else:
            put(db, 0, value)
        return value
    if WORKLOAD == "mutex":
        holder = get(db, 0)
        if f == "acquire":
            if holder != FREE:
                raise Refused(f"held: worker {holder} holds the lock")
            put(db, 0, WORKER)
        else:
            if holder != WORKER:
                raise Refused("not held")
            put(db, 0, FREE)
        return None
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
    elif WORKLOAD == "mutex":
        db.execute(f"INSERT OR IGNORE INTO {TABLE} (k, v) VALUES (0, ?)", (FREE,))


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
