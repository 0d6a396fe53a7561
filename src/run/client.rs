//! The interface between the threaded driver and a real database: a
//! [`Target`] sets the database up and opens connections; a [`Client`] (one
//! per worker thread) runs transactions on its connection.

use super::{Key, ModelParams, Mop, ReadValue, Txn, Value, WorkloadKind, FREE};

/// How one transaction ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Committed; the micro-ops with what every read returned.
    Ok(Txn),
    /// Certainly not committed (the database said it rolled back).
    Fail(String),
    /// Unknown: it may or may not have committed. The driver drops this
    /// connection and continues under a new process id.
    Info(String),
}

/// Stops the transaction a [`Client`] is running, from another thread (the
/// driver calls it when the transaction overruns `--txn-timeout`). The
/// interrupted call should then return `Fail` if the transaction certainly
/// did not commit, else `Info`.
pub type Interrupter = Box<dyn FnOnce() + Send>;

/// A connection that runs transactions.
pub trait Client: Send {
    fn execute(&mut self, txn: &[Mop]) -> Completion;
    /// A way to interrupt `execute` from another thread, if the client has
    /// one; without it, the driver abandons a client that overruns.
    fn interrupter(&self) -> Option<Interrupter> {
        None
    }
}

/// A database under test.
pub trait Target: Send + Sync {
    /// A name for messages, e.g. `postgres serializable`.
    fn describe(&self) -> String;
    /// Creates the tables this run uses.
    fn setup(&self) -> anyhow::Result<()>;
    /// Opens a new connection for worker `worker`.
    fn connect(&self, worker: u32) -> anyhow::Result<Box<dyn Client>>;
    /// Drops what `setup` created (best effort).
    fn teardown(&self) -> anyhow::Result<()>;
    /// Settings isolde chose for this run, for the summary (after `setup`).
    fn notes(&self) -> Vec<String> {
        vec![]
    }
}

/// A database URL safe to print: the password, if any, replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.rsplit_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

/// The part of a fail message that names its cause, for the summary's
/// tally: the database's error code (`40001` of `40001: could not
/// serialize ...`), else the message's start.
pub fn fail_cause(msg: &str) -> String {
    let head = msg.split(':').next().unwrap_or(msg).trim();
    head.chars().take(40).collect()
}

/// Parses the comma-separated text a list-append table stores.
pub fn parse_list(text: &str) -> Result<Vec<i64>, String> {
    if text.is_empty() {
        return Ok(vec![]);
    }
    text.split(',')
        .map(|x| {
            x.parse::<i64>()
                .map_err(|_| format!("stored list {text:?} has a non-integer element {x:?}"))
        })
        .collect()
}

/// Turns a stored cell into a read result for the workload: `None` when the
/// row does not exist.
pub fn list_read(cell: Option<String>) -> Result<Option<ReadValue>, String> {
    match cell {
        None => Ok(None),
        Some(s) => parse_list(&s).map(|l| Some(ReadValue::List(l))),
    }
}

/// Table name for a run: `isolde_<workload>_<run id>`.
pub fn table_name(workload: WorkloadKind, run_id: &str) -> String {
    let w = match workload {
        WorkloadKind::ListAppend => "append",
        WorkloadKind::RwRegister => "register",
        WorkloadKind::Bank => "bank",
        WorkloadKind::Counter => "counter",
        WorkloadKind::Set => "set",
        WorkloadKind::SetFull => "setfull",
        WorkloadKind::LongFork => "longfork",
        WorkloadKind::Comments => "comments",
        WorkloadKind::Sequential => "sequential",
        WorkloadKind::CasRegister => "casregister",
        WorkloadKind::Mutex => "mutex",
    };
    format!("isolde_{w}_{run_id}")
}

/// The statements a SQL client offers the model workloads, on a table
/// `(k BIGINT PRIMARY KEY, v BIGINT NOT NULL)` inside the open transaction:
/// bank's accounts `(id, balance)`, the counter's one row `(0, value)`, a
/// set's elements `(element, element)`, long-fork's write-once keys,
/// comments' ids `(id, table)` (a table is the rows of one `v`),
/// sequential's subkeys `(row, row)`, the register's row 0 (absent until
/// written), the lock's row `(0, holder or FREE)`.
/// [`model_op`] runs a model op with them, the same way on every database.
pub trait KvTxn {
    type Error;
    /// `SELECT v FROM t WHERE k = ?`.
    fn get(&mut self, k: Key) -> Result<Option<Value>, Self::Error>;
    /// `SELECT k, v FROM t ORDER BY k`: one statement, so one snapshot even
    /// under read committed.
    fn scan(&mut self) -> Result<Vec<(Key, Value)>, Self::Error>;
    /// `UPDATE t SET v = v + ? WHERE k = ?`.
    fn add(&mut self, k: Key, delta: Value) -> Result<(), Self::Error>;
    /// `INSERT INTO t (k, v) VALUES (?, ?)`.
    fn insert(&mut self, k: Key, v: Value) -> Result<(), Self::Error>;
    /// `UPDATE t SET v = ? WHERE k = ?`.
    fn put(&mut self, k: Key, v: Value) -> Result<(), Self::Error>;
    /// `SELECT k FROM t WHERE v = ? ORDER BY k`: one comments table.
    fn keys_with(&mut self, v: Value) -> Result<Vec<Key>, Self::Error>;
    /// `SELECT v FROM t WHERE k = ? FOR UPDATE`, where the database has it
    /// (else `get`): a cas, acquire or release then queues on the row
    /// rather than failing on the write after a plain read.
    fn get_for_update(&mut self, k: Key) -> Result<Option<Value>, Self::Error> {
        self.get(k)
    }
}

/// Why a model op did not complete.
pub enum ModelFailure<E> {
    /// The database's error.
    Db(E),
    /// The client refused the op and rolled back (a transfer that would
    /// leave a negative balance): `fail`.
    Refused(String),
    /// A stored value the op cannot make sense of: `info`.
    Data(String),
}

impl<E> From<E> for ModelFailure<E> {
    fn from(e: E) -> Self {
        ModelFailure::Db(e)
    }
}

/// The rows a model workload's table starts with.
pub fn initial_rows(workload: WorkloadKind, params: &ModelParams) -> Vec<(Key, Value)> {
    match workload {
        WorkloadKind::Bank => params.initial_balances(),
        WorkloadKind::Counter => vec![(0, 0)],
        WorkloadKind::Mutex => vec![(0, FREE)],
        _ => vec![],
    }
}

/// Runs model op `mop` (or a long-fork micro-op) in the open transaction;
/// returns it completed (reads with what they read).
///
/// A transfer reads both balances, refuses (unless `allow_negative`) when
/// the source would go negative, then updates both by the amount, as
/// Jepsen's bank clients do (`UPDATE ... SET balance = balance - ?`), or
/// with `computed_writes` sets both to what it computed from its reads.
/// A comments read reads the tables one statement each, as Jepsen's reads
/// its tables; a sequential read reads the subkeys latest first, one
/// statement each. A cas, an acquire and a release read the row FOR UPDATE,
/// then write it or refuse (`fail`).
pub fn model_op<T: KvTxn>(
    t: &mut T,
    workload: WorkloadKind,
    mop: &Mop,
    params: &ModelParams,
) -> Result<Mop, ModelFailure<T::Error>> {
    match *mop {
        Mop::Transfer { from, to, amount } => {
            let missing = |k: Key| ModelFailure::Data(format!("account {k} has no row"));
            let b_from = t.get(from)?.ok_or_else(|| missing(from))?;
            let b_to = t.get(to)?.ok_or_else(|| missing(to))?;
            if b_from - amount < 0 && !params.allow_negative {
                return Err(ModelFailure::Refused(format!(
                    "negative: account {from} would hold {}",
                    b_from - amount
                )));
            }
            if params.computed_writes {
                t.put(from, b_from - amount)?;
                t.put(to, b_to + amount)?;
            } else {
                t.add(from, -amount)?;
                t.add(to, amount)?;
            }
            Ok(mop.clone())
        }
        Mop::ReadBalances(_) => Ok(Mop::ReadBalances(Some(t.scan()?))),
        Mop::Add(v) if workload == WorkloadKind::Counter => {
            t.add(0, v)?;
            Ok(mop.clone())
        }
        Mop::Add(v) => {
            // A set's element: a row of its own (elements are never negative).
            t.insert(v as Key, v)?;
            Ok(mop.clone())
        }
        Mop::ReadCounter(_) => match t.get(0)? {
            Some(v) => Ok(Mop::ReadCounter(Some(v))),
            None => Err(ModelFailure::Data("the counter's row is missing".into())),
        },
        Mop::ReadSet(_) => Ok(Mop::ReadSet(Some(
            t.scan()?.into_iter().map(|(k, _)| k as Value).collect(),
        ))),
        Mop::WriteId(id) => {
            t.insert(id as Key, id % params.key_count.max(1) as Value)?;
            Ok(mop.clone())
        }
        Mop::ReadIds(_) => {
            let mut ids = vec![];
            for table in 0..params.key_count.max(1) {
                ids.extend(t.keys_with(table as Value)?.into_iter().map(|k| k as Value));
            }
            ids.sort_unstable();
            Ok(Mop::ReadIds(Some(ids)))
        }
        Mop::SeqWrite(k, i) => {
            let row = params.subkey(k, i);
            t.insert(row, row as Value)?;
            Ok(mop.clone())
        }
        Mop::SeqRead(k, _) => {
            let mut values = Vec::with_capacity(params.key_count as usize);
            for i in (0..params.key_count).rev() {
                values.push(t.get(params.subkey(k, i))?);
            }
            Ok(Mop::SeqRead(k, Some(values)))
        }
        Mop::RegRead(_) => Ok(Mop::RegRead(t.get(0)?)),
        Mop::RegWrite(v) => {
            match t.get(0)? {
                Some(_) => t.put(0, v)?,
                None => t.insert(0, v)?,
            }
            Ok(mop.clone())
        }
        Mop::RegCas { old, new } => match t.get_for_update(0)? {
            Some(v) if v == old => {
                t.put(0, new)?;
                Ok(mop.clone())
            }
            v => Err(ModelFailure::Refused(format!(
                "cas: the register holds {}, not {old}",
                v.map_or("nothing".into(), |v| v.to_string())
            ))),
        },
        Mop::Acquire(owner) => match t.get_for_update(0)? {
            Some(FREE) => {
                t.put(0, owner as Value)?;
                Ok(mop.clone())
            }
            Some(holder) => Err(ModelFailure::Refused(format!(
                "held: worker {holder} holds the lock"
            ))),
            None => Err(ModelFailure::Data("the lock's row is missing".into())),
        },
        Mop::Release(owner) => match t.get_for_update(0)? {
            Some(holder) if holder == owner as Value => {
                t.put(0, FREE)?;
                Ok(mop.clone())
            }
            _ => Err(ModelFailure::Refused(format!(
                "not held: worker {owner} does not hold the lock"
            ))),
        },
        Mop::Write(k, v) => {
            t.insert(k, v)?;
            Ok(mop.clone())
        }
        Mop::Read(k, _) => Ok(Mop::Read(k, t.get(k)?.map(ReadValue::Int))),
        Mop::Append(..) => Err(ModelFailure::Data(
            "append is not an op of the model workloads".into(),
        )),
    }
}

/// Parses `NAME=VALUE` for `--session-var`. Names and values must be plain
/// words: MySQL's SET cannot bind a variable name, so they are spliced in.
pub fn parse_session_var(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("--session-var {s:?}: expected NAME=VALUE"))?;
    let word = |x: &str, dots: bool| {
        !x.is_empty()
            && x.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || (dots && (c == '.' || c == '-')))
    };
    if !word(name, false) || !word(value, true) {
        return Err(format!(
            "--session-var {s:?}: name and value must be letters, digits and _ (value also . and -)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// A target whose client this build left out (its Cargo feature is off).
/// `isolde run` keeps one command line in every build; choosing such a
/// target fails before anything runs, with a message naming the feature.
pub struct Unavailable {
    target: &'static str,
    feature: &'static str,
}

impl Unavailable {
    /// Stands in for `target` (e.g. `postgres`), built with `feature`.
    pub fn new(target: &'static str, feature: &'static str) -> Unavailable {
        Unavailable { target, feature }
    }

    /// As the real targets' method of that name (nothing to bound here).
    pub fn with_txn_timeout(self, _: std::time::Duration) -> Unavailable {
        self
    }

    /// As the real targets' method of that name.
    pub fn with_model(self, _: ModelParams) -> Unavailable {
        self
    }

    fn error(&self) -> anyhow::Error {
        anyhow::anyhow!(
            "isolde was built without {f}; rebuild with `cargo build --release --features {f}`",
            f = self.feature
        )
    }
}

impl Target for Unavailable {
    fn describe(&self) -> String {
        self.target.to_string()
    }

    fn setup(&self) -> anyhow::Result<()> {
        Err(self.error())
    }

    fn connect(&self, _worker: u32) -> anyhow::Result<Box<dyn Client>> {
        Err(self.error())
    }

    fn teardown(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unavailable_target_names_its_feature_and_never_connects() {
        let t = Unavailable::new("postgres", "run-postgres");
        assert_eq!(t.describe(), "postgres");
        let e = t.setup().unwrap_err().to_string();
        assert!(e.contains("built without run-postgres"), "{e}");
        assert!(e.contains("--features run-postgres"), "{e}");
        assert!(t.connect(0).is_err());
        assert!(t.teardown().is_ok());
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("mysql://root:s3cret@127.0.0.1:3306/test"),
            "mysql://root:***@127.0.0.1:3306/test"
        );
        assert_eq!(
            redact_url("postgres://postgres@127.0.0.1/test"),
            "postgres://postgres@127.0.0.1/test"
        );
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn fail_causes_are_codes() {
        assert_eq!(fail_cause("40001: could not serialize access"), "40001");
        assert_eq!(
            fail_cause("1213 (40001): Deadlock found when trying to get lock"),
            "1213 (40001)"
        );
        assert_eq!(fail_cause("fail"), "fail");
    }
}
