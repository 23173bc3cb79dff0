//! Moving bytes. `copy_file_range` where the kernel can do it (no trip through user space, and a
//! reflink on file systems that share extents), `pread`/`pwrite` where it cannot; holes are found
//! with `SEEK_DATA`/`SEEK_HOLE` and skipped, so sparse files stay sparse. With `--verify` the bytes
//! go through user space: the source is hashed (xxh3) as it is read, the destination is read back
//! and hashed, and the two must agree.

use rustix::fd::BorrowedFd;
use rustix::fs::{SeekFrom, copy_file_range, seek};
use rustix::io::{Errno, pread, pwrite};
use std::ops::Range;
use xxhash_rust::xxh3::Xxh3;

/// Bytes moved per `pread`/`pwrite`.
const BUFFER: usize = 1 << 20;
/// Bytes asked of one `copy_file_range` call.
const OFFLOAD_STEP: u64 = 1 << 30;

/// Why a range could not be copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyError {
    Read(Errno),
    Write(Errno),
    /// The source ended before its size said: it changed during the copy.
    Shrank,
    /// The destination read back differs from what was read from the source.
    Mismatch,
}

/// A worker's reusable copy state: its buffer and the source devices on which the kernel refused
/// `copy_file_range` (so it is not asked again).
#[derive(Default)]
pub struct Scratch {
    buf: Vec<u8>,
    no_offload: Vec<u64>,
}

impl Scratch {
    fn buffer(&mut self) -> &mut [u8] {
        if self.buf.len() < BUFFER {
            self.buf.resize(BUFFER, 0);
        }
        &mut self.buf
    }
}

/// What to copy: a byte range of a file on device `dev`, its holes to be skipped if `sparse`;
/// `offload`: the kernel may copy it (`copy_file_range`, which may share blocks — not with cp's
/// `--reflink=never`).
pub struct Span {
    pub range: Range<u64>,
    pub sparse: bool,
    pub verify: bool,
    pub offload: bool,
    pub dev: u64,
}

/// Copies `span` of `src` to the same offsets of `dst`.
pub fn copy_span(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    span: &Span,
    scratch: &mut Scratch,
) -> Result<(), CopyError> {
    let mut pos = span.range.start;
    while pos < span.range.end {
        let segment = if span.sparse {
            match next_data(src, pos, span.range.end)? {
                Some(segment) => segment,
                None => return Ok(()),
            }
        } else {
            pos..span.range.end
        };
        pos = segment.end;
        if span.verify {
            let read = copy_through(src, dst, segment.clone(), scratch)?;
            if hash_of(dst, segment, scratch)? != read {
                return Err(CopyError::Mismatch);
            }
        } else if !span.offload
            || scratch.no_offload.contains(&span.dev)
            || !offload(src, dst, segment.clone())?
        {
            if span.offload && !scratch.no_offload.contains(&span.dev) {
                scratch.no_offload.push(span.dev);
            }
            copy_through(src, dst, segment, scratch)?;
        }
    }
    Ok(())
}

/// The next run of data at or after `pos` and before `end`, or `None` if only holes remain.
fn next_data(src: BorrowedFd<'_>, pos: u64, end: u64) -> Result<Option<Range<u64>>, CopyError> {
    let start = match seek(src, SeekFrom::Data(pos)) {
        Ok(start) => start,
        Err(Errno::NXIO) => return Ok(None),
        Err(errno) => return Err(CopyError::Read(errno)),
    };
    if start >= end {
        return Ok(None);
    }
    let hole = seek(src, SeekFrom::Hole(start)).map_err(CopyError::Read)?;
    Ok(Some(start..hole.min(end)))
}

/// Copies in the kernel. `Ok(false)`: the kernel cannot do it between these files (different file
/// system types, no support) and nothing was copied.
fn offload(src: BorrowedFd<'_>, dst: BorrowedFd<'_>, range: Range<u64>) -> Result<bool, CopyError> {
    let (mut from, mut to) = (range.start, range.start);
    while from < range.end {
        let step = (range.end - from).min(OFFLOAD_STEP) as usize;
        match copy_file_range(src, Some(&mut from), dst, Some(&mut to), step) {
            Ok(0) => return Err(CopyError::Shrank),
            Ok(_) => {}
            Err(Errno::XDEV | Errno::NOSYS | Errno::OPNOTSUPP | Errno::INVAL) if from == range.start => {
                return Ok(false);
            }
            Err(errno @ (Errno::NOSPC | Errno::DQUOT | Errno::FBIG | Errno::ROFS)) => {
                return Err(CopyError::Write(errno));
            }
            Err(errno) => return Err(CopyError::Read(errno)),
        }
    }
    Ok(true)
}

/// Copies through the worker's buffer; returns the xxh3 hash of the bytes read.
fn copy_through(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    range: Range<u64>,
    scratch: &mut Scratch,
) -> Result<u64, CopyError> {
    let mut hasher = Xxh3::new();
    let buf = scratch.buffer();
    let mut pos = range.start;
    while pos < range.end {
        let want = (range.end - pos).min(buf.len() as u64) as usize;
        let n = match pread(src, &mut buf[..want], pos) {
            Ok(0) => return Err(CopyError::Shrank),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(errno) => return Err(CopyError::Read(errno)),
        };
        hasher.update(&buf[..n]);
        let mut written = 0;
        while written < n {
            match pwrite(dst, &buf[written..n], pos + written as u64) {
                Ok(w) => written += w,
                Err(Errno::INTR) => {}
                Err(errno) => return Err(CopyError::Write(errno)),
            }
        }
        pos += n as u64;
    }
    Ok(hasher.digest())
}

/// The xxh3 hash of `range` of `fd` (the destination read back, for `--verify`).
pub fn hash_of(fd: BorrowedFd<'_>, range: Range<u64>, scratch: &mut Scratch) -> Result<u64, CopyError> {
    let mut hasher = Xxh3::new();
    let buf = scratch.buffer();
    let mut pos = range.start;
    while pos < range.end {
        let want = (range.end - pos).min(buf.len() as u64) as usize;
        match pread(fd, &mut buf[..want], pos) {
            Ok(0) => return Err(CopyError::Mismatch),
            Ok(n) => {
                hasher.update(&buf[..n]);
                pos += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(errno) => return Err(CopyError::Read(errno)),
        }
    }
    Ok(hasher.digest())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::AsFd;
    use std::os::unix::fs::MetadataExt;

    fn copy(src: &std::fs::File, dst: &std::fs::File, size: u64, sparse: bool, verify: bool) {
        dst.set_len(size).unwrap();
        let span = Span { range: 0..size, sparse, verify, offload: true, dev: 0 };
        copy_span(src.as_fd(), dst.as_fd(), &span, &mut Scratch::default()).unwrap();
    }

    #[test]
    fn sparse_files_stay_sparse_and_equal() {
        let tmp = tempfile::tempdir().unwrap();
        let src_path = tmp.path().join("src");
        let src = std::fs::File::create(&src_path).unwrap();
        let size = 64u64 << 20;
        src.set_len(size).unwrap();
        for offset in [0u64, 5 << 20, size - 4096] {
            rustix::io::pwrite(&src, &[7u8; 4096], offset).unwrap();
        }
        let src = std::fs::File::open(&src_path).unwrap();
        for verify in [false, true] {
            let dst_path = tmp.path().join(format!("dst{verify}"));
            let dst = std::fs::File::options()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&dst_path)
                .unwrap();
            copy(&src, &dst, size, true, verify);
            assert_eq!(std::fs::read(&src_path).unwrap(), std::fs::read(&dst_path).unwrap());
            let blocks = std::fs::metadata(&dst_path).unwrap().blocks();
            assert!(blocks * 512 < 1 << 20, "holes kept: {blocks} blocks, verify {verify}");
        }
    }

    #[test]
    fn dense_copy_through_both_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(tmp.path().join("src"), &data).unwrap();
        let src = std::fs::File::open(tmp.path().join("src")).unwrap();
        for verify in [false, true] {
            let path = tmp.path().join(format!("dst{verify}"));
            let dst = std::fs::File::options()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            copy(&src, &dst, data.len() as u64, false, verify);
            assert_eq!(std::fs::read(&path).unwrap(), data);
        }
    }

    #[test]
    fn a_source_shorter_than_its_size_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("src"), b"short").unwrap();
        let src = std::fs::File::open(tmp.path().join("src")).unwrap();
        let dst = std::fs::File::create(tmp.path().join("dst")).unwrap();
        for verify in [false, true] {
            let span = Span { range: 0..100, sparse: false, verify, offload: true, dev: 0 };
            let result = copy_span(src.as_fd(), dst.as_fd(), &span, &mut Scratch::default());
            assert_eq!(result, Err(CopyError::Shrank));
        }
    }
}
