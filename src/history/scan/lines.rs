//! Decoding a block of whole lines on its own, with no scanner state: what
//! lets `history::parallel` hand blocks of a history to other threads.
//!
//! A line can be decoded without knowing what came before it only when the
//! tokenizer is between top-level forms at its start, and it is whenever
//! every line before it was blank or held whole forms. So a block is
//! decoded line by line, each line either blank, one op in the fast path's
//! shape (`fast.rs`) followed by blanks, or an op map (or a comment) that
//! the general path reads wholly within the line; the first line that is
//! none of these (a form spanning lines, a top-level vector, a byte-order
//! mark, an error) *stops* the block there, and the caller reads the rest of
//! the input with one [`super::Scanner`] resumed at that line, so what it
//! reads from there on, errors included, is exactly what one scanner over
//! the whole input would have read.

use super::{fast, Dialect, Scanner, EDN_CLASS, JSON_CLASS, WS};
use crate::history::edn::EdnReader;
use crate::history::raw::OpBatch;

/// Where a block stopped (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stop {
    /// Byte offset of the line's start.
    pub at: usize,
    /// Newlines before it.
    pub newlines: u32,
}

/// Decodes `block`, which starts at the start of a line (see the module
/// doc), into `batch`, each op's line counted from 1 at the block's first
/// line. Returns the block's newlines, or where it stopped (the ops before
/// the stop are in `batch`). `file` names the input only for the general
/// path's own use: its errors are never returned (an error stops the
/// block).
pub(crate) fn decode(
    block: &[u8],
    dialect: Dialect,
    file: &str,
    batch: &mut OpBatch,
) -> Result<u32, Stop> {
    let class = match dialect {
        Dialect::Edn => &EDN_CLASS,
        Dialect::Json => &JSON_CLASS,
    };
    let mut line = 0u32; // newlines before the current line
    let mut start = 0usize;
    while start < block.len() {
        let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |i| start + i);
        let mut i = start;
        while i < end && class[block[i] as usize] & WS != 0 {
            i += 1;
        }
        let whole = i == end || one_line(block, start, i, end, dialect, class, file, line, batch);
        if !whole {
            return Err(Stop {
                at: start,
                newlines: line,
            });
        }
        if end < block.len() {
            line += 1;
        }
        start = end + 1;
    }
    Ok(line)
}

/// Decodes the line `block[start..end]` (its first non-blank byte at `i`)
/// into `batch`, or says it cannot be read on its own.
#[allow(clippy::too_many_arguments)]
fn one_line(
    block: &[u8],
    start: usize,
    i: usize,
    end: usize,
    dialect: Dialect,
    class: &'static [u8; 256],
    file: &str,
    line: u32,
    batch: &mut OpBatch,
) -> bool {
    let first = block[i];
    if first == b'{' {
        // The fast path sees the rest of the block, as it would see the
        // rest of a scanner's buffer, and gives up at a newline.
        let mark = batch.mark();
        let at = (line + 1, (i - start + 1) as u32);
        if let Some(used) = fast::op(&block[i..], dialect, class, batch, at) {
            if block[i + used..end]
                .iter()
                .all(|&c| class[c as usize] & WS != 0)
            {
                return true;
            }
            batch.truncate(mark);
        }
    } else if !(first == b';' && dialect == Dialect::Edn) {
        // A vector or list of ops, a tag, a byte-order mark...: only a
        // scanner that has seen what came before may read it.
        return false;
    }
    general(
        &block[i..end],
        (i - start) as u32,
        dialect,
        file,
        line,
        batch,
    )
}

/// The general path over (the rest of) one line: every form on it must be
/// whole, and reading must end cleanly at the line's end.
fn general(
    text: &[u8],
    blanks: u32,
    dialect: Dialect,
    file: &str,
    line: u32,
    batch: &mut OpBatch,
) -> bool {
    // The scanner starts its columns at 1: the line's `blanks` before
    // `text` are added back below.
    let scanner = Scanner::with_buffer(text, file, dialect, text.len() + 1).resumed(1);
    let mut r = EdnReader::from_scanner(scanner, dialect);
    let mark = batch.mark();
    loop {
        match r.next_into(batch) {
            Ok(true) => {
                let op = batch.ops.last_mut().expect("an op was added");
                if op.line != 1 {
                    break;
                }
                op.line = line + 1;
                op.col += blanks;
            }
            Ok(false) => return true,
            Err(_) => break,
        }
    }
    batch.truncate(mark);
    false
}
