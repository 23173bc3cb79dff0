//! `--ncdu-json FILE`: the whole tree in ncdu's export format (version 1.2), so the result can be
//! browsed with `ncdu -f FILE` (or `gdu -f FILE`).
//!
//! The format nests every directory's entries inside its array, but workers finish directories in
//! any order — so each directory's part is built when the walk leaves it: its own object, its
//! entries, and its subdirectories' parts, which are complete by then. Parts are bytes kept in
//! memory while small and otherwise written once to an unnamed spool file and referred to by
//! offset, so memory stays a few words per directory however many files there are; the export is
//! stitched together in tree order at the end. Under MPI every part stays in memory (it travels
//! with the directory's data to the rank holding the parent).
//!
//! Each entry carries its own sizes (`asize` = `st_size`, `dsize` = `st_blocks` × 512) and inode;
//! files with several links carry `hlnkc`, and ncdu counts them once itself. Directories that
//! could not be read carry `read_error`, entries left out by `--exclude` or `-x` carry `excluded`.

pub use super::spool::Piece;
use super::spool::{Spool, write_pieces};
use canopy_engine::Metadata;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

/// ncdu's format version: major 1, minor 2.
const HEADER_VERSION: &[u8] = b"[1,2,";
/// Bytes kept in memory per part before it goes to the spool file.
const SPILL_BYTES: usize = 64 << 10;

/// One directory's part while it is being walked.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DirExport {
    /// Objects of its entries (each preceded by a comma), not yet in a piece.
    entries: Vec<u8>,
    /// Finished parts of its subdirectories and earlier entries.
    pieces: Vec<Piece>,
    inline_bytes: usize,
}

impl DirExport {
    pub fn absorb(&mut self, other: DirExport) {
        self.entries.extend(other.entries);
        self.inline_bytes += other.inline_bytes;
        self.pieces.extend(other.pieces);
    }
}

/// Why an entry is in the export without sizes.
#[derive(Clone, Copy, Debug)]
pub enum Left {
    /// `--exclude`.
    Pattern,
    /// `-x`: on another file system.
    OtherFs,
    /// Its metadata could not be read.
    Unreadable,
}

pub struct Export {
    /// `None`: every part stays in memory.
    spool: Option<Mutex<Spool>>,
    /// Directories whose reading failed (reported by path), for `read_error`.
    unreadable: Mutex<HashSet<Vec<u8>>>,
}

impl Export {
    /// Parts beyond a few KiB go to an unnamed file created in `dir`.
    pub fn spooled(dir: &Path) -> io::Result<Export> {
        Ok(Export { spool: Some(Mutex::new(Spool::create(dir)?)), unreadable: Mutex::default() })
    }

    /// Everything in memory (distributed runs, where parts move between ranks).
    pub fn in_memory() -> Export {
        Export { spool: None, unreadable: Mutex::default() }
    }

    /// A directory that could not be read.
    pub fn unreadable_dir(&self, path: &[u8]) {
        self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_vec());
    }

    /// An entry of `part`'s directory that is not a directory (or a directory left out).
    pub fn entry(
        &self,
        part: &mut DirExport,
        name: &[u8],
        meta: Option<&Metadata>,
        parent_dev: Option<u64>,
        left: Option<Left>,
    ) {
        part.entries.push(b',');
        object(&mut part.entries, name, meta, parent_dev, left);
        if part.entries.len() >= SPILL_BYTES {
            let bytes = std::mem::take(&mut part.entries);
            part.inline_bytes += bytes.len();
            part.pieces.push(Piece::Inline(bytes));
            self.compact(part);
        }
    }

    /// The finished part of a directory: its array with its own object first.
    pub fn finish_dir(
        &self,
        path: &[u8],
        name: &[u8],
        meta: Option<&Metadata>,
        parent_dev: Option<u64>,
        mut part: DirExport,
    ) -> Vec<Piece> {
        let mut head = Vec::with_capacity(128 + part.entries.len());
        head.extend_from_slice(if parent_dev.is_none() { b"[" } else { b",[" });
        let failed = self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).remove(path);
        object(&mut head, name, meta, parent_dev, failed.then_some(Left::Unreadable));
        head.extend_from_slice(&part.entries);
        let mut pieces = Vec::with_capacity(part.pieces.len() + 2);
        pieces.push(Piece::Inline(head));
        pieces.append(&mut part.pieces);
        pieces.push(Piece::Inline(b"]".to_vec()));
        let inline_bytes = pieces.iter().map(|p| if let Piece::Inline(b) = p { b.len() } else { 0 }).sum();
        let mut finished = DirExport { entries: Vec::new(), inline_bytes, pieces };
        self.compact(&mut finished);
        finished.pieces
    }

    /// Adds a finished subdirectory's part to its parent's.
    pub fn add_child(&self, part: &mut DirExport, child: Vec<Piece>) {
        for piece in &child {
            if let Piece::Inline(bytes) = piece {
                part.inline_bytes += bytes.len();
            }
        }
        part.pieces.extend(child);
        if part.inline_bytes >= SPILL_BYTES {
            self.compact(part);
        }
    }

    /// Joins neighbouring pieces; with a spool, writes in-memory runs past the limit to it.
    fn compact(&self, part: &mut DirExport) {
        let spill = self.spool.is_some() && part.inline_bytes >= SPILL_BYTES;
        let mut out: Vec<Piece> = Vec::with_capacity(part.pieces.len());
        for piece in part.pieces.drain(..) {
            match (out.last_mut(), piece) {
                (Some(Piece::Inline(run)), Piece::Inline(bytes)) => run.extend_from_slice(&bytes),
                (Some(Piece::Spooled { offset, len }), Piece::Spooled { offset: next, len: more })
                    if *offset + *len == next =>
                {
                    *len += more;
                }
                (_, piece) => out.push(piece),
            }
        }
        part.inline_bytes = 0;
        for piece in &mut out {
            if let Piece::Inline(bytes) = piece {
                if spill && let Some(spooled) = self.spool_bytes(bytes) {
                    *piece = spooled;
                } else {
                    part.inline_bytes += bytes.len();
                }
            }
        }
        part.pieces = out;
    }

    /// Writes bytes to the spool; `None` (they stay in memory) if that fails.
    fn spool_bytes(&self, bytes: &[u8]) -> Option<Piece> {
        let mut spool = self.spool.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
        spool.append(bytes).ok()
    }

    /// Writes the complete export of the tree whose root part is `root` to `out`.
    pub fn write(&self, out: &mut impl Write, root: &[Piece], timestamp: u64) -> io::Result<()> {
        out.write_all(HEADER_VERSION)?;
        writeln!(
            out,
            "{{\"progname\":\"canopy\",\"progver\":\"{}\",\"timestamp\":{timestamp}}},",
            env!("CARGO_PKG_VERSION")
        )?;
        let spool = self.spool.as_ref().map(|spool| spool.lock().unwrap_or_else(|e| e.into_inner()));
        write_pieces(root, spool.as_deref(), out)?;
        out.write_all(b"]\n")
    }
}

/// An entry's object: `{"name":…,"asize":…,"dsize":…,"ino":…}` plus what ncdu needs to know.
fn object(
    out: &mut Vec<u8>,
    name: &[u8],
    meta: Option<&Metadata>,
    parent_dev: Option<u64>,
    left: Option<Left>,
) {
    out.extend_from_slice(b"{\"name\":");
    json_bytes(out, name);
    if let Some(m) = meta {
        let _ = write!(out, ",\"asize\":{},\"dsize\":{},\"ino\":{}", m.size, m.allocated_bytes(), m.ino);
        if parent_dev != Some(m.dev) {
            let _ = write!(out, ",\"dev\":{}", m.dev);
        }
        if !m.is_dir() && m.nlink > 1 {
            out.extend_from_slice(b",\"hlnkc\":true");
        }
        if !m.is_dir() && m.kind() != canopy_engine::FileKind::File {
            out.extend_from_slice(b",\"notreg\":true");
        }
    }
    match left {
        None => {}
        Some(Left::Pattern) => out.extend_from_slice(b",\"excluded\":\"pattern\""),
        Some(Left::OtherFs) => out.extend_from_slice(b",\"excluded\":\"otherfs\""),
        Some(Left::Unreadable) => out.extend_from_slice(b",\"read_error\":true"),
    }
    out.push(b'}');
}

/// A JSON string of raw name bytes, as ncdu writes them: quotes, backslashes and control
/// characters escaped, every other byte (UTF-8 or not) as it is.
fn json_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..0x20 | 0x7f => {
                let _ = write!(out, "\\u{b:04x}");
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(size: u64, dir: bool) -> Metadata {
        Metadata {
            mode: if dir { 0o40755 } else { 0o100644 },
            nlink: 1,
            uid: 0,
            gid: 0,
            size,
            blocks: size.div_ceil(512),
            blksize: 4096,
            ino: size + 1,
            dev: 9,
            rdev: 0,
            atime: Default::default(),
            mtime: Default::default(),
            ctime: Default::default(),
        }
    }

    fn assemble(export: &Export, files_per_dir: usize) -> String {
        let mut sub = DirExport::default();
        for i in 0..files_per_dir {
            export.entry(&mut sub, format!("f{i}").as_bytes(), Some(&meta(i as u64, false)), Some(9), None);
        }
        let sub = export.finish_dir(b"/r/sub", b"sub", Some(&meta(4096, true)), Some(9), sub);
        let mut root = DirExport::default();
        export.entry(&mut root, b"odd\n\"name\xff", Some(&meta(3, false)), Some(9), None);
        export.entry(&mut root, b"skipped", None, Some(9), Some(Left::Pattern));
        export.add_child(&mut root, sub);
        let root = export.finish_dir(b"/r", b"/r", Some(&meta(4096, true)), None, root);
        let mut out = Vec::new();
        export.write(&mut out, &root, 7).unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn spooled_and_in_memory_exports_are_the_same_json() {
        let tmp = tempfile::tempdir().unwrap();
        let spooled = assemble(&Export::spooled(tmp.path()).unwrap(), 5000);
        let memory = assemble(&Export::in_memory(), 5000);
        assert_eq!(spooled, memory);
        let v: serde_json::Value = serde_json::from_str(&memory.replace('\u{fffd}', "?")).unwrap();
        assert_eq!(v[0], 1);
        assert_eq!(v[1], 2);
        let root = v[3].as_array().unwrap();
        assert_eq!(root[0]["name"], "/r");
        assert_eq!(root[0]["dev"], 9);
        assert_eq!(root[1]["name"], "odd\n\"name?");
        assert_eq!(root[2]["excluded"], "pattern");
        let sub = root[3].as_array().unwrap();
        assert_eq!(sub[0]["name"], "sub");
        assert!(sub[0].get("dev").is_none(), "same device as the parent");
        let mut sizes: Vec<u64> = sub[1..].iter().map(|f| f["asize"].as_u64().unwrap()).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, (0..5000).collect::<Vec<_>>(), "every entry once, in any order");
    }
}
