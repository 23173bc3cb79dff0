//! One file operation on one member file.

use crate::ops::{FileOp, OpenFlags, Piece, Whence};
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
        FileOp::Close | FileOp::Rename { .. } | FileOp::Unlink | FileOp::Assemble { .. } => {
            unreachable!("path and assembly operations go through Host::apply")
        }
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

/// Renames `path` to `name` in the same directory and returns the new path.
pub(crate) fn rename_within(path: &Path, name: &[u8]) -> Result<std::path::PathBuf, Errno> {
    use std::os::unix::ffi::OsStrExt;
    if name.is_empty() || name.contains(&b'/') || name == b"." || name == b".." {
        return Err(Errno(libc::EINVAL));
    }
    let target = path.with_file_name(std::ffi::OsStr::from_bytes(name));
    std::fs::rename(path, &target).map_err(|e| Errno::of(&e))?;
    Ok(target)
}

/// Writes `pieces` at `file`'s offset, copying ranges from `source`; returns the bytes written.
pub(crate) fn assemble(file: &File, source: Option<&File>, pieces: &[Piece]) -> Result<i64, Errno> {
    const BUFFER: u64 = 1 << 20;
    let errno = |e: std::io::Error| Errno::of(&e);
    let mut out = file;
    let mut written: u64 = 0;
    let mut buffer = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Data(data) => {
                out.write_all(data).map_err(errno)?;
                written += data.len() as u64;
            }
            Piece::Copy { offset, len } => {
                let source = source.ok_or(Errno(libc::EBADF))?;
                let mut done = 0;
                while done < *len {
                    let step = (*len - done).min(BUFFER) as usize;
                    buffer.resize(step, 0);
                    source.read_exact_at(&mut buffer, offset + done).map_err(|e| match e.kind() {
                        std::io::ErrorKind::UnexpectedEof => Errno(libc::EIO),
                        _ => errno(e),
                    })?;
                    out.write_all(&buffer).map_err(errno)?;
                    done += step as u64;
                }
                written += len;
            }
        }
    }
    Ok(i64::try_from(written).unwrap_or(i64::MAX))
}
