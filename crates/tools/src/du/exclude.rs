//! `--exclude PATTERN`, matched as GNU du matches it: a shell pattern (`*` also matches `/`)
//! against the whole path as printed and against every tail of it that starts after a `/` — so
//! `--exclude=cache` leaves out every entry named `cache`, and `--exclude='*.o'` every object file.

use crate::common::fnmatch::{glob, tails};
use globset::{GlobSet, GlobSetBuilder};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub struct Excludes {
    set: GlobSet,
}

impl Excludes {
    /// `None` when there are no patterns.
    pub fn new(patterns: &[OsString]) -> Result<Option<Excludes>, String> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut set = GlobSetBuilder::new();
        for pattern in patterns {
            let text = pattern.to_string_lossy();
            set.add(glob(&text).map_err(|e| format!("--exclude '{text}': {e}"))?);
        }
        let set = set.build().map_err(|e| format!("--exclude: {e}"))?;
        Ok(Some(Excludes { set }))
    }

    pub fn matches(&self, path: &[u8]) -> bool {
        tails(path).any(|tail| self.set.is_match(Path::new(OsStr::from_bytes(tail))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excludes(patterns: &[&str]) -> Excludes {
        Excludes::new(&patterns.iter().map(OsString::from).collect::<Vec<_>>()).unwrap().unwrap()
    }

    #[test]
    fn matches_the_path_or_any_tail_like_gnu() {
        let e = excludes(&["cache", "*.o", "d/e"]);
        assert!(e.matches(b"src/cache"));
        assert!(e.matches(b"cache"));
        assert!(!e.matches(b"src/cache2"));
        assert!(e.matches(b"a/b/x.o"));
        assert!(e.matches(b"top/d/e"));
        assert!(!e.matches(b"top/dd/e"));
        assert!(e.matches(b"x/\xff\xfe.o"), "any bytes");
        let star = excludes(&["*"]);
        assert!(star.matches(b"anything/at/all"));
        let braces = excludes(&["{a,b}"]);
        assert!(braces.matches(b"dir/{a,b}"));
        assert!(!braces.matches(b"dir/a"));
        let class = excludes(&["[ab]?"]);
        assert!(class.matches(b"x/ax"));
        assert!(!class.matches(b"x/cx"));
    }
}
