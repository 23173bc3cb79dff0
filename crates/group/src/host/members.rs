//! Which files a group path names on one host: a file, the files of a directory, or a glob's matches.

use crate::status::Errno;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A file that will be a member if it opens.
pub(crate) struct Candidate {
    /// The path as the group shows it: absolute, relative to the host root.
    pub(crate) shown: Vec<u8>,
    /// The path on this machine (under the host root).
    pub(crate) local: PathBuf,
}

/// A path that could not be expanded (missing directory, glob without match).
pub(crate) type Failure = (Vec<u8>, Errno);

/// Expands `pattern` under `root`: a directory gives its non-directory entries (sorted by name, not
/// recursive), a pattern with `*`, `?` or `[` gives its non-directory matches (sorted; `*` does not match a
/// leading dot), anything else is a single file.
pub(crate) fn expand(root: &Path, pattern: &str) -> (Vec<Candidate>, Vec<Failure>) {
    let relative = pattern.trim_start_matches('/');
    let shown = format!("/{relative}");
    if relative.contains(['*', '?', '[']) {
        return expand_glob(root, relative, &shown);
    }
    let local = root.join(relative);
    if !local.is_dir() {
        return (vec![Candidate { shown: shown.into_bytes(), local }], Vec::new());
    }
    let entries = match std::fs::read_dir(&local) {
        Ok(entries) => entries,
        Err(e) => return (Vec::new(), vec![(shown.into_bytes(), Errno::of(&e))]),
    };
    let mut names = Vec::new();
    let mut failures = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => names.push(entry.file_name()),
            Err(e) => failures.push((shown.clone().into_bytes(), Errno::of(&e))),
        }
    }
    names.sort();
    let dir_shown = shown.trim_end_matches('/');
    let candidates = names
        .into_iter()
        .map(|name| (local.join(&name), name))
        .filter(|(path, _)| !path.is_dir())
        .map(|(path, name)| {
            let mut shown = format!("{dir_shown}/").into_bytes();
            shown.extend_from_slice(name.as_bytes());
            Candidate { shown, local: path }
        })
        .collect();
    (candidates, failures)
}

/// The `glob` crate, not find's fnmatch: this expands a path pattern against the file system one
/// component at a time, `/` never matched by a wildcard and dot files left to an explicit `.`, as a
/// shell does; find's and grep's patterns only ever test one string.
fn expand_glob(root: &Path, relative: &str, shown: &str) -> (Vec<Candidate>, Vec<Failure>) {
    let Some(root_text) = root.to_str() else {
        return (Vec::new(), vec![(shown.as_bytes().to_vec(), Errno(libc::EINVAL))]);
    };
    let full = format!("{}/{relative}", glob::Pattern::escape(root_text.trim_end_matches('/')));
    let options = glob::MatchOptions { require_literal_leading_dot: true, ..Default::default() };
    let paths = match glob::glob_with(&full, options) {
        Ok(paths) => paths,
        Err(_) => {
            return (Vec::new(), vec![(shown.as_bytes().to_vec(), Errno(libc::EINVAL))]);
        }
    };
    let mut candidates = Vec::new();
    let mut failures = Vec::new();
    for path in paths {
        match path {
            Ok(path) if path.is_dir() => {}
            Ok(path) => {
                let inside = path.strip_prefix(root).unwrap_or(&path);
                let mut shown = b"/".to_vec();
                shown.extend_from_slice(inside.as_os_str().as_bytes());
                candidates.push(Candidate { shown, local: path });
            }
            Err(e) => {
                let errno = e.error().raw_os_error().map_or(Errno(libc::EIO), Errno);
                let inside = e.path().strip_prefix(root).unwrap_or(e.path());
                let mut shown = b"/".to_vec();
                shown.extend_from_slice(inside.as_os_str().as_bytes());
                failures.push((shown, errno));
            }
        }
    }
    if candidates.is_empty() && failures.is_empty() {
        failures.push((shown.as_bytes().to_vec(), Errno(libc::ENOENT)));
    }
    candidates.sort_by(|a, b| a.shown.cmp(&b.shown));
    (candidates, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(candidates: &[Candidate]) -> Vec<String> {
        candidates.iter().map(|c| String::from_utf8_lossy(&c.shown).into_owned()).collect()
    }

    #[test]
    fn expands_files_directories_and_globs_under_the_root() {
        let root = tempfile::tempdir().unwrap();
        let conf = root.path().join("etc/conf.d");
        std::fs::create_dir_all(conf.join("sub")).unwrap();
        for name in ["b.conf", "a.conf", ".hidden", "c.txt"] {
            std::fs::write(conf.join(name), name).unwrap();
        }
        let (files, failures) = expand(root.path(), "/etc/conf.d");
        assert_eq!(
            shown(&files),
            ["/etc/conf.d/.hidden", "/etc/conf.d/a.conf", "/etc/conf.d/b.conf", "/etc/conf.d/c.txt"]
        );
        assert!(failures.is_empty());
        assert_eq!(files[1].local, conf.join("a.conf"));

        let (files, _) = expand(root.path(), "/etc/conf.d/*");
        assert_eq!(shown(&files), ["/etc/conf.d/a.conf", "/etc/conf.d/b.conf", "/etc/conf.d/c.txt"]);
        let (files, _) = expand(root.path(), "etc/conf.d/*.conf");
        assert_eq!(shown(&files), ["/etc/conf.d/a.conf", "/etc/conf.d/b.conf"]);

        let (files, failures) = expand(root.path(), "/etc/conf.d/*.none");
        assert!(files.is_empty());
        assert_eq!(failures, vec![(b"/etc/conf.d/*.none".to_vec(), Errno(libc::ENOENT))]);

        // A single path is a candidate even when missing: opening it reports the error.
        let (files, failures) = expand(root.path(), "/etc/missing");
        assert_eq!(shown(&files), ["/etc/missing"]);
        assert!(failures.is_empty());
    }
}
