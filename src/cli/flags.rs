//! The checking flags `isolde check` and `isolde run` share: one struct,
//! flattened into both, so that a run checks its history as `check` would.

use clap::Args;
use isolde::check::{CheckOptions, Workload};

/// How to check a history: the models and anomalies asked for, the search
/// bounds, the output and the register options. The default of `-c`
/// differs (`check`: strict-serializable; `run`: the model of the target's
/// isolation level), so each command sets it.
#[derive(Args, Debug, Clone)]
pub struct CheckFlags {
    /// Comma-separated consistency models that should hold (`none` for no
    /// models: only --anomalies), e.g. serializable,strong-session-snapshot-isolation.
    #[arg(short = 'c', long = "consistency-models")]
    pub consistency_models: Option<String>,
    /// Comma-separated anomalies that must not occur, in addition to those the
    /// models prohibit (e.g. G1,G2-item,internal).
    #[arg(short = 'a', long, default_value = "")]
    pub anomalies: String,
    /// Bound on cycle search per strongly connected component, in milliseconds
    /// (or with a unit: 500ms, 2s, 1m). Results found when it is hit are lower
    /// bounds (reported as cycle-search-timeout).
    #[arg(short = 's', long = "cycle-search-timeout", default_value_t = 1000, value_parser = millis)]
    pub cycle_search_timeout: u64,
    /// Time limit of the exact solvers (rw-register histories at
    /// serializable, strict-serializable, snapshot-isolation; list-append
    /// histories whose appended values repeat) and of the linearizability
    /// search (cas-register, mutex), in milliseconds (or with a unit: 500ms,
    /// 30s, 2m) per history and level; when it is hit the verdict is
    /// unknown, with the reason.
    #[arg(long = "solver-timeout", default_value_t = 30_000, value_parser = millis)]
    pub solver_timeout: u64,
    /// Print the full result for each file as a JSON object (Elle's keys).
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Print a human-readable report: verdict, models ruled out, and an
    /// explanation of every anomaly.
    #[arg(short = 'x', long, conflicts_with = "verbose")]
    pub explain: bool,
    /// For each model the exact solvers decide (serializable,
    /// strict-serializable, snapshot-isolation on rw-register and
    /// list-append histories; on list-append with repeated values, the
    /// models their witnesses cover): print the serial order (or
    /// snapshot-isolation commit order and snapshots) that explains every
    /// read, for each model that holds.
    #[arg(long)]
    pub witness: bool,
    /// Elle-style inference only: without the exact solver that by default
    /// decides serializable, strict-serializable and snapshot-isolation on
    /// rw-register histories and on list-append appends no read shows (for
    /// comparing with Elle).
    #[arg(long = "inference-only")]
    pub inference_only: bool,
    /// rw-register: writes follow reads within a transaction (a write after a
    /// read of the same key is a later version).
    #[arg(long = "wfr-keys")]
    pub wfr_keys: bool,
    /// rw-register: each process's operations on a key follow process order.
    #[arg(long = "sequential-keys")]
    pub sequential_keys: bool,
    /// rw-register: operations on each key follow real-time order.
    #[arg(long = "linearizable-keys")]
    pub linearizable_keys: bool,
    /// rw-register: order the writers of each key by real time (for systems
    /// that claim strict serializability).
    #[arg(long = "realtime-versions")]
    pub realtime_versions: bool,
}

/// How many threads reading and checking use: `ISOLDE_THREADS` when it is
/// set to a positive number (1: no helper threads), else the machine's
/// available parallelism. Results never depend on it.
pub fn threads() -> usize {
    std::env::var("ISOLDE_THREADS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or_else(isolde::history::read::default_threads)
}

/// How the command line reads a history in `format` (`None`: detect it).
pub fn read_options(format: Option<isolde::Format>) -> isolde::history::read::ReadOptions {
    isolde::history::read::ReadOptions {
        format,
        threads: threads(),
    }
}

impl CheckFlags {
    /// The library options these flags ask for; `default_models` when `-c`
    /// was not given. The transaction order file is `check`'s alone: the
    /// caller reads it.
    pub fn options(
        &self,
        workload: Workload,
        workload_given: bool,
        default_models: &str,
    ) -> CheckOptions {
        let list = |s: &str| -> Vec<String> {
            s.split(',')
                .map(|x| x.trim().trim_start_matches(':').to_string())
                .filter(|x| !x.is_empty())
                .collect()
        };
        let models = list(self.consistency_models.as_deref().unwrap_or(default_models));
        let models = if models.iter().any(|m| m == "none") {
            vec![]
        } else {
            models
        };
        CheckOptions {
            workload,
            workload_given,
            models: Some(models),
            anomalies: list(&self.anomalies),
            cycle_search_timeout_ms: self.cycle_search_timeout,
            solver_timeout_ms: self.solver_timeout,
            witness: self.witness,
            wfr_keys: self.wfr_keys,
            sequential_keys: self.sequential_keys,
            linearizable_keys: self.linearizable_keys,
            realtime_versions: self.realtime_versions,
            transaction_order: None,
            inference_only: self.inference_only,
            threads: threads(),
        }
    }

    /// The flags given that change how a transactional history is
    /// inferred, as they are written on the command line (` --wfr-keys`
    /// ...; empty when none): what `isolde check` needs to find the same
    /// anomalies.
    pub fn inference_flags(&self) -> String {
        self.transactional_flags()
            .into_iter()
            .filter(|f| *f != "--witness")
            .map(|f| format!(" {f}"))
            .collect()
    }

    /// The flags given that only transactional histories (list-append,
    /// rw-register) have a use for, by name.
    pub fn transactional_flags(&self) -> Vec<&'static str> {
        [
            (self.witness, "--witness"),
            (self.inference_only, "--inference-only"),
            (self.wfr_keys, "--wfr-keys"),
            (self.sequential_keys, "--sequential-keys"),
            (self.linearizable_keys, "--linearizable-keys"),
            (self.realtime_versions, "--realtime-versions"),
        ]
        .into_iter()
        .filter_map(|(given, name)| given.then_some(name))
        .collect()
    }
}

/// A time limit in milliseconds: a bare number is milliseconds (as Elle's
/// `-s` is), or a number with `ms`, `s` or `m` (`--solver-timeout 10` is
/// 10 ms, easy to mistake for seconds: `10s` says what it means).
fn millis(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, per) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60e3)
    } else {
        (t, 1.0)
    };
    let bad = || {
        format!(
            "expected milliseconds (30000) or a number with a unit (500ms, 30s, 2m), found {s:?}"
        )
    };
    let x: f64 = num.trim().parse().map_err(|_| bad())?;
    if !x.is_finite() || x < 0.0 || x * per > u64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    let ms = x * per;
    if per == 1.0 && ms.fract() != 0.0 {
        return Err(bad());
    }
    Ok(ms.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::millis;

    #[test]
    fn time_limits_are_milliseconds_or_carry_their_unit() {
        assert_eq!(millis("30000"), Ok(30_000));
        assert_eq!(millis("0"), Ok(0));
        assert_eq!(millis("500ms"), Ok(500));
        assert_eq!(millis("30s"), Ok(30_000));
        assert_eq!(millis("1.5s"), Ok(1_500));
        assert_eq!(millis("2m"), Ok(120_000));
        for bad in ["", "s", "10x", "-1", "1.5", "1.5ms", "nan", "infs", "10 h"] {
            let e = millis(bad).expect_err(bad);
            assert!(e.contains("500ms, 30s, 2m"), "{bad}: {e}");
        }
    }
}
