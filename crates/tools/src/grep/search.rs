//! Searching one file's content: the selected lines, their count, or just whether there is one.

use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkMatch};
use std::fs::File;

/// How much of a file's result is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Every selected line (plain output, `--group`).
    Lines,
    /// How many lines are selected (`-c`).
    Count,
    /// Whether any line is selected (`-l`): the search stops at the first.
    Any,
}

/// What one file gave.
#[derive(Debug, Default)]
pub struct Found {
    /// Selected lines without their terminator, with their numbers (for [`Want::Lines`]).
    pub lines: Vec<(u64, Vec<u8>)>,
    /// Selected lines seen (for [`Want::Any`], at most 1).
    pub count: u64,
}

/// Searches `file`; binary content (a NUL byte) selects nothing, as with `grep -I`.
pub fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &File,
    want: Want,
) -> std::io::Result<Found> {
    let mut lines = Vec::new();
    let mut sink = Collect { lines: &mut lines, binary: false, want, count: 0 };
    searcher.search_file(matcher, file, &mut sink)?;
    if sink.binary {
        return Ok(Found::default());
    }
    let count = sink.count;
    Ok(Found { lines, count })
}

/// A searcher sink that keeps what [`Want`] asks for and notes binary content.
pub(super) struct Collect<'a> {
    pub(super) lines: &'a mut Vec<(u64, Vec<u8>)>,
    pub(super) binary: bool,
    pub(super) want: Want,
    pub(super) count: u64,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        if self.want == Want::Lines {
            let line = found.bytes();
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            self.lines.push((found.line_number().unwrap_or(0), line.to_vec()));
        }
        Ok(self.want != Want::Any)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}
