//! One file searched as GNU grep searches it: selected lines and their context, `-m`'s limit (and
//! the context after it), `-o`, binary files (a NUL, or in a UTF-8 locale a line that is not
//! UTF-8: "binary file matches" instead of the lines, unless `-a`; nothing at all with `-I`).

use super::fold::{Folded, Key};
use super::output::{BinaryFiles, Mode, Show};
use super::pattern::Pattern;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

/// What one file gave.
#[derive(Debug, Default, Clone, Copy)]
pub struct Found {
    /// Lines selected (`-I` on a binary file: none).
    pub selected: u64,
    /// A binary file had a selected line: grep says so instead of printing it.
    pub binary_matched: bool,
}

/// The searcher's sink for one file: writes the file's output into `out`.
pub struct FileSearch<'a> {
    pub show: &'a Show,
    pub pattern: &'a Pattern,
    /// The file's name as printed.
    pub name: &'a [u8],
    pub out: &'a mut Vec<u8>,
    /// `--group`: results folded here instead of printed.
    pub fold: &'a mut Folded,
    /// Scratch space for match positions.
    pub matches: &'a mut Vec<(usize, usize)>,
    pub found: Found,
    /// The number of the last line printed: a line that does not follow it starts a new group.
    last_printed: Option<u64>,
    /// Binary data met: nothing more is printed.
    binary: bool,
    /// `-m` reached: this many lines of trailing context may still follow.
    trailing: Option<usize>,
}

impl<'a> FileSearch<'a> {
    pub fn new(
        show: &'a Show,
        pattern: &'a Pattern,
        name: &'a [u8],
        out: &'a mut Vec<u8>,
        fold: &'a mut Folded,
        matches: &'a mut Vec<(usize, usize)>,
    ) -> Self {
        FileSearch {
            show,
            pattern,
            name,
            out,
            fold,
            matches,
            found: Found::default(),
            last_printed: None,
            binary: false,
            trailing: None,
        }
    }

    /// After the search: the file's count or name, as the mode says.
    pub fn finish(self) -> Found {
        let found = self.found;
        match (self.show.mode, self.show.group) {
            (Mode::Count, false) => self.show.count(self.out, self.name, found.selected),
            (Mode::Count, true) => self.fold.add(Key::Count(found.selected), 0, self.name),
            (Mode::FilesWith, group) if found.selected > 0 => self.listed(group),
            (Mode::FilesWithout, group) if found.selected == 0 => self.listed(group),
            _ => {}
        }
        found
    }

    fn listed(self, group: bool) {
        if group {
            self.fold.add(Key::Listed, 0, self.name);
        } else {
            self.show.file(self.out, self.name);
        }
    }

    fn strip<'l>(&self, line: &'l [u8]) -> &'l [u8] {
        line.strip_suffix(&[self.show.terminator]).unwrap_or(line)
    }

    /// Before line `number` is printed: the separator when it starts a new group (for the first
    /// group of a file it is dropped by the output if nothing was printed before this file).
    fn begin_group(&mut self, number: Option<u64>) {
        // Several matches of one line (-o) are one group too.
        let follows =
            matches!((self.last_printed, number), (Some(last), Some(n)) if n == last || n == last + 1);
        if !follows {
            self.show.group_separator(self.out);
        }
        self.last_printed = number;
    }

    /// Whether a line to print has an encoding error (a UTF-8 locale): the file is binary from it.
    fn encoding_error(&mut self, text: &[u8]) -> bool {
        if self.show.check_encoding && std::str::from_utf8(text).is_err() {
            self.binary = true;
            return true;
        }
        false
    }

    fn print_selected(&mut self, line: &[u8], number: Option<u64>) {
        let show = self.show;
        if show.group {
            let key =
                Key::Line { number: show.line_numbers.then_some(number.unwrap_or(0)), text: line.to_vec() };
            self.fold.add(key, number.unwrap_or(0), self.name);
            return;
        }
        if show.json {
            show.json_line(self.out, self.name, number.unwrap_or(0), line);
            return;
        }
        if show.only_matching {
            if show.invert {
                return;
            }
            self.pattern.matches_in(line, self.matches);
            for &(start, end) in self.matches.iter() {
                if show.check_encoding && std::str::from_utf8(&line[start..end]).is_err() {
                    self.binary = true;
                    self.found.binary_matched = true;
                    return;
                }
            }
            let color = show.colors.as_ref().map_or("", |c| c.selected_match.as_str());
            for index in 0..self.matches.len() {
                let (start, end) = self.matches[index];
                self.begin_group(number);
                show.prefix(self.out, self.name, b':', number);
                show.line(self.out, &line[start..end], Some((&[(0, end - start)], color)), "");
            }
            return;
        }
        self.begin_group(number);
        show.prefix(self.out, self.name, b':', number);
        match show.colors.as_ref().filter(|c| !show.invert && !c.selected_match.is_empty()) {
            Some(colors) => {
                self.pattern.matches_in(line, self.matches);
                show.line(
                    self.out,
                    line,
                    Some((self.matches, &colors.selected_match)),
                    &colors.selected_line,
                );
            }
            None => show.line(self.out, line, None, show.colors.as_ref().map_or("", |c| &c.selected_line)),
        }
    }

    fn print_context(&mut self, line: &[u8], number: Option<u64>) {
        let show = self.show;
        if show.json || show.group {
            return;
        }
        // With -o nothing of it shows, but it joins groups as grep's context lines do.
        self.begin_group(number);
        if show.only_matching {
            return;
        }
        show.prefix(self.out, self.name, b'-', number);
        // Under -v the context lines are the matching ones.
        match show.colors.as_ref().filter(|c| show.invert && !c.context_match.is_empty()) {
            Some(colors) => {
                self.pattern.matches_in(line, self.matches);
                show.line(self.out, line, Some((self.matches, &colors.context_match)), &colors.context_line);
            }
            None => show.line(self.out, line, None, show.colors.as_ref().map_or("", |c| &c.context_line)),
        }
    }

    /// A line after `-m`'s last: printed as context; whether more may follow.
    fn trailing_line(&mut self, line: &[u8], number: Option<u64>) -> bool {
        let Some(left) = self.trailing.as_mut() else { return false };
        if *left == 0 {
            return false;
        }
        *left -= 1;
        let more = *left > 0;
        if !self.binary && !self.encoding_error(line) {
            self.print_context(line, number);
        }
        more
    }
}

impl Sink for FileSearch<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let line = self.strip(found.bytes());
        let number = found.line_number();
        if self.trailing.is_some() {
            return Ok(self.trailing_line(line, number));
        }
        let show = self.show;
        let printing = show.mode == Mode::Lines && !show.json && !show.group;
        if self.binary || (printing && !show.only_matching && self.encoding_error(line)) {
            self.found.selected += 1;
            self.found.binary_matched = true;
            // Counting goes on through a binary file (up to -m); anything else has its answer.
            let more = show.max_count.is_none_or(|max| self.found.selected < max);
            return Ok(show.mode == Mode::Count && more);
        }
        self.found.selected += 1;
        match show.mode {
            Mode::Quiet | Mode::FilesWith | Mode::FilesWithout => return Ok(false),
            Mode::Count => {}
            Mode::Lines => self.print_selected(line, number),
        }
        if self.found.binary_matched {
            return Ok(false);
        }
        if show.max_count.is_some_and(|max| self.found.selected >= max) {
            if show.mode == Mode::Lines && show.after > 0 {
                self.trailing = Some(show.after);
                return Ok(true);
            }
            return Ok(false);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let line = self.strip(context.bytes());
        let number = context.line_number();
        if self.trailing.is_some() {
            return Ok(*context.kind() != SinkContextKind::After || self.trailing_line(line, number));
        }
        if !self.binary && !self.encoding_error(line) {
            self.print_context(line, number);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        match self.show.binary {
            BinaryFiles::WithoutMatch => {
                // grep -I: the file counts as matching nothing.
                self.found = Found::default();
                Ok(false)
            }
            _ => {
                self.binary = true;
                Ok(true)
            }
        }
    }
}
