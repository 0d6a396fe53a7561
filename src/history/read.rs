//! Entry points: read a history file or stream in any supported format.
//!
//! Compression (gzip, zstd) is recognised by magic bytes and decoded while
//! streaming. The format is guessed from the first bytes that are not blank
//! or comments, unless the caller forces one:
//! - `{"history"` (the OneLite header) → [`Format::OneLite`];
//! - `{"`, `[{"` or `[` followed by other JSON → [`Format::Json`];
//! - `{:`, `[{:`, `#`, `(`, `;` and anything else → [`Format::Edn`].

use super::builder::HistoryBuilder;
use super::edn::EdnReader;
use super::error::ReadError;
use super::onelite::{OneLiteReader, OneLiteWorkload};
use super::parallel;
use super::scan::Dialect;
use super::History;
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::str::FromStr;

/// A history's syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Jepsen's EDN: op maps, one after another or inside one vector.
    Edn,
    /// elle-cli's JSON: one array of op objects, or JSON lines.
    Json,
    /// OneLite's JSON lines: a header, then one transaction per line.
    OneLite,
}

impl Format {
    /// The name `-f` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Edn => "edn",
            Format::Json => "json",
            Format::OneLite => "onelite",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "edn" => Ok(Format::Edn),
            "json" | "jsonl" | "json-lines" => Ok(Format::Json),
            "onelite" => Ok(Format::OneLite),
            _ => Err(format!(
                "unknown history format {s:?} (expected edn, json or onelite)"
            )),
        }
    }
}

/// A history and what was learnt while reading it.
#[derive(Debug)]
pub struct Loaded {
    /// The history read.
    pub history: History,
    /// The format read (detected or forced).
    pub format: Format,
    /// Ops in the input (OneLite: transactions), clients or not.
    pub ops: u64,
    /// The workload a OneLite header names.
    pub workload: Option<OneLiteWorkload>,
}

/// Reads the history in `path`.
pub fn read_history_file(path: &Path, format: Option<Format>) -> Result<History, ReadError> {
    load_file(path, format).map(|l| l.history)
}

/// Reads a history from `input`; `name` names it in error messages.
pub fn read_history<R: Read>(
    input: R,
    name: &str,
    format: Option<Format>,
) -> Result<History, ReadError> {
    load(input, name, format).map(|l| l.history)
}

/// How to read a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format; `None`: detect it.
    pub format: Option<Format>,
    /// Threads to decode on (1: this thread alone). The history read is
    /// the same on any number.
    pub threads: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            threads: default_threads(),
        }
    }
}

/// [`read_history_file`], with the details of [`Loaded`].
pub fn load_file(path: &Path, format: Option<Format>) -> Result<Loaded, ReadError> {
    load_file_with(
        path,
        &ReadOptions {
            format,
            ..ReadOptions::default()
        },
    )
}

/// [`load_file`] as `options` say.
pub fn load_file_with(path: &Path, options: &ReadOptions) -> Result<Loaded, ReadError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| ReadError::io(&name, e))?;
    load_with(file, &name, options)
}

/// Decompresses and detects the format: the input ready for a reader.
fn open<R: Read>(
    input: R,
    name: &str,
    format: Option<Format>,
) -> Result<(Format, Input<R>), ReadError> {
    let mut input = decompress(input).map_err(|e| ReadError::io(name, e))?;
    let head = match format {
        Some(_) => Vec::new(),
        None => peek(&mut input, 1 << 20, |b| detect_format(b).is_some())
            .map_err(|e| ReadError::io(name, e))?,
    };
    let f = format.unwrap_or_else(|| detect_format(&head).unwrap_or(Format::Edn));
    Ok((f, Cursor::new(head).chain(input)))
}

/// Decompresses `input` and detects its format, for the readers of
/// non-transactional op histories (`crate::models`), which decode op maps
/// their own way.
pub(crate) fn open_boxed<R: Read + 'static>(
    input: R,
    name: &str,
    format: Option<Format>,
) -> Result<(Format, Box<dyn Read>), ReadError> {
    let (format, input) = open(input, name, format)?;
    Ok((format, Box::new(input)))
}

/// [`read_history`], with the details of [`Loaded`].
pub fn load<R: Read>(input: R, name: &str, format: Option<Format>) -> Result<Loaded, ReadError> {
    load_with(
        input,
        name,
        &ReadOptions {
            format,
            ..ReadOptions::default()
        },
    )
}

/// [`load`] as `options` say.
pub fn load_with<R: Read>(
    input: R,
    name: &str,
    options: &ReadOptions,
) -> Result<Loaded, ReadError> {
    let (format, input) = open(input, name, options.format)?;
    load_opened(format, input, name, options.threads)
}

/// Reads an input that [`open`] prepared: EDN and JSON on `threads`
/// threads (the history is the same on any number).
fn load_opened<R: Read>(
    format: Format,
    input: R,
    name: &str,
    threads: usize,
) -> Result<Loaded, ReadError> {
    let mut b = HistoryBuilder::new(name);
    let mut workload = None;
    match format {
        Format::Edn | Format::Json if threads > 1 => {
            let dialect = if format == Format::Json {
                Dialect::Json
            } else {
                Dialect::Edn
            };
            parallel::read_ops(input, name, dialect, threads, parallel::BLOCK, &mut b)?;
        }
        Format::Edn => EdnReader::new(input, name).build(&mut b)?,
        Format::Json => EdnReader::with_dialect(input, name, Dialect::Json).build(&mut b)?,
        Format::OneLite => {
            let mut r = OneLiteReader::new(input, name);
            workload = r.workload()?;
            while let Some(t) = r.next_txn()? {
                b.push_txn(t)?;
            }
        }
    }
    let ops = b.ops();
    Ok(Loaded {
        history: b.finish()?,
        format,
        ops,
        workload,
    })
}

/// The machine's available parallelism: how many threads reading and
/// checking use unless told otherwise (`CheckOptions::threads`,
/// [`ReadOptions::threads`]). Results never depend on it.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Reads from `r` until `enough` says so, `max` bytes, or the end.
fn peek<R: Read>(r: &mut R, max: usize, enough: impl Fn(&[u8]) -> bool) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 8192];
    while head.len() < max && !enough(&head) {
        match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(head)
}

/// The bytes of an input, decompressed if need be, with the head that was
/// peeked at put back in front.
type Input<R> = io::Chain<Cursor<Vec<u8>>, Decoded<R>>;

/// An input as stored, or through the decoder its magic bytes call for.
/// (An enum rather than a boxed reader, so that it is `Send` when the
/// input is.)
enum Decoded<R: Read> {
    Plain(Peeked<R>),
    Gzip(Box<flate2::read::MultiGzDecoder<BufReader<Peeked<R>>>>),
    Zstd(Box<ZstdFrames<Peeked<R>>>),
}

/// A raw input with its first bytes (read to sniff it) put back.
type Peeked<R> = io::Chain<Cursor<Vec<u8>>, R>;

impl<R: Read> Read for Decoded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Decoded::Plain(r) => r.read(buf),
            Decoded::Gzip(r) => r.read(buf),
            Decoded::Zstd(r) => r.read(buf),
        }
    }
}

/// Wraps `input` in a gzip or zstd decoder when its magic bytes say so.
fn decompress<R: Read>(mut input: R) -> io::Result<Decoded<R>> {
    let head = peek(&mut input, 4, |b| b.len() >= 4)?;
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let zstd = head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    let joined = Cursor::new(head).chain(input);
    Ok(if gzip {
        Decoded::Gzip(Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(
            joined,
        ))))
    } else if zstd {
        Decoded::Zstd(Box::new(ZstdFrames::new(joined)))
    } else {
        Decoded::Plain(joined)
    })
}

/// The format the first meaningful bytes of `head` show, or `None` when
/// `head` is too short to tell (at the end of input the caller defaults to
/// EDN; an empty input is an empty history in every format).
pub fn detect_format(head: &[u8]) -> Option<Format> {
    let skip_ws = |mut i: usize| {
        while i < head.len() && matches!(head[i], b' ' | b'\t' | b'\r' | b'\n' | b',') {
            i += 1;
        }
        i
    };
    let mut i = 0;
    if head.starts_with(b"\xEF\xBB\xBF") {
        i = 3;
    }
    i = skip_ws(i);
    let first = *head.get(i)?;
    match first {
        b'{' => object_format(head, skip_ws(i + 1), true),
        b'[' => {
            let j = skip_ws(i + 1);
            match *head.get(j)? {
                b'{' => object_format(head, skip_ws(j + 1), false),
                b':' | b'#' | b'(' | b';' => Some(Format::Edn),
                _ => Some(Format::Json),
            }
        }
        _ => Some(Format::Edn),
    }
}

/// After a `{` at `i`: a string key means JSON (OneLite when it is the
/// header's `"history"` and `top_level`), anything else EDN.
fn object_format(head: &[u8], i: usize, top_level: bool) -> Option<Format> {
    if *head.get(i)? != b'"' {
        return Some(Format::Edn);
    }
    if !top_level {
        return Some(Format::Json);
    }
    let key = b"\"history\"";
    let n = key.len().min(head.len() - i);
    if head[i..i + n] != key[..n] {
        return Some(Format::Json);
    }
    if n < key.len() {
        return None;
    }
    let mut j = i + key.len();
    while j < head.len() && matches!(head[j], b' ' | b'\t' | b'\r' | b'\n') {
        j += 1;
    }
    match *head.get(j)? {
        b':' => Some(Format::OneLite),
        _ => Some(Format::Json),
    }
}

/// A zstd stream of one or more frames (skippable frames are skipped).
struct ZstdFrames<R> {
    src: BufReader<R>,
    dec: FrameDecoder,
    in_frame: bool,
}

impl<R: Read> ZstdFrames<R> {
    fn new(src: R) -> Self {
        ZstdFrames {
            src: BufReader::new(src),
            dec: FrameDecoder::new(),
            in_frame: false,
        }
    }
}

impl<R: Read> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.in_frame {
                while self.dec.can_collect() < buf.len() && !self.dec.is_finished() {
                    let need = buf.len() - self.dec.can_collect();
                    self.dec
                        .decode_blocks(&mut self.src, BlockDecodingStrategy::UptoBytes(need))
                        .map_err(io::Error::other)?;
                }
                let n = self.dec.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                self.in_frame = false;
            }
            if self.src.fill_buf()?.is_empty() {
                return Ok(0);
            }
            match self.dec.reset(&mut self.src) {
                Ok(()) => self.in_frame = true,
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    io::copy(&mut (&mut self.src).take(length as u64), &mut io::sink())?;
                }
                Err(e) => return Err(io::Error::other(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const EDN: &str = "{:index 0 :type :invoke :process 0 :value [[:append :x 1]]}\n{:index 1 :type :ok :process 0 :value [[:append :x 1]]}\n";
    const JSON: &str = "{\"index\":0,\"type\":\"invoke\",\"process\":0,\"value\":[[\"append\",\"x\",1]]}\n{\"index\":1,\"type\":\"ok\",\"process\":0,\"value\":[[\"append\",\"x\",1]]}\n";
    const ONELITE: &str = "{\"history\":\"list-append\"}\n{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":[[\"a\",1,1]]}\n";

    fn detect(s: &str) -> Option<Format> {
        detect_format(s.as_bytes())
    }

    #[test]
    fn formats_are_detected_from_the_first_meaningful_bytes() {
        assert_eq!(detect("{\"history\":\"register\"}"), Some(Format::OneLite));
        assert_eq!(detect("  { \"history\" : 1"), Some(Format::OneLite));
        assert_eq!(detect("{\"index\":0}"), Some(Format::Json));
        assert_eq!(detect("[{\"index\":0}]"), Some(Format::Json));
        assert_eq!(detect("[\n {\"history\":1}]"), Some(Format::Json));
        assert_eq!(detect("[]"), Some(Format::Json));
        assert_eq!(detect("{:index 0}"), Some(Format::Edn));
        assert_eq!(detect("[{:index 0}]"), Some(Format::Edn));
        assert_eq!(detect("#jepsen.history.Op{}"), Some(Format::Edn));
        assert_eq!(detect("({:a 1})"), Some(Format::Edn));
        assert_eq!(detect("; comment\n{\"a\""), Some(Format::Edn));
        assert_eq!(detect("[#_ 1]"), Some(Format::Edn));
        assert_eq!(detect("\u{feff}{:a 1}"), Some(Format::Edn));
        // Too short to tell yet.
        assert_eq!(detect(""), None);
        assert_eq!(detect("  {"), None);
        assert_eq!(detect("{\"hist"), None);
        assert_eq!(detect("{\"history\""), None);
        assert_eq!(detect("["), None);
    }

    #[test]
    fn format_names_parse() {
        assert_eq!("edn".parse(), Ok(Format::Edn));
        assert_eq!("JSON".parse(), Ok(Format::Json));
        assert_eq!("jsonl".parse(), Ok(Format::Json));
        assert_eq!("onelite".parse(), Ok(Format::OneLite));
        assert!("xml".parse::<Format>().is_err());
        assert_eq!(Format::OneLite.to_string(), "onelite");
    }

    #[test]
    fn each_format_is_read_when_detected() {
        let e = load(EDN.as_bytes(), "h", None).unwrap();
        assert_eq!((e.format, e.ops, e.history.txns.len()), (Format::Edn, 2, 1));
        let j = load(JSON.as_bytes(), "h", None).unwrap();
        assert_eq!(
            (j.format, j.ops, j.history.txns.len()),
            (Format::Json, 2, 1)
        );
        let o = load(ONELITE.as_bytes(), "h", None).unwrap();
        assert_eq!(
            (o.format, o.ops, o.history.txns.len()),
            (Format::OneLite, 1, 1)
        );
        assert_eq!(o.workload, Some(OneLiteWorkload::ListAppend));
    }

    #[test]
    fn a_forced_format_is_obeyed() {
        let e = read_history(JSON.as_bytes(), "h", Some(Format::Edn)).unwrap_err();
        assert_eq!(e.to_string(), "h:1:18: expected a keyword name after `:`");
        let j = load(JSON.as_bytes(), "h", Some(Format::Json)).unwrap();
        assert_eq!(j.format, Format::Json);
    }

    #[test]
    fn empty_input_is_an_empty_history() {
        for f in [
            None,
            Some(Format::Edn),
            Some(Format::Json),
            Some(Format::OneLite),
        ] {
            let h = read_history(&b""[..], "h", f).unwrap();
            assert!(h.txns.is_empty());
        }
    }

    #[test]
    fn gzip_is_read_directly() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(JSON.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        let l = load(&gz[..], "h.json.gz", None).unwrap();
        assert_eq!((l.format, l.history.txns.len()), (Format::Json, 1));
    }

    #[test]
    fn zstd_is_read_directly_across_frames() {
        use ruzstd::encoding::{compress_to_vec, CompressionLevel};
        let mut z = compress_to_vec(EDN.as_bytes(), CompressionLevel::Fastest);
        // A skippable frame, then a second frame with one more txn.
        z.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
        let more = "{:index 2 :type :ok :process 1 :value [[:r :x [1]]]}\n";
        z.extend(compress_to_vec(more.as_bytes(), CompressionLevel::Fastest));
        let l = load(&z[..], "h.edn.zst", None).unwrap();
        assert_eq!((l.format, l.ops, l.history.txns.len()), (Format::Edn, 3, 2));
    }

    #[test]
    fn a_corrupt_compressed_stream_is_an_io_error() {
        let e = read_history(&[0x1f, 0x8b, 0, 1, 2, 3, 4][..], "h.gz", None).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }), "{e}");
        let e = read_history(&[0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff][..], "h.zst", None).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }), "{e}");
    }

    #[test]
    fn a_missing_file_is_an_io_error_naming_it() {
        let e = read_history_file(Path::new("/nonexistent/h.edn"), None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/h.edn: cannot read:"),
            "{e}"
        );
    }

    #[test]
    fn an_error_anywhere_means_no_history() {
        let text = format!("{EDN}{{:index 2 :type :ok :process 0 :value [[:cas :x 1]]}}\n");
        let e = read_history(text.as_bytes(), "h.edn", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.edn:3:41: unknown micro-op function :cas (expected :append, :r or :w)"
        );
    }

    #[test]
    fn detection_looks_past_a_long_comment_header() {
        let text = format!("{}\n{EDN}", ";".repeat(20_000));
        let l = load(text.as_bytes(), "h", None).unwrap();
        assert_eq!(l.format, Format::Edn);
        let text = format!("{}{JSON}", "\n".repeat(20_000));
        assert_eq!(
            load(text.as_bytes(), "h", None).unwrap().format,
            Format::Json
        );
    }
}
