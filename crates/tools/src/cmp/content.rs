//! `--content`: byte-by-byte comparison of two files of the same size, in one go or, for big files,
//! in chunks that any worker of any process compares.

use rustix::fd::{AsFd, OwnedFd};
use rustix::io::{Errno, pread};
use serde::{Deserialize, Serialize};
use std::ops::Range;

const BLOCK: usize = 1 << 20;

/// A worker's two read buffers.
#[derive(Default)]
pub struct Buffers {
    a: Vec<u8>,
    b: Vec<u8>,
}

/// Two open files being compared.
pub struct Pair {
    pub a: OwnedFd,
    pub b: OwnedFd,
    /// The path relative to the roots, for the report.
    pub path: Vec<u8>,
}

/// A byte range of two big files, as plain data any process can compare: the files by their path
/// relative to the roots (reopened from the roots on another process).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChunkPair {
    /// The comparison it belongs to, on the process that opened the files.
    pub id: u64,
    pub path: Vec<u8>,
    pub range: Range<u64>,
}

/// Whether `range` of the two files holds the same bytes.
pub fn equal(pair: &Pair, range: Range<u64>, buffers: &mut Buffers) -> Result<bool, Errno> {
    buffers.a.resize(BLOCK, 0);
    buffers.b.resize(BLOCK, 0);
    let mut pos = range.start;
    while pos < range.end {
        let want = (range.end - pos).min(BLOCK as u64) as usize;
        let a = read_full(pair.a.as_fd(), &mut buffers.a[..want], pos)?;
        let b = read_full(pair.b.as_fd(), &mut buffers.b[..want], pos)?;
        if a != b || buffers.a[..a] != buffers.b[..b] {
            return Ok(false);
        }
        if a < want {
            return Ok(true);
        }
        pos += want as u64;
    }
    Ok(true)
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_full(fd: rustix::fd::BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> Result<usize, Errno> {
    let mut done = 0;
    while done < buf.len() {
        match pread(fd, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(errno) => return Err(errno),
        }
    }
    Ok(done)
}
