//! cp's marker of a copy in progress: a small file in the copy's top directory, under a name of
//! canopy's temporaries (so no walk copies it and `sync --delete` removes a stray one), naming the
//! source by path and identity. It is made before anything is copied — a new top directory is
//! made aside with its marker and renamed into place, so it never exists without one — and removed
//! once the copy completed without a failure, just before the directory gets its times.
//!
//! Rerunning the same `cp` after an interruption finds the marker: the copy resumes in that
//! directory (instead of nesting `DEST/SRC` in it, as cp does into an existing directory), and what
//! the interrupted run completed — renamed into place after the marker's time — stays.

use super::temp::discard;
use canopy_engine::{Metadata, Timestamp};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags, openat};
use rustix::io::Errno;
use std::ffi::CStr;
use std::io::{Read, Write};

/// The marker's name: a temporary name (`.canopy-tmp-` and 16 hex digits) of its own.
pub const NAME: &CStr = c".canopy-tmp-c0b7c09710b7c091";

/// What a marker says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// The source's absolute path when the copy began.
    pub source: Vec<u8>,
    /// The source's (device, inode).
    pub id: (u64, u64),
    /// When the marker was made (its modification time, on the destination's clock).
    pub since: Timestamp,
}

impl Marker {
    /// Whether this marker is that of a copy of `source` (absolute path `path`, metadata `meta`).
    pub fn names(&self, path: &[u8], meta: &Metadata) -> bool {
        self.id == meta.file_id() || self.source == path
    }
}

fn content(source: &[u8], id: (u64, u64)) -> Vec<u8> {
    let mut text = b"canopy cp: copy in progress; rerun the same command to finish it.\nsource: ".to_vec();
    text.extend_from_slice(source);
    text.extend_from_slice(format!("\nid: {}:{}\n", id.0, id.1).as_bytes());
    text
}

/// Writes the marker of a copy of `source` (absolute path) into the directory `dir`, replacing any.
pub fn write(dir: impl AsFd, source: &[u8], id: (u64, u64)) -> Result<(), Errno> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(&dir, NAME, flags, Mode::from_raw_mode(0o600))?;
    std::fs::File::from(fd)
        .write_all(&content(source, id))
        .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))
}

/// The marker in `dir`, if there is one that reads as a marker.
pub fn read(dir: impl AsFd) -> Result<Option<Marker>, Errno> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd: OwnedFd = match openat(&dir, NAME, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(errno) => return Err(errno),
    };
    let since = rustix::fs::fstat(&fd)?;
    let since = Timestamp { sec: since.st_mtime, nsec: since.st_mtime_nsec as u32 };
    let mut text = Vec::new();
    std::fs::File::from(fd)
        .take(1 << 16)
        .read_to_end(&mut text)
        .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))?;
    let field =
        |key: &[u8]| text.split(|&b| b == b'\n').find_map(|line| line.strip_prefix(key)).map(<[u8]>::to_vec);
    let id = field(b"id: ").and_then(|id| {
        let (dev, ino) = std::str::from_utf8(&id).ok()?.split_once(':')?;
        Some((dev.parse().ok()?, ino.parse().ok()?))
    });
    Ok(match (field(b"source: "), id) {
        (Some(source), Some(id)) => Some(Marker { source, id, since }),
        _ => None,
    })
}

/// Removes the marker from `dir` (the copy completed).
pub fn remove(dir: impl AsFd) {
    discard(dir, NAME);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_read_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::File::open(tmp.path()).unwrap();
        assert_eq!(read(&dir).unwrap(), None);
        write(&dir, b"/data/src", (7, 42)).unwrap();
        let marker = read(&dir).unwrap().expect("a marker");
        assert_eq!((marker.source.as_slice(), marker.id), (&b"/data/src"[..], (7, 42)));
        assert!(canopy_util::temp_name::is_temp_name(NAME.to_bytes()), "never copied, removed by sync");
        remove(&dir);
        assert_eq!(read(&dir).unwrap(), None);
    }
}
