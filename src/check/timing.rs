//! Stage timings on stderr when `ISOLDE_TIMINGS` is set: where a slow check
//! spends its time (read, infer, graph, search, judge), without a profiler.

use std::time::Instant;

/// Prints the time since the previous lap, when enabled.
pub struct Stopwatch {
    last: Option<Instant>,
}

impl Stopwatch {
    /// Enabled when the environment variable `ISOLDE_TIMINGS` is set.
    pub fn start() -> Self {
        Stopwatch {
            last: std::env::var_os("ISOLDE_TIMINGS").map(|_| Instant::now()),
        }
    }

    /// Reports the stage that just ended.
    pub fn lap(&mut self, stage: &str) {
        if let Some(t) = self.last {
            let now = Instant::now();
            eprintln!(
                "isolde: {stage:<8} {:>9.3} ms",
                (now - t).as_secs_f64() * 1e3
            );
            self.last = Some(now);
        }
    }
}
