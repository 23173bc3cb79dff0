//! How results are written: GNU grep's text (`FILE:LINE`, `FILE-LINE` for context, `--` between
//! groups, `FILE:COUNT`, `FILE`), with `-Z` a NUL after each file name, with colors; or JSON
//! Lines; and `--group` blocks. Each file's output is made whole in a worker's buffer and written
//! at once, so files never interleave.

use super::colors::Colors;
use super::fold::{Block, Key, folded_names};
use crate::common::records::EncodedPath;
use canopy_engine::output::Sink;
use serde_json::{Value as Json, json};
use std::sync::{Arc, Mutex};

/// What is printed for each file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Selected lines (or their matches, `-o`).
    Lines,
    /// `-c`.
    Count,
    /// `-l`.
    FilesWith,
    /// `-L`.
    FilesWithout,
    /// `-q`: nothing; the first selected line ends the search.
    Quiet,
}

/// `--binary-files`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BinaryFiles {
    /// Say "binary file matches" instead of printing its lines.
    Binary,
    /// `-a`: as text.
    Text,
    /// `-I`: as if nothing matched.
    WithoutMatch,
}

/// How results are shown, decided once from the command line.
#[derive(Clone, Debug)]
pub struct Show {
    pub mode: Mode,
    pub only_matching: bool,
    pub line_numbers: bool,
    pub with_filename: bool,
    /// `-Z`: a NUL after each file name instead of `:` or a newline.
    pub null_after_name: bool,
    /// What ends a line: newline, or NUL with `-z`.
    pub terminator: u8,
    pub max_count: Option<u64>,
    /// `-A`: lines after a selected one (also after the last one `-m` allows).
    pub after: usize,
    /// The group separator line (`-A -B -C` given, and not `--no-group-separator`).
    pub separator: Option<Vec<u8>>,
    pub binary: BinaryFiles,
    /// Lines that are not valid UTF-8 make a file binary (a UTF-8 locale, not `-a`).
    pub check_encoding: bool,
    pub colors: Option<Colors>,
    pub invert: bool,
    pub json: bool,
    /// `--group`: results are folded, not printed per file.
    pub group: bool,
}

impl Show {
    /// `text` in a color capability, when coloring.
    fn paint(&self, out: &mut Vec<u8>, capability: impl Fn(&Colors) -> &str, text: &[u8]) {
        match &self.colors {
            Some(colors) => colors.paint(out, capability(colors), text),
            None => out.extend_from_slice(text),
        }
    }

    /// `FILE:` / `FILE-` (or `FILE\0`), `NUMBER:` — what comes before a line.
    pub fn prefix(&self, out: &mut Vec<u8>, name: &[u8], sep: u8, number: Option<u64>) {
        if self.with_filename {
            self.paint(out, |c| &c.file_name, name);
            if self.null_after_name {
                out.push(0);
            } else {
                self.paint(out, |c| &c.separator, &[sep]);
            }
        }
        if self.line_numbers {
            self.paint(out, |c| &c.line_number, number.unwrap_or(0).to_string().as_bytes());
            self.paint(out, |c| &c.separator, &[sep]);
        }
    }

    /// A whole line: its matches painted in `match_color` (when given), the rest in `line_color`.
    pub fn line(
        &self,
        out: &mut Vec<u8>,
        line: &[u8],
        matches: Option<(&[(usize, usize)], &str)>,
        line_color: &str,
    ) {
        let Some(colors) = &self.colors else {
            out.extend_from_slice(line);
            out.push(self.terminator);
            return;
        };
        let mut at = 0;
        for &(start, end) in matches.map_or(&[][..], |(m, _)| m) {
            colors.paint(out, line_color, &line[at..start]);
            colors.paint(out, matches.map_or("", |(_, c)| c), &line[start..end]);
            at = end;
        }
        colors.paint(out, line_color, &line[at..]);
        out.push(self.terminator);
    }

    /// The separator between groups of lines.
    pub fn group_separator(&self, out: &mut Vec<u8>) {
        if let Some(separator) = &self.separator {
            self.paint(out, |c| &c.separator, separator);
            out.push(b'\n');
        }
    }

    /// `-c`'s line.
    pub fn count(&self, out: &mut Vec<u8>, name: &[u8], count: u64) {
        if self.json {
            let mut record = text_json("path", name);
            record.insert("count".into(), json!(count));
            return json_line(out, &Json::Object(record));
        }
        if self.with_filename {
            self.paint(out, |c| &c.file_name, name);
            if self.null_after_name {
                out.push(0);
            } else {
                self.paint(out, |c| &c.separator, b":");
            }
        }
        out.extend_from_slice(format!("{count}\n").as_bytes());
    }

    /// `-l` and `-L`'s line.
    pub fn file(&self, out: &mut Vec<u8>, name: &[u8]) {
        if self.json {
            return json_line(out, &Json::Object(text_json("path", name)));
        }
        self.paint(out, |c| &c.file_name, name);
        out.push(if self.null_after_name { 0 } else { b'\n' });
    }

    /// A selected line as JSON.
    pub fn json_line(&self, out: &mut Vec<u8>, name: &[u8], number: u64, line: &[u8]) {
        let mut record = text_json("path", name);
        record.extend(text_json("line", line));
        record.insert("line_number".into(), json!(number));
        json_line(out, &Json::Object(record));
    }

    /// `--group`: per block, a `clush -b` header with the folded files (and their number when more
    /// than one), then its lines; in JSON one object per folded key with the exact paths.
    pub fn block(&self, out: &mut Vec<u8>, block: &Block) {
        let folded = folded_names(&block.files);
        if self.json {
            for key in &block.keys {
                let mut record = serde_json::Map::new();
                match key {
                    Key::Line { number, text } => {
                        record.extend(text_json("line", text));
                        if let Some(number) = number {
                            record.insert("line_number".into(), json!(number));
                        }
                    }
                    Key::Count(count) => {
                        record.insert("count".into(), json!(count));
                    }
                    Key::Listed => {}
                }
                record.insert("files".into(), json!(folded));
                record.insert("file_count".into(), json!(block.files.len()));
                let paths: Vec<EncodedPath> = block.files.iter().map(|f| EncodedPath::new(f)).collect();
                record.insert("paths".into(), serde_json::to_value(paths).expect("paths serialise"));
                json_line(out, &Json::Object(record));
            }
            return;
        }
        if block.keys == [Key::Listed] {
            out.extend_from_slice(folded.as_bytes());
            out.push(if self.null_after_name { 0 } else { b'\n' });
            return;
        }
        let rule = "-".repeat(15);
        let count = if block.files.len() > 1 { format!(" ({})", block.files.len()) } else { String::new() };
        out.extend_from_slice(format!("{rule}\n{folded}{count}\n{rule}\n").as_bytes());
        for key in &block.keys {
            match key {
                Key::Line { number, text } => {
                    if let Some(number) = number {
                        out.extend_from_slice(format!("{number}:").as_bytes());
                    }
                    out.extend_from_slice(text);
                }
                Key::Count(count) => out.extend_from_slice(count.to_string().as_bytes()),
                Key::Listed => {}
            }
            out.push(b'\n');
        }
    }
}

fn json_line(out: &mut Vec<u8>, value: &Json) {
    serde_json::to_writer(&mut *out, value).expect("JSON values serialise");
    out.push(b'\n');
}

/// `{name: text}`, or lossy text plus `{name}_base64` when the bytes are not UTF-8.
fn text_json(name: &str, bytes: &[u8]) -> serde_json::Map<String, Json> {
    let encoded = EncodedPath::new(bytes);
    let mut map = serde_json::Map::new();
    map.insert(name.into(), json!(encoded.path));
    if let Some(raw) = encoded.path_base64 {
        map.insert(format!("{name}_base64"), json!(raw));
    }
    map
}

/// Standard output shared by the workers: whole files' output at a time. With context, every
/// file's output starts with the group separator, and the very first one written drops it.
pub struct Output {
    sink: Arc<Sink>,
    /// The separator each file's output starts with (with context), to drop once.
    separator: Option<Vec<u8>>,
    /// Written anything yet (under the lock: decides the first separator).
    started: Mutex<bool>,
    /// Write every file's output at once (`--line-buffered`, or a terminal).
    each_file: bool,
}

/// Bytes a worker collects before writing them out.
const BATCH: usize = 64 << 10;

impl Output {
    pub fn new(sink: Arc<Sink>, separator: Option<Vec<u8>>, each_file: bool) -> Output {
        Output { sink, separator, started: Mutex::new(false), each_file }
    }

    /// A file's output is complete in `buf` (a worker's buffer): written if enough has gathered.
    pub fn file_done(&self, buf: &mut Vec<u8>) {
        if self.each_file || buf.len() >= BATCH {
            self.write(buf);
        }
    }

    /// Writes and empties `buf`.
    pub fn write(&self, buf: &mut Vec<u8>) {
        if buf.is_empty() {
            return;
        }
        let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        let skip = match &self.separator {
            Some(separator) if !*started && buf.starts_with(separator) => separator.len(),
            _ => 0,
        };
        // A failed write is recorded in the sink and reported once at exit.
        let _ = self.sink.write_all(&buf[skip..]);
        if self.each_file {
            let _ = self.sink.flush();
        }
        *started = true;
        buf.clear();
    }

    pub fn sink(&self) -> &Arc<Sink> {
        &self.sink
    }
}
