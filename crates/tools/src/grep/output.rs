//! How results are written: grep's text (`path:line`, `path:number:line`, `path:count`, `path`),
//! with `-0` a NUL after each path, or JSON Lines; and `--group` blocks.

use super::fold::{Block, Key, folded_names};
use crate::common::records::EncodedPath;
use serde_json::{Value as Json, json};

/// Output flavour, from the command line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style {
    pub line_numbers: bool,
    /// `-0`: a NUL instead of what follows a path (grep's `-Z`).
    pub null: bool,
    pub json: bool,
}

impl Style {
    fn path(&self, out: &mut Vec<u8>, path: &[u8], then: u8) {
        out.extend_from_slice(path);
        out.push(if self.null { 0 } else { then });
    }

    fn json_line(&self, out: &mut Vec<u8>, value: &Json) {
        serde_json::to_writer(&mut *out, value).expect("JSON values serialise");
        out.push(b'\n');
    }

    pub fn lines(&self, out: &mut Vec<u8>, path: &[u8], lines: &[(u64, Vec<u8>)]) {
        for (number, line) in lines {
            if self.json {
                let mut record = path_json(path);
                record.extend(text_json("line", line));
                record.insert("line_number".into(), json!(number));
                self.json_line(out, &Json::Object(record));
                continue;
            }
            self.path(out, path, b':');
            if self.line_numbers {
                out.extend_from_slice(format!("{number}:").as_bytes());
            }
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }

    pub fn count(&self, out: &mut Vec<u8>, path: &[u8], count: u64) {
        if self.json {
            let mut record = path_json(path);
            record.insert("count".into(), json!(count));
            return self.json_line(out, &Json::Object(record));
        }
        self.path(out, path, b':');
        out.extend_from_slice(format!("{count}\n").as_bytes());
    }

    pub fn listed(&self, out: &mut Vec<u8>, path: &[u8]) {
        if self.json {
            return self.json_line(out, &Json::Object(path_json(path)));
        }
        self.path(out, path, b'\n');
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
                self.json_line(out, &Json::Object(record));
            }
            return;
        }
        if block.keys == [Key::Listed] {
            out.extend_from_slice(folded.as_bytes());
            out.push(if self.null { 0 } else { b'\n' });
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

fn path_json(path: &[u8]) -> serde_json::Map<String, Json> {
    text_json("path", path)
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
