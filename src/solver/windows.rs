//! Real-time windows: when could each append have happened, if every
//! transaction took effect at one instant between its invocation and its
//! completion (strict serializability)?
//!
//! Let `A(q)` be the instant the `q`-th element of a key's observed list was
//! appended (non-decreasing in `q`). A read of `c` elements happened after
//! `A(c)` and before `A(c+1)`; a block filling a run of positions
//! `s..e` happened at one of `A(s+1) ..= A(e)`; a block after every read of
//! the list happened after `A(n)` and after those reads. Bounds on the
//! instants of transactions give bounds on the `A(q)` and back, to a
//! fixpoint; a place whose bounds leave no instant is impossible.
//!
//! Every bound follows from the definitions, so a place ruled out here is
//! ruled out for strict serializability ([`Windows::realtime`]). For weaker
//! levels the windows are only a guess of where blocks went, to steer the
//! search for a witness: [`Windows::relaxed`] drops real time for the
//! transactions (and keys) that contradict it, such as a stale read.

use super::problem::{BinKind, KeyFacts};
use crate::history::{History, Outcome};

const NEG: i64 = i64::MIN / 4;
const POS: i64 = i64::MAX / 4;

/// What contradicts real time.
enum Blame {
    Txn(usize),
    Key(usize),
}

/// The windows, at their fixpoint.
pub struct Windows {
    /// Per transaction: its instant lies strictly between `lo` and `hi`.
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
    /// Per key, per `q` in `0..=n`: `alo[q] < A(q) < ahi[q]`.
    alo: Vec<Vec<i64>>,
    ahi: Vec<Vec<i64>>,
    /// Per key, per writer: the bins still possible for it.
    pub bins: Vec<Vec<Vec<u32>>>,
    /// Per key, per writer: whether "after every read" is still possible.
    pub unseen: Vec<Vec<bool>>,
    /// Per key: the latest lower bound of a read of the whole list.
    last_read: Vec<i64>,
}

/// The open interval of instants a block can have in bin `b` of key `kf`.
fn bin_span(kf: &KeyFacts, b: u32, alo: &[i64], ahi: &[i64]) -> (i64, i64) {
    let bin = &kf.bins[b as usize];
    let (s, e) = (bin.start as usize, bin.end as usize);
    match bin.kind {
        // One block, all its positions at once.
        BinKind::Exact => (alo[e], ahi[s + 1]),
        BinKind::Uniform(_) => (alo[s + 1], ahi[e]),
    }
}

impl Windows {
    /// The windows of `h` under real time, or `None` when real time leaves
    /// some `ok` transaction or place without any instant (then the history
    /// is not strictly serializable; the caller's solver says why).
    pub fn realtime(h: &History, keys: &[KeyFacts], max_rounds: usize) -> Option<Windows> {
        let free_txn = vec![false; h.txns.len()];
        let free_key = vec![false; keys.len()];
        Windows::compute(h, keys, max_rounds, &free_txn, &free_key).ok()
    }

    /// Windows under real time, except for the transactions and keys that
    /// contradict it (each found one starts the computation again without
    /// it, at most `max_restarts` times). Not exact for any level: a guess.
    pub fn relaxed(
        h: &History,
        keys: &[KeyFacts],
        max_rounds: usize,
        max_restarts: usize,
    ) -> Option<Windows> {
        let mut free_txn = vec![false; h.txns.len()];
        let mut free_key = vec![false; keys.len()];
        for _ in 0..=max_restarts {
            match Windows::compute(h, keys, max_rounds, &free_txn, &free_key) {
                Ok(w) => return Some(w),
                Err(Blame::Txn(t)) => free_txn[t] = true,
                Err(Blame::Key(k)) => free_key[k] = true,
            }
        }
        None
    }

    fn compute(
        h: &History,
        keys: &[KeyFacts],
        max_rounds: usize,
        free_txn: &[bool],
        free_key: &[bool],
    ) -> Result<Windows, Blame> {
        let nt = h.txns.len();
        let mut lo: Vec<i64> = vec![NEG; nt];
        let mut hi: Vec<i64> = vec![POS; nt];
        for (t, x) in h.txns.iter().enumerate() {
            if free_txn[t] {
                continue;
            }
            if let Some(i) = x.invoke_seq {
                lo[t] = i as i64;
            }
            if let (Outcome::Ok, Some(c)) = (x.outcome, x.complete_seq) {
                hi[t] = c as i64;
            }
        }
        let mut w = Windows {
            lo,
            hi,
            alo: keys.iter().map(|k| vec![NEG; k.list.len() + 1]).collect(),
            ahi: keys.iter().map(|k| vec![POS; k.list.len() + 1]).collect(),
            bins: keys
                .iter()
                .map(|k| vec![Vec::new(); k.writers.len()])
                .collect(),
            unseen: keys
                .iter()
                .map(|k| {
                    let n = k.list.len() as u32;
                    k.writers
                        .iter()
                        .map(|w| w.pin.is_none_or(|c| c == n))
                        .collect()
                })
                .collect(),
            last_read: vec![NEG; keys.len()],
        };
        for (ki, kf) in keys.iter().enumerate() {
            for (bi, b) in kf.bins.iter().enumerate() {
                for &c in &b.cands {
                    w.bins[ki][c as usize].push(bi as u32);
                }
            }
        }
        // Bins that are certainly filled: those of segments spelled one way.
        let sure: Vec<Vec<u32>> = keys
            .iter()
            .map(|kf| {
                kf.segments
                    .iter()
                    .filter(|s| s.alts.len() == 1)
                    .flat_map(|s| s.alts[0].bins.iter().copied())
                    .collect()
            })
            .collect();
        for _ in 0..max_rounds {
            for (ki, kf) in keys.iter().enumerate() {
                if !free_key[ki] && !w.key_bounds(ki, kf, &sure[ki]) {
                    return Err(Blame::Key(ki));
                }
            }
            let mut changed = false;
            for (ki, kf) in keys.iter().enumerate() {
                changed |= w.prune_places(ki, kf).map_err(Blame::Txn)?;
            }
            changed |= w.txn_bounds(h, keys, free_txn).map_err(Blame::Txn)?;
            if !changed {
                break;
            }
        }
        Ok(w)
    }

    /// Recomputes the bounds on the `A(q)` of one key from its reads and
    /// the blocks that may fill its bins. False if some `A(q)` has none.
    fn key_bounds(&mut self, ki: usize, kf: &KeyFacts, sure: &[u32]) -> bool {
        let n = kf.list.len();
        let (lo, hi) = (&self.lo, &self.hi);
        let alo = &mut self.alo[ki];
        let ahi = &mut self.ahi[ki];
        alo.iter_mut().for_each(|x| *x = NEG);
        ahi.iter_mut().for_each(|x| *x = POS);
        let mut last_read = NEG;
        for r in &kf.readers {
            let (c, t) = (r.cut as usize, r.txn as usize);
            if c >= 1 {
                ahi[c] = ahi[c].min(hi[t]);
            }
            if c < n {
                alo[c + 1] = alo[c + 1].max(lo[t]);
            } else {
                last_read = last_read.max(lo[t]);
            }
        }
        self.last_read[ki] = last_read;
        for &b in sure {
            let bin = &kf.bins[b as usize];
            let (s, e) = (bin.start as usize, bin.end as usize);
            // Some possible writer fills it: between the extremes of theirs.
            let mut min_lo = POS;
            let mut max_hi = NEG;
            for &c in &bin.cands {
                if self.bins[ki][c as usize].contains(&b) {
                    let t = kf.writers[c as usize].txn as usize;
                    min_lo = min_lo.min(lo[t]);
                    max_hi = max_hi.max(hi[t]);
                }
            }
            if min_lo == POS {
                return false;
            }
            match bin.kind {
                BinKind::Exact => {
                    for q in s + 1..=e {
                        alo[q] = alo[q].max(min_lo);
                        ahi[q] = ahi[q].min(max_hi);
                    }
                }
                BinKind::Uniform(_) => {
                    alo[s + 1] = alo[s + 1].max(min_lo);
                    ahi[e] = ahi[e].min(max_hi);
                }
            }
        }
        // An `ok` block with one possible bin is in it.
        for (wi, wr) in kf.writers.iter().enumerate() {
            let bs = &self.bins[ki][wi];
            if wr.outcome != Outcome::Ok || bs.len() != 1 || self.unseen[ki][wi] {
                continue;
            }
            let bin = &kf.bins[bs[0] as usize];
            let (s, e) = (bin.start as usize, bin.end as usize);
            let t = wr.txn as usize;
            ahi[s + 1] = ahi[s + 1].min(hi[t]);
            alo[e] = alo[e].max(lo[t]);
        }
        for q in 1..=n {
            alo[q] = alo[q].max(alo[q - 1]);
        }
        for q in (0..n).rev() {
            ahi[q] = ahi[q].min(ahi[q + 1]);
        }
        (1..=n).all(|q| alo[q] < ahi[q])
    }

    /// Drops the places whose span misses the writer's window. Whether
    /// some went, or the `ok` transaction one of whose blocks has none left.
    fn prune_places(&mut self, ki: usize, kf: &KeyFacts) -> Result<bool, usize> {
        let mut changed = false;
        let n = kf.list.len();
        for (wi, wr) in kf.writers.iter().enumerate() {
            let t = wr.txn as usize;
            let (tl, th) = (self.lo[t], self.hi[t]);
            let (alo, ahi) = (&self.alo[ki], &self.ahi[ki]);
            let before = self.bins[ki][wi].len();
            self.bins[ki][wi].retain(|&b| {
                let (a, z) = bin_span(kf, b, alo, ahi);
                a.max(tl) < z.min(th)
            });
            changed |= self.bins[ki][wi].len() != before;
            if self.unseen[ki][wi] && alo[n].max(self.last_read[ki]).max(tl) >= th {
                self.unseen[ki][wi] = false;
                changed = true;
            }
            if self.bins[ki][wi].is_empty() && !self.unseen[ki][wi] && wr.outcome == Outcome::Ok {
                return Err(t);
            }
        }
        Ok(changed)
    }

    /// Narrows each transaction's window to what its reads and its blocks'
    /// possible places allow (`free` ones keep no window). Whether some
    /// changed, or an `ok` transaction with no instant left.
    fn txn_bounds(&mut self, h: &History, keys: &[KeyFacts], free: &[bool]) -> Result<bool, usize> {
        let mut lo = self.lo.clone();
        let mut hi = self.hi.clone();
        for (ki, kf) in keys.iter().enumerate() {
            let n = kf.list.len();
            let (alo, ahi) = (&self.alo[ki], &self.ahi[ki]);
            for r in &kf.readers {
                let (c, t) = (r.cut as usize, r.txn as usize);
                lo[t] = lo[t].max(alo[c]);
                if c < n {
                    hi[t] = hi[t].min(ahi[c + 1]);
                }
            }
            for (wi, wr) in kf.writers.iter().enumerate() {
                let t = wr.txn as usize;
                let (mut hl, mut hh) = (POS, NEG);
                for &b in &self.bins[ki][wi] {
                    let (a, z) = bin_span(kf, b, alo, ahi);
                    hl = hl.min(a.max(self.lo[t]));
                    hh = hh.max(z.min(self.hi[t]));
                }
                if self.unseen[ki][wi] {
                    hl = hl.min(alo[n].max(self.last_read[ki]).max(self.lo[t]));
                    hh = self.hi[t];
                }
                if hl == POS {
                    continue; // an info block with no place: not committed
                }
                lo[t] = lo[t].max(hl);
                hi[t] = hi[t].min(hh);
            }
        }
        let mut changed = false;
        for t in 0..lo.len() {
            if free[t] {
                (lo[t], hi[t]) = (NEG, POS);
            }
            if h.txns[t].outcome == Outcome::Ok && lo[t] >= hi[t] {
                return Err(t);
            }
            changed |= lo[t] != self.lo[t] || hi[t] != self.hi[t];
        }
        self.lo = lo;
        self.hi = hi;
        Ok(changed)
    }

    /// May writer `w` of key `k` put its block at position `p` (`p == n`:
    /// after every read)? Checks the bins left and, inside a run, the
    /// instants of the positions the block would fill.
    pub fn allows(&self, keys: &[KeyFacts], k: u32, w: u32, p: u32) -> bool {
        let (ki, wi) = (k as usize, w as usize);
        let kf = &keys[ki];
        let n = kf.list.len() as u32;
        if p >= n {
            return self.unseen[ki][wi];
        }
        let len = kf.writers[wi].block.len() as u32;
        let t = kf.writers[wi].txn as usize;
        let inside = self.bins[ki][wi].iter().any(|&b| {
            let bin = &kf.bins[b as usize];
            match bin.kind {
                BinKind::Exact => bin.start == p,
                BinKind::Uniform(_) => bin.start <= p && p + len <= bin.end,
            }
        });
        if !inside {
            return false;
        }
        let (alo, ahi) = (&self.alo[ki], &self.ahi[ki]);
        // All the block's positions were appended at the same instant.
        let a = alo[(p + len) as usize].max(self.lo[t]);
        let z = ahi[(p + 1) as usize].min(self.hi[t]);
        a < z
    }
}
