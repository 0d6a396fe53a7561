//! Lost update as Elle counts it: per committed transaction, the first read
//! of a key that a write of that key follows; two transactions that read the
//! same state and both wrote the key lost one update. Runs the binary.

use std::process::Command;

/// Checks `edn` as list-append at serializable plus lost-update and returns
/// the JSON result.
fn check(name: &str, edn: &str) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("isolde-lost-update-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, edn).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args([
            "check",
            "-m",
            "list-append",
            "-c",
            "serializable",
            "-a",
            "lost-update",
            "-v",
        ])
        .arg(&f)
        .output()
        .expect("isolde runs");
    serde_json::from_slice(&o.stdout).expect("JSON result")
}

/// The op indices of each lost-update finding.
fn lost(v: &serde_json::Value) -> Vec<Vec<i64>> {
    v["anomalies"]["lost-update"]
        .as_array()
        .map(|xs| {
            xs.iter()
                .map(|x| {
                    let ts = x["txns"].as_array().unwrap();
                    ts.iter().map(|t| t["index"].as_i64().unwrap()).collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn two_transactions_that_read_the_same_state_and_both_append_lose_an_update() {
    let v = check(
        "same-read.edn",
        "{:type :invoke, :process 9, :f :txn, :value [[:append :x 0]]}\n\
         {:type :ok, :process 9, :f :txn, :value [[:append :x 0]]}\n\
         {:type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:append :x 1]]}\n\
         {:type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:append :x 2]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:r :x [0]] [:append :x 1]]}\n\
         {:type :ok, :process 1, :f :txn, :value [[:r :x [0]] [:append :x 2]]}\n\
         {:type :invoke, :process 2, :f :txn, :value [[:r :x nil]]}\n\
         {:type :ok, :process 2, :f :txn, :value [[:r :x [0 1 2]]]}\n",
    );
    assert_eq!(lost(&v), vec![vec![4, 5]], "{v}");
}

#[test]
fn an_own_append_before_the_first_read_does_not_hide_a_lost_update() {
    // T1 appends 1, reads [0 1], appends 2; T2 reads the same [0 1] and
    // appends 3. Both read [0 1] and wrote :x after it.
    let v = check(
        "own-append.edn",
        "{:type :invoke, :process 9, :f :txn, :value [[:append :x 0]]}\n\
         {:type :ok, :process 9, :f :txn, :value [[:append :x 0]]}\n\
         {:type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:r :x nil] [:append :x 2]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :x [0 1]] [:append :x 2]]}\n\
         {:type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:append :x 3]]}\n\
         {:type :ok, :process 1, :f :txn, :value [[:r :x [0 1]] [:append :x 3]]}\n\
         {:type :invoke, :process 2, :f :txn, :value [[:r :x nil]]}\n\
         {:type :ok, :process 2, :f :txn, :value [[:r :x [0 1 2 3]]]}\n",
    );
    assert_eq!(v["valid?"], serde_json::json!(false), "{v}");
    assert_eq!(lost(&v), vec![vec![3, 5]], "{v}");
}
