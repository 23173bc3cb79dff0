//! Errors are values: every failure names the path, the operation and the errno, is reported to the
//! visitor as it happens, and counts toward the exit status. The walk never stops for one.

use rustix::io::Errno;
use std::fmt;

/// The operation that failed, for messages and statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Opening a directory (`openat`).
    OpenDir,
    /// Reading a directory (`getdents64`).
    ReadDir,
    /// Reading an entry's metadata (`statx`).
    Stat,
    /// Anything a tool does with an entry, named by its verb ("delete", "copy"…): shown as
    /// `cannot delete 'path': …`.
    Tool(&'static str),
}

/// Why an entry could not be handled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A system call failed.
    Io { op: Op, errno: Errno },
    /// Following symlinks (`-L`) led back into an ancestor: `ancestor` is the directory it loops to.
    Loop { ancestor: Vec<u8> },
}

/// One failure during a walk: the entry's path (bytes, possibly longer than `PATH_MAX`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkError {
    pub path: Vec<u8>,
    pub kind: ErrorKind,
}

impl WalkError {
    pub fn io(path: Vec<u8>, op: Op, errno: Errno) -> Self {
        WalkError { path, kind: ErrorKind::Io { op, errno } }
    }

    /// The errno, when the failure was a system call.
    pub fn errno(&self) -> Option<Errno> {
        match self.kind {
            ErrorKind::Io { errno, .. } => Some(errno),
            ErrorKind::Loop { .. } => None,
        }
    }
}

impl fmt::Display for WalkError {
    /// GNU find's wording: `'path': Permission denied` (C-locale quotes; bytes shown lossily).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = String::from_utf8_lossy(&self.path);
        match &self.kind {
            ErrorKind::Io { op: Op::Tool(verb), errno } => {
                write!(f, "cannot {verb} '{path}': {}", errno_message(*errno))
            }
            ErrorKind::Io { errno, .. } => write!(f, "'{path}': {}", errno_message(*errno)),
            ErrorKind::Loop { ancestor } => write!(
                f,
                "File system loop detected; '{path}' is part of the same file system loop as '{}'.",
                String::from_utf8_lossy(ancestor)
            ),
        }
    }
}

/// The C library's text for an errno, without Rust's " (os error N)" suffix.
pub fn errno_message(errno: Errno) -> String {
    canopy_util::errors::errno_message(errno.raw_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_matches_gnu_wording() {
        let e = WalkError::io(b"/x/y".to_vec(), Op::OpenDir, Errno::ACCESS);
        assert_eq!(e.to_string(), "'/x/y': Permission denied");
        assert_eq!(errno_message(Errno::NOENT), "No such file or directory");
    }
}
