//! Records as JSON Lines, encoded on the worker thread that visits the entries.

use super::path_text::{base64, split};
use super::{Record, timestamp_ns};
use serde::Serialize;
use std::borrow::Cow;

/// One line of the JSON Lines output; field names and meanings match the Parquet columns.
#[derive(Serialize)]
struct Line<'a> {
    path: Cow<'a, str>,
    path_base64: Option<String>,
    #[serde(rename = "type")]
    kind: &'static str,
    size: u64,
    blocks: u64,
    mode: u32,
    uid: u32,
    gid: u32,
    atime: i64,
    mtime: i64,
    ctime: i64,
    inode: u64,
    nlink: u64,
    dev: u64,
    depth: u32,
}

/// Appends `record` to `out` as one JSON object and a newline.
pub(super) fn append_line(out: &mut Vec<u8>, record: &Record<'_>) {
    let meta = record.meta;
    let (path, raw) = split(record.path);
    let line = Line {
        path,
        path_base64: raw.map(base64),
        kind: record.kind.name(),
        size: meta.size,
        blocks: meta.blocks,
        mode: meta.mode,
        uid: meta.uid,
        gid: meta.gid,
        atime: timestamp_ns(meta.atime),
        mtime: timestamp_ns(meta.mtime),
        ctime: timestamp_ns(meta.ctime),
        inode: meta.ino,
        nlink: meta.nlink,
        dev: meta.dev,
        depth: record.depth,
    };
    serde_json::to_writer(&mut *out, &line).expect("writing JSON to a Vec cannot fail");
    out.push(b'\n');
}
