//! Which files and directories are searched: GNU grep's `--include`, `--exclude` and
//! `--exclude-dir` (and `--glob`, the same rules spelled as ripgrep spells them). Inside a tree a
//! file's base name is matched, a command-line name by any suffix that starts after a `/`. Globs
//! are `fnmatch`'s: no braces, `*` matches `/` too. When several match, the last one given wins;
//! when none does, a file is searched unless the first of them was an `--include`.

use crate::common::fnmatch::{glob, tails};
use canopy_expr::Glob;

/// A file rule in command-line order.
#[derive(Clone, Debug)]
pub enum Rule {
    Include(String),
    Exclude(String),
}

pub struct Selection {
    files: Vec<(bool, Glob)>,
    dirs: Vec<Glob>,
}

impl Selection {
    /// Any pattern is valid, as for fnmatch (an unterminated `[` is a literal one).
    pub fn new(files: &[Rule], dirs: &[String]) -> Selection {
        let files = files
            .iter()
            .map(|rule| match rule {
                Rule::Include(g) => (true, glob(g.as_bytes())),
                Rule::Exclude(g) => (false, glob(g.as_bytes())),
            })
            .collect();
        let dirs = dirs.iter().map(|g| glob(g.as_bytes())).collect();
        Selection { files, dirs }
    }

    /// Whether a file met inside a tree, named `name`, is searched.
    pub fn file(&self, name: &[u8]) -> bool {
        self.decide(|m| m.matches(name))
    }

    /// Whether a directory met inside a tree is entered.
    pub fn dir(&self, name: &[u8]) -> bool {
        !self.dirs.iter().any(|m| m.matches(name))
    }

    /// Whether a file named on the command line is searched.
    pub fn operand_file(&self, path: &[u8]) -> bool {
        self.decide(|m| suffixes(path).any(|s| m.matches(s)))
    }

    /// Whether a directory named on the command line is searched.
    pub fn operand_dir(&self, path: &[u8]) -> bool {
        !self.dirs.iter().any(|m| suffixes(path).any(|s| m.matches(s)))
    }

    fn decide(&self, matches: impl Fn(&Glob) -> bool) -> bool {
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
        Selection::new(&files, &[])
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
        let dirs = Selection::new(&[], &["skip".into(), ".".into()]);
        assert!(!dirs.dir(b"skip") && dirs.dir(b"skipped"));
        assert!(!dirs.operand_dir(b"a/skip") && !dirs.operand_dir(b".") && dirs.operand_dir(b"d/e"));
    }

    #[test]
    fn suffixes_start_after_a_slash() {
        let all: Vec<&[u8]> = suffixes(b"a/b//c/").collect();
        assert_eq!(all, [&b"a/b//c"[..], b"b//c", b"c"]);
    }
}
