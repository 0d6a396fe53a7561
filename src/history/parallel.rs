//! Reading an EDN or JSON history on several threads: this thread reads
//! the input in blocks of whole lines and builds the history, while helper
//! threads decode the blocks (decoding is about three quarters of reading).
//!
//! A block is decoded on its own as long as its lines are whole forms (see
//! `scan::lines`), which is how Jepsen and elle-cli write histories: one op
//! per line. At the first line that is not, this thread reads everything
//! from that line on with one scanner resumed there, as the serial reader
//! would. Ops reach the builder in input order, so the history, and the
//! first error, are exactly those of one thread reading it all (the tests
//! below compare the two on every shape of input, cut into blocks of every
//! size). An input that fits in one block is read on this thread.

use super::builder::HistoryBuilder;
use super::edn::EdnReader;
use super::error::ReadError;
use super::raw::OpBatch;
use super::scan::lines::{self, Stop};
use super::scan::{Dialect, Scanner};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::io::{self, Cursor, Read};
use std::sync::{mpsc, Arc};

/// Bytes per block: large enough that handing a block over costs nothing
/// next to decoding it, small enough that a few in flight use little memory.
pub(super) const BLOCK: usize = 1 << 20;

/// Reads every op of `input` into `b`, decoding on `threads` helper threads.
pub(super) fn read_ops<R: Read>(
    input: R,
    name: &str,
    dialect: Dialect,
    threads: usize,
    block: usize,
    b: &mut HistoryBuilder,
) -> Result<(), ReadError> {
    let mut src = Blocks::new(input, block);
    let first = src.next(Vec::new());
    if src.done() {
        // One block (or a read error within it): nothing to share.
        return serial(src.rest(first), name, dialect, None, b);
    }
    let helpers = threads.max(1);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Decoded)>();
    std::thread::scope(|s| {
        // Block `i` goes to helper `i % helpers`, and comes back to it to
        // be freed: memory is cheapest to free on the thread that
        // allocated it. Returning drops the senders, which ends the helpers.
        let mut jobs: Vec<mpsc::Sender<Job>> = Vec::with_capacity(helpers);
        for _ in 0..helpers {
            let (job_tx, job_rx) = mpsc::channel::<Job>();
            jobs.push(job_tx);
            let done_tx = done_tx.clone();
            s.spawn(move || {
                let mut spare: Vec<OpBatch> = Vec::new();
                for job in job_rx {
                    let (i, bytes) = match job {
                        Job::Decode(i, bytes) => (i, bytes),
                        Job::Reuse(batch) => {
                            spare.push(batch);
                            continue;
                        }
                    };
                    let mut batch = spare.pop().unwrap_or_default();
                    batch.clear();
                    // A panic here would be a bug in the decoder; the block
                    // is then left to the serial path, which meets it on
                    // this input the same way.
                    let end = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        lines::decode(&bytes, dialect, name, &mut batch)
                    }))
                    .unwrap_or(Err(Stop { at: 0, newlines: 0 }));
                    if done_tx.send((i, Decoded { batch, end })).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let in_flight_max = 2 * helpers + 2;
        let mut in_flight: VecDeque<Arc<Vec<u8>>> = VecDeque::new();
        let mut sent = 0usize;
        let mut built = 0usize;
        let mut early: FxHashMap<usize, Decoded> = FxHashMap::default();
        // Newlines before the block being built.
        let mut line_base = 0u32;
        let mut next = Some(first);
        let mut spare: Vec<Vec<u8>> = Vec::new();
        loop {
            while in_flight.len() < in_flight_max {
                let Some(bytes) = next
                    .take()
                    .or_else(|| (!src.done()).then(|| src.next(spare.pop().unwrap_or_default())))
                else {
                    break;
                };
                if bytes.is_empty() {
                    continue;
                }
                let bytes = Arc::new(bytes);
                // The helpers outlive this loop, so the send cannot fail.
                let _ = jobs[sent % helpers].send(Job::Decode(sent, Arc::clone(&bytes)));
                in_flight.push_back(bytes);
                sent += 1;
            }
            let Some(front) = in_flight.front() else {
                // Every block built; what is left (nothing, or the bytes
                // before a read error, and the error) goes the serial way.
                return serial(src.rest(Vec::new()), name, dialect, Some(line_base + 1), b);
            };
            let decoded = loop {
                if let Some(d) = early.remove(&built) {
                    break d;
                }
                match done_rx.recv() {
                    Ok((i, d)) => {
                        early.insert(i, d);
                    }
                    // Every helper gone: cannot happen while `jobs`
                    // live, but the serial path stays correct.
                    Err(_) => {
                        break Decoded {
                            batch: OpBatch::default(),
                            end: Err(Stop { at: 0, newlines: 0 }),
                        }
                    }
                }
            };
            let mut batch = decoded.batch;
            for op in &mut batch.ops {
                op.line += line_base;
            }
            b.push_batch(&batch)?;
            let _ = jobs[built % helpers].send(Job::Reuse(batch));
            let newlines = match decoded.end {
                Ok(n) => n,
                Err(Stop { at, newlines }) => {
                    let mut rest = front[at..].to_vec();
                    for later in in_flight.iter().skip(1) {
                        rest.extend_from_slice(later);
                    }
                    let start = (built > 0 || at > 0).then_some(line_base + newlines + 1);
                    return serial(src.rest(rest), name, dialect, start, b);
                }
            };
            line_base += newlines;
            // The helper is done with the block: its buffer is read into
            // again (fresh memory would cost a page fault per 4 KiB).
            if let Some(Ok(bytes)) = in_flight.pop_front().map(Arc::try_unwrap) {
                spare.push(bytes);
            }
            built += 1;
        }
    })
}

/// Work for a helper thread.
enum Job {
    /// Decode block `.0`.
    Decode(usize, Arc<Vec<u8>>),
    /// A batch this helper decoded, built: its arrays are reused.
    Reuse(OpBatch),
}

/// A decoded block: its ops, and its newlines or where it stopped.
struct Decoded {
    batch: OpBatch,
    end: Result<u32, Stop>,
}

/// Reads the rest of the input on this thread: from its very start
/// (`start` is `None`), or from the start of line `start`.
fn serial<R: Read>(
    input: R,
    name: &str,
    dialect: Dialect,
    start: Option<u32>,
    b: &mut HistoryBuilder,
) -> Result<(), ReadError> {
    let scanner = Scanner::new(input, name, dialect);
    let scanner = match start {
        Some(line) => scanner.resumed(line),
        None => scanner,
    };
    EdnReader::from_scanner(scanner, dialect).build(b)
}

/// The input cut into blocks that end at a newline (the last one at the
/// end of input). A read error ends the blocks; it is kept, with the bytes
/// read before it, for the serial path to meet where the serial reader
/// would.
struct Blocks<R> {
    input: R,
    block: usize,
    /// Bytes read past the last block's final newline.
    carry: Vec<u8>,
    eof: bool,
    error: Option<io::Error>,
}

impl<R: Read> Blocks<R> {
    fn new(input: R, block: usize) -> Self {
        Blocks {
            input,
            block: block.max(1),
            carry: Vec::new(),
            eof: false,
            error: None,
        }
    }

    /// No more blocks: the input ended or failed.
    fn done(&self) -> bool {
        self.eof || self.error.is_some()
    }

    /// The next block, read into `buf`: at least `block` bytes up to a
    /// newline, or all that is left.
    fn next(&mut self, mut buf: Vec<u8>) -> Vec<u8> {
        buf.clear();
        buf.extend_from_slice(&self.carry);
        self.carry.clear();
        let mut want = self.block;
        loop {
            while buf.len() < want && !self.done() {
                let have = buf.len();
                buf.resize(want, 0);
                match self.input.read(&mut buf[have..]) {
                    Ok(0) => {
                        buf.truncate(have);
                        self.eof = true;
                    }
                    Ok(n) => buf.truncate(have + n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(have),
                    Err(e) => {
                        buf.truncate(have);
                        self.error = Some(e);
                    }
                }
            }
            if self.done() {
                if self.error.is_some() {
                    // The bytes before the error go with it, so that they
                    // are read just before it.
                    self.carry = buf;
                    return Vec::new();
                }
                return buf;
            }
            if let Some(nl) = memchr::memrchr(b'\n', &buf) {
                self.carry.extend_from_slice(&buf[nl + 1..]);
                buf.truncate(nl + 1);
                return buf;
            }
            // A line longer than a block: read on.
            want *= 2;
        }
    }

    /// `head`, then the unread input (and its error, if it failed).
    fn rest(self, mut head: Vec<u8>) -> io::Chain<Cursor<Vec<u8>>, Tail<R>> {
        head.extend_from_slice(&self.carry);
        let tail = match self.error {
            Some(e) => Tail::Failed(Some(e)),
            None => Tail::Input(self.input),
        };
        Cursor::new(head).chain(tail)
    }
}

/// The input after the blocks taken: more of it, or the error it failed
/// with (returned once).
enum Tail<R> {
    Input(R),
    Failed(Option<io::Error>),
}

impl<R: Read> Read for Tail<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Tail::Input(r) => r.read(buf),
            Tail::Failed(e) => match e.take() {
                Some(e) => Err(e),
                None => Ok(0),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use proptest::prelude::*;
    use std::io::Write;

    /// The parts of a history that a reader decides.
    fn summary(h: &History) -> String {
        let keys: Vec<String> = (0..h.keys.len() as u32)
            .map(|i| h.keys.datum(i).to_string())
            .collect();
        let values: Vec<String> = (0..h.values.len() as u32)
            .map(|i| h.values.datum(i).to_string())
            .collect();
        format!(
            "{:?}\n{:?}\n{:?}\n{keys:?}\n{values:?}\n{}\n{:?}",
            h.txns, h.mops, h.elems, h.has_invocations, h.double_invoke
        )
    }

    fn show(b: HistoryBuilder, r: Result<(), ReadError>) -> Result<(String, u64), String> {
        r.map_err(|e| e.to_string())?;
        let ops = b.ops();
        Ok((summary(&b.finish().map_err(|e| e.to_string())?), ops))
    }

    /// One scanner over the whole input, on this thread.
    fn one_thread<R: Read>(input: R, dialect: Dialect) -> Result<(String, u64), String> {
        let mut b = HistoryBuilder::new("h");
        let r = serial(input, "h", dialect, None, &mut b);
        show(b, r)
    }

    fn blocks<R: Read>(
        input: R,
        dialect: Dialect,
        threads: usize,
        block: usize,
    ) -> Result<(String, u64), String> {
        let mut b = HistoryBuilder::new("h");
        let r = read_ops(input, "h", dialect, threads, block, &mut b);
        show(b, r)
    }

    /// Cut into blocks of many sizes, on 1 to 3 helpers: the same history
    /// (or the same first error) as one scanner.
    fn same(input: &[u8], dialect: Dialect) {
        let want = one_thread(input, dialect);
        for block in [1, 2, 7, 64, 333, 4096, BLOCK] {
            for threads in [1, 3] {
                assert_eq!(
                    blocks(input, dialect, threads, block),
                    want,
                    "block {block}, {threads} threads:\n{}",
                    String::from_utf8_lossy(&input[..input.len().min(2000)])
                );
            }
        }
    }

    fn many_ops(n: usize) -> String {
        let mut text = String::new();
        for i in 0..n {
            let p = i % 7;
            text.push_str(&format!("{{:index {}, :type :invoke, :process {p}, :value [[:append {p} {i}] [:r {p} nil]]}}\n", 2 * i));
            text.push_str(&format!("{{:index {}, :type :ok, :process {p}, :value [[:append {p} {i}] [:r {p} [{i}]]]}}\n", 2 * i + 1));
        }
        text
    }

    #[test]
    fn blocks_give_the_history_and_errors_of_one_scanner() {
        let text = many_ops(300);
        same(text.as_bytes(), Dialect::Edn);
        // A syntax error deep in the input, and a pairing error before it.
        let bad = format!("{text}{{:index 1 :type :ok :process 0 :value [[:append 1 }}\n");
        same(bad.as_bytes(), Dialect::Edn);
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(203, "{:type :ok, :process 1, :value [[:append 1 1]]}");
        let both = format!(
            "{}\n{{:index 1 :type :ok :process 0 :value [[:cas 1 2]]}}\n",
            lines.join("\n")
        );
        same(both.as_bytes(), Dialect::Edn);
        let e = blocks(both.as_bytes(), Dialect::Edn, 2, 64).unwrap_err();
        assert!(e.contains("no :index"), "{e}");
        // Lines the fast path leaves to the general one, and lines only a
        // scanner that saw the input before them may read.
        let mut odd: Vec<String> = text.lines().map(String::from).collect();
        odd.insert(
            5,
            "{:type :info, :f :start, :value nil, :process :nemesis}".into(),
        );
        odd.insert(9, "; a comment".into());
        odd.insert(
            15,
            "{:type :info, :process :nemesis} {:type :info, :process :nemesis} ; two".into(),
        );
        odd.insert(30, "   ,  ".into());
        odd.insert(
            40,
            "{:type :invoke, :process 3,\n :value [[:r 1 nil]], :index 10000}".into(),
        );
        odd.insert(60, "#_ {:skipped 1}".into());
        odd.insert(
            70,
            "{:type :ok, :process 3, :value [[:r 1 [1]]], :index 10001} \r".into(),
        );
        same(odd.join("\n").as_bytes(), Dialect::Edn);
        // The whole history in one vector, with a byte-order mark, CRLF.
        let wrapped = format!("\u{feff}[{}]", text.replace('\n', "\r\n"));
        same(wrapped.as_bytes(), Dialect::Edn);
        // Input ending without a newline, or inside a form.
        same(text.trim_end().as_bytes(), Dialect::Edn);
        same(
            format!("{text}{{:type :ok, :process").as_bytes(),
            Dialect::Edn,
        );
        for small in ["", "\n", "{:type :ok, :process 0, :value [[:append 1 1]]}"] {
            same(small.as_bytes(), Dialect::Edn);
        }
    }

    #[test]
    fn json_lines_and_json_arrays_too() {
        let mut lines = Vec::new();
        for i in 0..200 {
            lines.push(format!(r#"{{"index":{},"type":"invoke","process":{},"f":"txn","value":[["append","x",{i}],["r","y",null]]}}"#, 2 * i, i % 5));
            lines.push(format!(r#"{{"index":{},"type":"ok","process":{},"f":"txn","value":[["append","x",{i}],["r","y",[1,2]]]}}"#, 2 * i + 1, i % 5));
        }
        same(lines.join("\n").as_bytes(), Dialect::Json);
        same(format!("[{}]", lines.join(",\n")).as_bytes(), Dialect::Json);
        lines.insert(
            77,
            r#"{"type":"info","process":"nemesis","value":{"a":"\u00e9"}}"#.into(),
        );
        lines.insert(99, "{\"type\": 1}".into());
        same(lines.join("\n").as_bytes(), Dialect::Json);
    }

    #[test]
    fn compressed_input_and_a_failing_read_match_one_scanner() {
        let text = many_ops(500);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let d = || flate2::read::MultiGzDecoder::new(&gz[..]);
        let want = one_thread(d(), Dialect::Edn);
        for block in [100, 5000] {
            assert_eq!(blocks(d(), Dialect::Edn, 2, block), want);
        }
        // The input fails part way: the ops before it, then its error.
        struct Breaks<'a>(&'a [u8], usize);
        impl Read for Breaks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.1 >= self.0.len() {
                    return Err(io::Error::other("disk on fire"));
                }
                let n = buf.len().min(self.0.len() - self.1).min(97);
                buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
                self.1 += n;
                Ok(n)
            }
        }
        let cut = &text.as_bytes()[..text.len() / 2 + 11];
        let want = one_thread(Breaks(cut, 0), Dialect::Edn);
        assert!(want.as_ref().unwrap_err().contains("disk on fire"));
        for block in [1, 50, 4096, BLOCK] {
            assert_eq!(blocks(Breaks(cut, 0), Dialect::Edn, 2, block), want);
        }
    }

    #[test]
    fn blocks_agree_on_the_conformance_histories() {
        for p in crate::corpus::histories(&crate::corpus::FOLDERS) {
            let dialect = if p.to_string_lossy().ends_with(".json") {
                Dialect::Json
            } else {
                Dialect::Edn
            };
            let bytes = std::fs::read(&p).unwrap();
            let want = one_thread(&bytes[..], dialect);
            for block in [1, 300] {
                assert_eq!(
                    blocks(&bytes[..], dialect, 2, block),
                    want,
                    "{}",
                    p.display()
                );
            }
        }
    }

    /// Lines of every kind the readers meet, in any order.
    fn arb_text() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            6 => (0i64..40, 0i64..4, 0i64..5).prop_map(|(i, p, v)| format!(
                "{{:index {i}, :type :invoke, :process {p}, :value [[:append {v} {i}] [:r {v} nil]]}}"
            )),
            6 => (0i64..40, 0i64..4, 0i64..5).prop_map(|(i, p, v)| format!(
                "{{:index {i}, :type :ok, :process {p}, :value [[:append {v} {i}] [:r {v} [1 {i}]]]}}"
            )),
            1 => Just("{:type :info, :process :nemesis, :value {:x \"y\"}}".to_string()),
            1 => Just(String::new()),
            1 => Just(" ,\t".to_string()),
            1 => Just("; comment {".to_string()),
            1 => Just("[".to_string()),
            1 => Just("]".to_string()),
            1 => Just("{:type :ok,".to_string()),
            1 => Just(":process 1}".to_string()),
            1 => Just("#_".to_string()),
            1 => Just("{:type :ok :process 0 :value [[:append 1 1.5]]}".to_string()),
            1 => Just("{:type :ok :process 0 :value [[:cas 1 1]]}".to_string()),
            1 => Just("\u{feff}".to_string()),
            1 => Just("{:a 1} {:b 2}".to_string()),
            1 => Just("{:type :ok, :process 2, :value nil} [".to_string()),
        ];
        proptest::collection::vec(line, 0..40).prop_map(|l| l.join("\n"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn any_text_any_blocks(text in arb_text(), block in 1usize..200, threads in 1usize..4) {
            let want = one_thread(text.as_bytes(), Dialect::Edn);
            prop_assert_eq!(blocks(text.as_bytes(), Dialect::Edn, threads, block), want);
        }
    }
}
