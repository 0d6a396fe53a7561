//! Errors of the history readers. Every error names the file and, when the
//! bytes were readable, the line and column and what was expected there.

use std::io;

#[derive(Debug, thiserror::Error)]
/// Why a history could not be read; each names the input, so messages point at the file.
pub enum ReadError {
    /// The bytes could not be read (missing file, corrupt gzip/zstd stream).
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The input's name (a path, or what the caller passed).
        file: String,
        #[source]
        /// The underlying I/O or decompression error.
        source: io::Error,
    },
    /// The bytes were read but are not a valid history. `line` and `col` are
    /// 1-based; the column counts bytes.
    #[error("{file}:{line}:{col}: {what}")]
    Invalid {
        /// The input's name.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based byte column.
        col: u32,
        /// What was expected or what is wrong.
        what: String,
    },
}

impl ReadError {
    /// A syntax or shape error at `line`:`col` of `file`.
    pub fn invalid(file: &str, line: u32, col: u32, what: impl Into<String>) -> Self {
        ReadError::Invalid {
            file: file.to_string(),
            line,
            col,
            what: what.into(),
        }
    }

    /// An I/O error while reading `file`.
    pub fn io(file: &str, source: io::Error) -> Self {
        ReadError::Io {
            file: file.to_string(),
            source,
        }
    }

    /// `(line, column)` of an invalid-input error.
    pub fn position(&self) -> Option<(u32, u32)> {
        match self {
            ReadError::Invalid { line, col, .. } => Some((*line, *col)),
            ReadError::Io { .. } => None,
        }
    }

    /// What was wrong, without the location prefix.
    pub fn what(&self) -> String {
        match self {
            ReadError::Invalid { what, .. } => what.clone(),
            ReadError::Io { source, .. } => source.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_input_names_file_line_column_and_expectation() {
        let e = ReadError::invalid("h.edn", 3, 14, "expected a map key");
        assert_eq!(e.to_string(), "h.edn:3:14: expected a map key");
        assert_eq!(e.position(), Some((3, 14)));
        assert_eq!(e.what(), "expected a map key");
    }

    #[test]
    fn io_errors_name_the_file() {
        let e = ReadError::io("h.edn", io::Error::new(io::ErrorKind::NotFound, "gone"));
        assert_eq!(e.to_string(), "h.edn: cannot read: gone");
        assert_eq!(e.position(), None);
    }
}
