//! What `canopy cmp` reports: one record per difference, as a human line or a JSON object.
//!
//! Human: `only in A: PATH`, `type differs: PATH (regular file vs directory)`, `size differs: PATH
//! (10 vs 12)`, `mtime differs: PATH (1700000000.000000001 vs …)`, `content differs: PATH`, `target
//! differs: PATH (a vs b)` — paths relative to the two roots, control characters escaped.
//! JSON Lines: `{"difference":"size","path":"PATH","a":10,"b":12}`; a path that is not UTF-8 comes
//! lossy in `path` and exact in `path_base64`.

use base64::Engine;
use canopy_engine::{FileKind, Timestamp};
use serde_json::{Value, json};

pub enum Difference {
    OnlyInA,
    OnlyInB,
    Type {
        a: FileKind,
        b: FileKind,
    },
    Size {
        a: u64,
        b: u64,
    },
    Mtime {
        a: Timestamp,
        b: Timestamp,
    },
    /// File contents (with `--content`), or device numbers.
    Content,
    /// Symlink targets.
    Target {
        a: Vec<u8>,
        b: Vec<u8>,
    },
}

impl Difference {
    fn name(&self) -> &'static str {
        match self {
            Difference::OnlyInA => "only_in_a",
            Difference::OnlyInB => "only_in_b",
            Difference::Type { .. } => "type",
            Difference::Size { .. } => "size",
            Difference::Mtime { .. } => "mtime",
            Difference::Content => "content",
            Difference::Target { .. } => "target",
        }
    }

    /// One human line (without the newline); `a` and `b` are the roots as given.
    pub fn human(&self, path: &[u8], a: &[u8], b: &[u8]) -> String {
        let path = escape(path);
        match self {
            Difference::OnlyInA => format!("only in {}: {path}", escape(a)),
            Difference::OnlyInB => format!("only in {}: {path}", escape(b)),
            Difference::Type { a, b } => {
                format!("type differs: {path} ({} vs {})", kind_name(*a), kind_name(*b))
            }
            Difference::Size { a, b } => format!("size differs: {path} ({a} vs {b})"),
            Difference::Mtime { a, b } => format!("mtime differs: {path} ({} vs {})", time(*a), time(*b)),
            Difference::Content => format!("content differs: {path}"),
            Difference::Target { a, b } => format!("target differs: {path} ({} vs {})", escape(a), escape(b)),
        }
    }

    pub fn json(&self, path: &[u8]) -> Value {
        let mut record = json!({ "difference": self.name() });
        record["path"] = json!(String::from_utf8_lossy(path));
        if std::str::from_utf8(path).is_err() {
            record["path_base64"] = json!(base64::engine::general_purpose::STANDARD.encode(path));
        }
        let (a, b) = match self {
            Difference::Type { a, b } => (json!(a.name()), json!(b.name())),
            Difference::Size { a, b } => (json!(a), json!(b)),
            Difference::Mtime { a, b } => (json!(time(*a)), json!(time(*b))),
            Difference::Target { a, b } => {
                (json!(String::from_utf8_lossy(a)), json!(String::from_utf8_lossy(b)))
            }
            _ => return record,
        };
        record["a"] = a;
        record["b"] = b;
        record
    }
}

fn kind_name(kind: FileKind) -> &'static str {
    match kind {
        FileKind::File => "regular file",
        FileKind::Dir => "directory",
        FileKind::Symlink => "symlink",
        FileKind::Fifo => "fifo",
        FileKind::Socket => "socket",
        FileKind::BlockDevice => "block device",
        FileKind::CharDevice => "character device",
        FileKind::Unknown => "unknown",
    }
}

fn time(t: Timestamp) -> String {
    format!("{}.{:09}", t.sec, t.nsec)
}

/// A path for a terminal line: control characters and backslashes escaped, invalid UTF-8 as `\xNN`.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_and_json() {
        let d = Difference::Size { a: 10, b: 12 };
        assert_eq!(d.human(b"dir/f", b"A", b"B"), "size differs: dir/f (10 vs 12)");
        assert_eq!(d.json(b"dir/f").to_string(), r#"{"a":10,"b":12,"difference":"size","path":"dir/f"}"#);
        assert_eq!(Difference::OnlyInB.human(b"new\nline", b"A", b"B"), "only in B: new\\nline");
        let odd = Difference::Content.json(b"\xff");
        assert_eq!(odd["path_base64"], "/w==");
        assert_eq!(escape(b"a\\b\x01\xfe"), "a\\\\b\\x01\\xfe");
    }
}
