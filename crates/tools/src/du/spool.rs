//! Bytes that would otherwise pile up in memory, kept in an unnamed file instead: the parts of the
//! ncdu export, and the lines of arguments waiting for their turn. What was written is referred to
//! by [`Piece`]s and copied out in order at the end.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes in memory or a range of the spool file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    Inline(Vec<u8>),
    Spooled { offset: u64, len: u64 },
}

pub struct Spool {
    file: File,
    len: u64,
}

impl Spool {
    /// A spool file in `dir` (gone when closed).
    pub fn create(dir: &Path) -> io::Result<Spool> {
        Ok(Spool { file: unnamed_file(dir)?, len: 0 })
    }

    /// Writes `bytes` at the end of the spool.
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<Piece> {
        let offset = self.len;
        self.file.write_all_at(bytes, offset)?;
        self.len += bytes.len() as u64;
        Ok(Piece::Spooled { offset, len: bytes.len() as u64 })
    }

    /// Copies a spooled range to `out`.
    fn copy(&self, offset: u64, len: u64, out: &mut impl Write) -> io::Result<()> {
        let mut buffer = vec![0u8; (len as usize).min(1 << 20)];
        let (mut at, end) = (offset, offset + len);
        while at < end {
            let n = ((end - at) as usize).min(buffer.len());
            self.file.read_exact_at(&mut buffer[..n], at)?;
            out.write_all(&buffer[..n])?;
            at += n as u64;
        }
        Ok(())
    }
}

/// Writes `pieces` in order; spooled ones are read back from `spool`.
pub fn write_pieces(pieces: &[Piece], spool: Option<&Spool>, out: &mut impl Write) -> io::Result<()> {
    for piece in pieces {
        match piece {
            Piece::Inline(bytes) => out.write_all(bytes)?,
            Piece::Spooled { offset, len } => {
                spool.ok_or_else(|| io::Error::other("no spool file"))?.copy(*offset, *len, out)?
            }
        }
    }
    Ok(())
}

/// A file with no name in `dir` (gone when closed); a named one removed at once where the file
/// system has no `O_TMPFILE`.
fn unnamed_file(dir: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags, openat};
    match openat(
        rustix::fs::CWD,
        dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    ) {
        Ok(fd) => Ok(File::from(fd)),
        Err(_) => {
            let path = dir.join(format!(".canopy-du-spool-{}", std::process::id()));
            let file = File::options().read(true).write(true).create_new(true).open(&path)?;
            std::fs::remove_file(&path)?;
            Ok(file)
        }
    }
}
