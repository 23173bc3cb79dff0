//! One file operation on one member file.

use crate::ops::{FileOp, OpenFlags, Whence};
use crate::status::Errno;
use crate::value::{FileStat, Value};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::IntoRawFd;
use std::path::Path;

pub(crate) fn open(path: &Path, flags: OpenFlags, mode: u32) -> Result<File, Errno> {
    OpenOptions::new()
        .read(flags.readable())
        .write(flags.writable() && !flags.contains(OpenFlags::APPEND))
        .append(flags.contains(OpenFlags::APPEND))
        .create(flags.contains(OpenFlags::CREAT))
        .truncate(flags.contains(OpenFlags::TRUNC))
        .mode(mode)
        .open(path)
        .map_err(|e| Errno::of(&e))
}

/// Applies `op` (anything but close) and returns the member's status and data.
pub(crate) fn apply(file: &mut File, op: &FileOp) -> (Result<i64, Errno>, Option<Value>) {
    let errno = |e: std::io::Error| Errno::of(&e);
    let length = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    match op {
        FileOp::Read { len } => {
            let mut data = Vec::new();
            match file.take(*len).read_to_end(&mut data) {
                Ok(n) => (Ok(length(n)), Some(Value::Bytes(data))),
                Err(e) => (Err(errno(e)), None),
            }
        }
        FileOp::Pread { len, offset } => match read_at(file, *len, *offset) {
            Ok(data) => (Ok(length(data.len())), Some(Value::Bytes(data))),
            Err(e) => (Err(errno(e)), None),
        },
        FileOp::Write { data } => (file.write_all(data).map(|()| length(data.len())).map_err(errno), None),
        FileOp::Pwrite { data, offset } => {
            (file.write_all_at(data, *offset).map(|()| length(data.len())).map_err(errno), None)
        }
        FileOp::Lseek { offset, whence } => {
            let target = match (whence, u64::try_from(*offset)) {
                (Whence::Set, Ok(offset)) => SeekFrom::Start(offset),
                (Whence::Set, Err(_)) => return (Err(Errno(libc::EINVAL)), None),
                (Whence::Cur, _) => SeekFrom::Current(*offset),
                (Whence::End, _) => SeekFrom::End(*offset),
            };
            (file.seek(target).map(|pos| i64::try_from(pos).unwrap_or(i64::MAX)).map_err(errno), None)
        }
        FileOp::Fstat => match file.metadata() {
            Ok(meta) => (Ok(0), Some(Value::Stat(FileStat::from_metadata(&meta)))),
            Err(e) => (Err(errno(e)), None),
        },
        FileOp::Fsync => (file.sync_all().map(|()| 0).map_err(errno), None),
        FileOp::Ftruncate { len } => (file.set_len(*len).map(|()| 0).map_err(errno), None),
        FileOp::Close => unreachable!("close consumes the file: see close()"),
    }
}

/// `pread` until `len` bytes or end of file. The buffer grows with the data (std's `read_to_end`), so asking
/// for "everything" (`len = u64::MAX`) costs what the file holds, not a large up-front allocation.
fn read_at(file: &File, len: u64, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    PositionedReader { file, offset }.take(len).read_to_end(&mut data)?;
    Ok(data)
}

/// Reads a file from a given offset with `pread`, leaving the file's own offset alone.
struct PositionedReader<'a> {
    file: &'a File,
    offset: u64,
}

impl Read for PositionedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// Closes the file and reports close's own error (which `File`'s drop would ignore).
pub(crate) fn close(file: File) -> Result<i64, Errno> {
    let fd = file.into_raw_fd();
    // SAFETY: `fd` came from into_raw_fd, so we own it and close it exactly once.
    if unsafe { libc::close(fd) } == 0 { Ok(0) } else { Err(Errno::of(&std::io::Error::last_os_error())) }
}
