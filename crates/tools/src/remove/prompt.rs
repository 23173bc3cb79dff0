//! `rm`'s questions: asked on stderr one at a time (workers take turns), answered by a line on
//! stdin — yes when it starts with `y` or `Y`, as coreutils' `yesno` reads it in the C locale; end
//! of input is no.

use crate::common::quote;
use canopy_engine::{FileKind, Metadata};
use rustix::fd::BorrowedFd;
use rustix::fs::{Access, AtFlags};
use std::ffi::CStr;
use std::io::{BufRead, Write};
use std::sync::Mutex;

pub struct Prompter {
    tool: &'static str,
    /// `-i`: every file and directory; otherwise only write-protected ones (stdin a terminal).
    always: bool,
    /// Root may write anything: nothing is write-protected (coreutils' `can_write_any_file`).
    privileged: bool,
    turn: Mutex<()>,
}

impl Prompter {
    pub fn new(tool: &'static str, always: bool) -> Self {
        let privileged = rustix::process::geteuid().is_root();
        Prompter { tool, always, privileged, turn: Mutex::new(()) }
    }

    /// Asks `question` (without its `? `); true when the answer is yes.
    pub fn ask(&self, question: &str) -> bool {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "canopy {}: {question}? ", self.tool);
        let _ = stderr.flush();
        let mut answer = Vec::new();
        let _ = std::io::stdin().lock().read_until(b'\n', &mut answer);
        yes(&answer)
    }

    /// Whether an entry may go: asked when `-i` or when it is write-protected. `descend` asks to
    /// enter a directory that is not empty rather than to remove it.
    pub fn allows(
        &self,
        dir: Option<BorrowedFd<'_>>,
        name: &CStr,
        path: &[u8],
        meta: &Metadata,
        descend: bool,
    ) -> bool {
        let protected = meta.kind() != FileKind::Symlink && self.write_protected(dir, name);
        if !protected && !self.always {
            return true;
        }
        let protection = if protected { "write-protected " } else { "" };
        let question = if descend {
            format!("descend into {protection}directory {}", quote(path))
        } else {
            format!("remove {protection}{} {}", file_type(meta), quote(path))
        };
        self.ask(&question)
    }

    fn write_protected(&self, dir: Option<BorrowedFd<'_>>, name: &CStr) -> bool {
        if self.privileged {
            return false;
        }
        let result = match dir {
            Some(dir) => rustix::fs::accessat(dir, name, Access::WRITE_OK, AtFlags::EACCESS),
            None => rustix::fs::accessat(rustix::fs::CWD, name, Access::WRITE_OK, AtFlags::EACCESS),
        };
        result.is_err()
    }
}

/// coreutils' names for file types in questions.
fn file_type(meta: &Metadata) -> &'static str {
    match meta.kind() {
        FileKind::File if meta.size == 0 => "regular empty file",
        FileKind::File => "regular file",
        FileKind::Dir => "directory",
        FileKind::Symlink => "symbolic link",
        FileKind::Fifo => "fifo",
        FileKind::Socket => "socket",
        FileKind::CharDevice => "character special file",
        FileKind::BlockDevice => "block special file",
        _ => "weird file",
    }
}

/// An answer is yes when it starts with `y` or `Y`.
pub fn yes(answer: &[u8]) -> bool {
    matches!(answer.first(), Some(b'y' | b'Y'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn yes_is_a_leading_y() {
        for answer in [&b"y\n"[..], b"Y", b"yes\n", b"yup"] {
            assert!(super::yes(answer));
        }
        for answer in [&b""[..], b"n\n", b" y\n", b"\n", b"ja"] {
            assert!(!super::yes(answer));
        }
    }
}
