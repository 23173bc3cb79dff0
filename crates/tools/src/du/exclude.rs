//! `--exclude PATTERN`, matched as GNU du matches it: a shell pattern (`*` also matches `/`)
//! against the whole path as printed and against every tail of it that starts after a `/` — so
//! `--exclude=cache` leaves out every entry named `cache`, and `--exclude='*.o'` every object file.

use crate::common::fnmatch::{glob, tails};
use canopy_expr::Glob;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

pub struct Excludes {
    patterns: Vec<Glob>,
}

impl Excludes {
    /// `None` when there are no patterns. Any pattern is valid, as for fnmatch.
    pub fn new(patterns: &[OsString]) -> Option<Excludes> {
        (!patterns.is_empty())
            .then(|| Excludes { patterns: patterns.iter().map(|p| glob(p.as_bytes())).collect() })
    }

    pub fn matches(&self, path: &[u8]) -> bool {
        tails(path).any(|tail| self.patterns.iter().any(|p| p.matches(tail)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excludes(patterns: &[&str]) -> Excludes {
        Excludes::new(&patterns.iter().map(OsString::from).collect::<Vec<_>>()).unwrap()
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
