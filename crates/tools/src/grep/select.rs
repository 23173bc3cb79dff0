//! Which files and directories are searched: GNU grep's `--include`, `--exclude` and
//! `--exclude-dir` (and `--glob`, the same rules spelled as ripgrep spells them). Inside a tree a
//! file's base name is matched, a command-line name by any suffix that starts after a `/`. Globs
//! are `fnmatch`'s: no braces, `*` matches `/` too. When several match, the last one given wins;
//! when none does, a file is searched unless the first of them was an `--include`.

use crate::common::fnmatch::tails;
use globset::GlobMatcher;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// A file rule in command-line order.
#[derive(Clone, Debug)]
pub enum Rule {
    Include(String),
    Exclude(String),
}

pub struct Selection {
    files: Vec<(bool, GlobMatcher)>,
    dirs: Vec<GlobMatcher>,
}

fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    crate::common::fnmatch::glob(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("invalid glob '{pattern}': {e}"))
}

impl Selection {
    pub fn new(files: &[Rule], dirs: &[String]) -> Result<Selection, String> {
        let files = files
            .iter()
            .map(|rule| match rule {
                Rule::Include(g) => Ok((true, glob(g)?)),
                Rule::Exclude(g) => Ok((false, glob(g)?)),
            })
            .collect::<Result<_, String>>()?;
        let dirs = dirs.iter().map(|g| glob(g)).collect::<Result<_, String>>()?;
        Ok(Selection { files, dirs })
    }

    /// Whether a file met inside a tree, named `name`, is searched.
    pub fn file(&self, name: &[u8]) -> bool {
        self.decide(|m| m.is_match(OsStr::from_bytes(name)))
    }

    /// Whether a directory met inside a tree is entered.
    pub fn dir(&self, name: &[u8]) -> bool {
        !self.dirs.iter().any(|m| m.is_match(OsStr::from_bytes(name)))
    }

    /// Whether a file named on the command line is searched.
    pub fn operand_file(&self, path: &[u8]) -> bool {
        self.decide(|m| suffixes(path).any(|s| m.is_match(OsStr::from_bytes(s))))
    }

    /// Whether a directory named on the command line is searched.
    pub fn operand_dir(&self, path: &[u8]) -> bool {
        !self.dirs.iter().any(|m| suffixes(path).any(|s| m.is_match(OsStr::from_bytes(s))))
    }

    fn decide(&self, matches: impl Fn(&GlobMatcher) -> bool) -> bool {
        match self.files.iter().rev().find(|(_, m)| matches(m)) {
            Some((include, _)) => *include,
            None => self.files.first().is_none_or(|(include, _)| !include),
        }
    }
}

/// The name suffixes of a command-line path (a trailing `/` aside).
fn suffixes(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    tails(path.strip_suffix(b"/").filter(|t| !t.is_empty()).unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(spec: &[(&str, bool)]) -> Selection {
        let files: Vec<Rule> = spec
            .iter()
            .map(
                |(g, include)| {
                    if *include { Rule::Include(g.to_string()) } else { Rule::Exclude(g.to_string()) }
                },
            )
            .collect();
        Selection::new(&files, &[]).unwrap()
    }

    /// The cases checked against GNU grep 3.8.
    #[test]
    fn last_match_wins_and_the_first_rule_sets_the_default() {
        let s = rules(&[("*.c", true), ("a*", false)]);
        assert!(!s.file(b"a.c") && !s.file(b"b.h") && s.file(b"x.c"));
        let s = rules(&[("a*", false), ("*.c", true)]);
        assert!(s.file(b"a.c") && s.file(b"b.h") && s.file(b"x.c"));
        assert!(!rules(&[("*.{c,h}", true)]).file(b"a.c"), "braces are literal");
        assert!(rules(&[("*.{c,h}", true)]).file(b"a.{c,h}"));
        assert!(rules(&[]).file(b"anything"));
        let s = rules(&[("*.c", false)]);
        assert!(!s.operand_file(b"dir/sub/x.c") && s.operand_file(b"dir/x.h"));
        let dirs = Selection::new(&[], &["skip".into(), ".".into()]).unwrap();
        assert!(!dirs.dir(b"skip") && dirs.dir(b"skipped"));
        assert!(!dirs.operand_dir(b"a/skip") && !dirs.operand_dir(b".") && dirs.operand_dir(b"d/e"));
    }

    #[test]
    fn suffixes_start_after_a_slash() {
        let all: Vec<&[u8]> = suffixes(b"a/b//c/").collect();
        assert_eq!(all, [&b"a/b//c"[..], b"b//c", b"c"]);
    }
}
