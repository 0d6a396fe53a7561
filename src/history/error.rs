//! Errors of the history readers. Every error names the file and, when the
//! bytes were readable, the line and column and what was expected there.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The bytes could not be read (missing file, corrupt gzip/zstd stream).
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: io::Error,
    },
    /// The bytes were read but are not a valid history. `line` and `col` are
    /// 1-based; the column counts bytes.
    #[error("{file}:{line}:{col}: {what}")]
    Invalid {
        file: String,
        line: u32,
        col: u32,
        what: String,
    },
}

impl ReadError {
    pub fn invalid(file: &str, line: u32, col: u32, what: impl Into<String>) -> Self {
        ReadError::Invalid {
            file: file.to_string(),
            line,
            col,
            what: what.into(),
        }
    }

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
