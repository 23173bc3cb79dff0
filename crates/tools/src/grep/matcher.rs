//! What counts as a match: the pattern compiled with grep's flags (-i -w -F -v), shared by
//! `canopy grep` and `canopy pgrep`.

use clap::Args;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use serde::{Deserialize, Serialize};

/// grep's pattern flags.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternFlags {
    /// Ignore case
    #[arg(short = 'i', long)]
    pub ignore_case: bool,

    /// Match whole words only
    #[arg(short = 'w', long)]
    pub word_regexp: bool,

    /// Select the lines that do not match
    #[arg(short = 'v', long)]
    pub invert_match: bool,

    /// PATTERN is a set of fixed strings, one per line, not a regular expression
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
}

/// A pattern ready to search with: the matcher, and how lines are selected.
#[derive(Clone, Debug)]
pub struct Pattern {
    matcher: RegexMatcher,
    invert: bool,
}

impl Pattern {
    /// Compiles `pattern` (a Rust regular expression, like `grep -E`; with `-F` literal strings, one
    /// per line) with `flags`.
    pub fn new(pattern: &str, flags: &PatternFlags) -> Result<Pattern, String> {
        let mut builder = RegexMatcherBuilder::new();
        builder
            .case_insensitive(flags.ignore_case)
            .word(flags.word_regexp)
            .fixed_strings(flags.fixed_strings)
            .line_terminator(Some(b'\n'));
        // grep reads a pattern with newlines as several patterns, any of which may match.
        let patterns: Vec<&str> = pattern.split('\n').collect();
        let matcher = builder.build_many(&patterns).map_err(|e| format!("invalid pattern: {e}"))?;
        Ok(Pattern { matcher, invert: flags.invert_match })
    }

    pub fn matcher(&self) -> &RegexMatcher {
        &self.matcher
    }

    /// A searcher for this pattern: line numbers, inversion, and binary files (a NUL byte) treated
    /// as matching nothing, as `grep -I` does. Searchers keep buffers: one per thread.
    pub fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .invert_match(self.invert)
            .binary_detection(BinaryDetection::quit(0))
            .build()
    }

    /// The selected lines of `data` (each without its line terminator), with their numbers: what
    /// `grep -n` prints. Binary data selects nothing.
    pub fn selected_lines(&self, data: &[u8]) -> Vec<(u64, Vec<u8>)> {
        let mut lines = Vec::new();
        let mut sink = super::search::Collect {
            lines: &mut lines,
            binary: false,
            want: super::search::Want::Lines,
            count: 0,
        };
        // Searching memory cannot fail with an I/O error, and the sink never fails.
        let _ = self.searcher().search_slice(&self.matcher, data, &mut sink);
        if sink.binary {
            lines.clear();
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pattern: &str, flags: PatternFlags, data: &str) -> Vec<(u64, String)> {
        Pattern::new(pattern, &flags)
            .unwrap()
            .selected_lines(data.as_bytes())
            .into_iter()
            .map(|(n, l)| (n, String::from_utf8(l).unwrap()))
            .collect()
    }

    #[test]
    fn flags_select_like_grep() {
        let text = "Foo bar\nfoobar\nbaz\nfoo.bar";
        assert_eq!(
            lines("foo", PatternFlags::default(), text),
            [(2, "foobar".into()), (4, "foo.bar".into())]
        );
        let i = PatternFlags { ignore_case: true, ..Default::default() };
        assert_eq!(lines("foo", i, text).len(), 3);
        let w = PatternFlags { word_regexp: true, ..Default::default() };
        assert_eq!(lines("foo", w, text), [(4, "foo.bar".into())]);
        let v = PatternFlags { invert_match: true, ..Default::default() };
        assert_eq!(lines("foo", v, text), [(1, "Foo bar".into()), (3, "baz".into())]);
        let f = PatternFlags { fixed_strings: true, ..Default::default() };
        assert_eq!(lines("o.b", f.clone(), text), [(4, "foo.bar".into())]);
        assert_eq!(lines("baz\nFoo", f, text), [(1, "Foo bar".into()), (3, "baz".into())]);
    }

    #[test]
    fn binary_data_selects_nothing_and_bad_patterns_are_refused() {
        let p = Pattern::new("foo", &PatternFlags::default()).unwrap();
        assert!(p.selected_lines(b"foo\0bar\nfoo\n").is_empty());
        assert!(Pattern::new("(", &PatternFlags::default()).unwrap_err().starts_with("invalid pattern"));
    }
}
