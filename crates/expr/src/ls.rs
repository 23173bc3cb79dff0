//! `-ls`: `ls -dils` lines in GNU find's layout. Column widths start at GNU's minimums and grow as
//! wider values appear, as GNU's do (per worker here).

use crate::clock::{local_tm, strftime};
use crate::ids::{group_name, user_name};
use crate::printf::{mode_string, read_link};
use canopy_engine::{Entry, Errno, FileKind, Timestamp};

/// Column widths carried from line to line.
#[derive(Clone, Debug)]
pub struct LsWidths {
    inode: usize,
    blocks: usize,
    owner: usize,
    group: usize,
    major: usize,
    minor: usize,
    size: usize,
}

impl Default for LsWidths {
    fn default() -> Self {
        LsWidths { inode: 9, blocks: 6, owner: 8, group: 8, major: 3, minor: 3, size: 8 }
    }
}

const SIX_MONTHS: i64 = 6 * 30 * 24 * 60 * 60;

impl LsWidths {
    /// Appends the `-ls` line for `entry` (with its newline) to `out`; `now` decides between showing
    /// the time of day or the year.
    pub fn render<D>(
        &mut self,
        entry: &Entry<'_, D>,
        now: Timestamp,
        out: &mut Vec<u8>,
    ) -> Result<(), Errno> {
        let meta = *entry.metadata()?;
        pad_right(out, &meta.ino.to_string(), &mut self.inode);
        out.push(b' ');
        pad_right(out, &(meta.blocks * 512).div_ceil(1024).to_string(), &mut self.blocks);
        out.push(b' ');
        out.extend_from_slice(mode_string(meta.mode).as_bytes());
        out.extend_from_slice(format!(" {:>3} ", meta.nlink).as_bytes());
        match user_name(meta.uid) {
            Some(name) => {
                pad_left(out, &name, &mut self.owner);
                out.push(b' ');
            }
            // GNU prints unknown owners as "%-8lu " and counts the space into the width.
            None => {
                let text = format!("{:<8} ", meta.uid);
                self.owner = self.owner.max(text.len());
                out.extend_from_slice(text.as_bytes());
            }
        }
        match group_name(meta.gid) {
            Some(name) => pad_left(out, &name, &mut self.group),
            None => pad_left(out, meta.gid.to_string().as_bytes(), &mut self.group),
        }
        out.push(b' ');

        if matches!(meta.kind(), FileKind::CharDevice | FileKind::BlockDevice) {
            pad_right(out, &rustix::fs::major(meta.rdev).to_string(), &mut self.major);
            out.extend_from_slice(b", ");
            pad_right(out, &rustix::fs::minor(meta.rdev).to_string(), &mut self.minor);
        } else {
            pad_right(out, &meta.size.to_string(), &mut self.size);
        }
        out.push(b' ');
        let mtime = meta.mtime.sec;
        let recent = now.sec - SIX_MONTHS <= mtime && mtime <= now.sec + 3600;
        match local_tm(mtime) {
            Some(tm) => {
                out.extend_from_slice(&strftime(&tm, if recent { "%b %e %H:%M" } else { "%b %e  %Y" }))
            }
            None => out.extend_from_slice(format!("{mtime:>12}").as_bytes()),
        }
        out.push(b' ');
        quote_name(&entry.path(), out);
        if meta.kind() == FileKind::Symlink
            && let Ok(target) = read_link(entry)
        {
            out.extend_from_slice(b" -> ");
            quote_name(&target, out);
        }
        out.push(b'\n');
        Ok(())
    }
}

fn pad_right(out: &mut Vec<u8>, value: &str, width: &mut usize) {
    *width = (*width).max(value.len());
    out.extend(std::iter::repeat_n(b' ', *width - value.len()));
    out.extend_from_slice(value.as_bytes());
}

fn pad_left(out: &mut Vec<u8>, value: &[u8], width: &mut usize) {
    *width = (*width).max(value.len());
    out.extend_from_slice(value);
    out.extend(std::iter::repeat_n(b' ', *width - value.len()));
}

/// GNU's quoting for `-ls` names: C escapes for control characters, space and quote, octal for
/// every byte outside printable ASCII.
fn quote_name(name: &[u8], out: &mut Vec<u8>) {
    for &c in name {
        match c {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            8 => out.extend_from_slice(b"\\b"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            12 => out.extend_from_slice(b"\\f"),
            b' ' => out.extend_from_slice(b"\\ "),
            b'"' => out.extend_from_slice(b"\\\""),
            0x21..=0x7e => out.push(c),
            _ => out.extend_from_slice(format!("\\{c:03o}").as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let mut out = Vec::new();
        quote_name(b"a b\n\xc3\xa9\"", &mut out);
        assert_eq!(out, b"a\\ b\\n\\303\\251\\\"");
    }
}
