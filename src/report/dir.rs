//! The report directory's bookkeeping: a manifest of the files isolde wrote,
//! so that the next report into the same directory removes the old one's
//! files (and only those: a directory isolde did not write is refused), and
//! the top-level page of a report over several histories.

use crate::model::Validity;
use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Component, Path, PathBuf};

/// The manifest's file name: a header line, then every file isolde wrote
/// into the directory, one relative path a line.
pub const MANIFEST: &str = ".isolde-report";
const HEADER: &str = "isolde report; the next report into this directory removes these files:";

/// Why a directory cannot take a report.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// The path names a file.
    #[error("{0}: not a directory")]
    NotADirectory(String),
    /// A non-empty directory without isolde's manifest: writing into it
    /// could overwrite the user's files, and stale ones could not be told apart.
    #[error(
        "{0}: not empty and not an isolde report (no {MANIFEST} in it); give a new or empty directory"
    )]
    Foreign(String),
    /// Reading the directory or removing an old report's file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// What failed.
        #[source]
        source: io::Error,
    },
}

fn io_error(path: &Path) -> impl Fn(io::Error) -> DirError + '_ {
    move |source| DirError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Makes `dir` ready for a new report: nothing to do when it is missing or
/// empty; when it holds an earlier isolde report, removes the files its
/// manifest lists (and the subdirectories they leave empty), nothing else.
/// Any other non-empty directory is refused.
pub fn prepare(dir: &Path) -> Result<(), DirError> {
    match fs::metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error(dir)(e)),
        Ok(m) if !m.is_dir() => return Err(DirError::NotADirectory(dir.display().to_string())),
        Ok(_) => {}
    }
    let manifest = dir.join(MANIFEST);
    let listed = match fs::read_to_string(&manifest) {
        Ok(text) if text.lines().next() == Some(HEADER) => text,
        Ok(_) => return Err(DirError::Foreign(dir.display().to_string())),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let mut entries = fs::read_dir(dir).map_err(io_error(dir))?;
            return match entries.next() {
                None => Ok(()),
                Some(_) => Err(DirError::Foreign(dir.display().to_string())),
            };
        }
        Err(e) => return Err(io_error(&manifest)(e)),
    };
    let mut parents = BTreeSet::new();
    for rel in listed.lines().skip(1).filter_map(safe_relative) {
        let path = dir.join(&rel);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(io_error(&path)(e)),
            _ => {}
        }
        parents.extend(rel.ancestors().skip(1).map(Path::to_path_buf));
    }
    // Deepest first ("a/b" sorts after "a"); only directories left empty go.
    for p in parents.iter().rev().filter(|p| !p.as_os_str().is_empty()) {
        let _ = fs::remove_dir(dir.join(p));
    }
    fs::remove_file(&manifest).map_err(io_error(&manifest))
}

/// A manifest line as a path inside the directory, or `None` for anything
/// that could point elsewhere (absolute, `..`) or at the manifest itself.
fn safe_relative(line: &str) -> Option<PathBuf> {
    let p = Path::new(line);
    let inside = !line.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    (inside && line != MANIFEST).then(|| p.to_path_buf())
}

/// Records `files` (relative to `dir`) as this report's, for the next
/// [`prepare`].
pub fn write_manifest(dir: &Path, files: &[String]) -> io::Result<()> {
    let mut text = format!("{HEADER}\n");
    for f in files {
        text.push_str(f);
        text.push('\n');
    }
    fs::write(dir.join(MANIFEST), text)
}

/// The subdirectory of one history in a report over several: its file
/// name (`stdin` for `-`), made safe, with `-2`, `-3`, ... when an earlier
/// history took the name.
pub fn subdir_name(file: &Path, taken: &mut HashSet<String>) -> String {
    let base = match file.file_name() {
        _ if file.as_os_str() == "-" => "stdin".to_string(),
        Some(n) => super::file_stem(&n.to_string_lossy()),
        None => "history".to_string(),
    };
    let mut name = base.clone();
    let mut i = 2;
    while name == "index.html" || !taken.insert(name.clone()) {
        name = format!("{base}-{i}");
        i += 1;
    }
    name
}

/// One history on the top-level page of a report over several.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The history's file, as given.
    pub label: String,
    /// Its report's page, relative to the top-level one.
    pub link: Option<String>,
    /// Its verdict; `None` when it could not be checked.
    pub valid: Option<Validity>,
    /// The anomaly types found, or why it could not be checked.
    pub what: String,
}

/// Writes `dir/index.html`: every history with its verdict, linked to its
/// own report.
pub fn write_index(dir: &Path, entries: &[Entry]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join("index.html"), super::html::index_page(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("isolde-dir-test-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn manifest_paths_cannot_leave_the_directory() {
        assert_eq!(safe_relative("G1c/1.svg"), Some(PathBuf::from("G1c/1.svg")));
        assert_eq!(safe_relative("../x"), None);
        assert_eq!(safe_relative("/etc/passwd"), None);
        assert_eq!(safe_relative("a/../../x"), None);
        assert_eq!(safe_relative(""), None);
        assert_eq!(safe_relative(MANIFEST), None);
    }

    #[test]
    fn prepare_removes_listed_files_only_and_refuses_foreign_directories() {
        let d = temp_dir("prepare");
        prepare(&d).unwrap();
        fs::create_dir_all(d.join("G1c")).unwrap();
        for f in ["index.html", "G1c.txt", "G1c/1.svg", "mine.txt"] {
            fs::write(d.join(f), "x").unwrap();
        }
        // No manifest: refused, nothing touched.
        assert!(matches!(prepare(&d), Err(DirError::Foreign(_))));
        assert!(d.join("index.html").exists());
        write_manifest(
            &d,
            &["index.html".into(), "G1c.txt".into(), "G1c/1.svg".into()],
        )
        .unwrap();
        prepare(&d).unwrap();
        assert!(!d.join("index.html").exists() && !d.join("G1c").exists());
        assert!(!d.join(MANIFEST).exists());
        assert!(d.join("mine.txt").exists(), "a file isolde did not write");
        // A manifest of someone else's format is no licence to delete.
        fs::write(d.join(MANIFEST), "mine.txt\n").unwrap();
        assert!(matches!(prepare(&d), Err(DirError::Foreign(_))));
        assert!(d.join("mine.txt").exists());
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn subdirectory_names_are_unique_and_safe() {
        let mut taken = HashSet::new();
        assert_eq!(subdir_name(Path::new("x/a.edn"), &mut taken), "a.edn");
        assert_eq!(subdir_name(Path::new("y/a.edn"), &mut taken), "a.edn-2");
        assert_eq!(subdir_name(Path::new("-"), &mut taken), "stdin");
        assert_eq!(
            subdir_name(Path::new("index.html"), &mut taken),
            "index.html-2"
        );
    }
}
