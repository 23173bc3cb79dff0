//! `-exec`, `-execdir`, `-ok`, `-okdir`: commands run per entry or, with `{} +`, per batch of paths.
//! The `*dir` forms run in the entry's directory (entered with `fchdir` on its fd, so it works at any
//! depth) with `./NAME` in place of `{}`.

use super::visitor::Find;
use canopy_engine::{DirNode, Entry};
use canopy_expr::Exec;
use rustix::fd::{AsFd, AsRawFd, BorrowedFd};
use std::ffi::OsStr;
use std::io::{BufRead, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Batches are flushed when their arguments reach this size, well below Linux's ARG_MAX.
const BATCH_BYTES: usize = 128 * 1024;

#[derive(Default)]
pub struct ExecRunner {
    failed: AtomicBool,
    /// `-ok` prompts and reads stdin one at a time.
    prompt: Mutex<()>,
}

impl ExecRunner {
    /// Whether any `{} +` command failed (find then exits 1).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// `-exec … ;`: runs the command for one entry; its success is the action's value.
    pub fn run_one(&self, exec: &Exec, entry: &Entry<'_, ()>) -> bool {
        let target = if exec.in_dir { dot_slash(entry) } else { entry.path() };
        let argv: Vec<Vec<u8>> = exec.argv.iter().map(|a| replace_braces(a, &target)).collect();
        if exec.confirm && !self.confirm(&argv[0], &target) {
            return false;
        }
        let dir = if exec.in_dir { entry.dir_fd() } else { None };
        run(&argv, dir).unwrap_or(false)
    }

    /// GNU's prompt: `< COMMAND ... PATH > ? `, answered with a line starting with y or Y.
    fn confirm(&self, command: &[u8], path: &[u8]) -> bool {
        let _one_at_a_time = self.prompt.lock().unwrap_or_else(|e| e.into_inner());
        eprint!("< {} ... {} > ? ", String::from_utf8_lossy(command), String::from_utf8_lossy(path));
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        answer.trim_start().starts_with(['y', 'Y'])
    }
}

/// Runs `argv`, in directory `dir` if given; `None` if it could not be started.
fn run(argv: &[Vec<u8>], dir: Option<BorrowedFd<'_>>) -> Option<bool> {
    let mut command = Command::new(OsStr::from_bytes(&argv[0]));
    command.args(argv[1..].iter().map(|a| OsStr::from_bytes(a)));
    if let Some(fd) = dir {
        let raw = fd.as_raw_fd();
        // SAFETY: fchdir is async-signal-safe; the fd stays open until spawn returns.
        unsafe {
            command
                .pre_exec(move || rustix::process::fchdir(BorrowedFd::borrow_raw(raw)).map_err(Into::into));
        }
    }
    match command.status() {
        Ok(status) => Some(status.success()),
        Err(e) => {
            let message = crate::common::io_error_message(&e);
            crate::common::print_error(
                "find",
                format_args!("'{}': {message}", String::from_utf8_lossy(&argv[0])),
            );

            None
        }
    }
}

fn replace_braces(arg: &[u8], target: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(i) = rest.windows(2).position(|w| w == b"{}") {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(target);
        rest = &rest[i + 2..];
    }
    out.extend_from_slice(rest);
    out
}

/// `./NAME` for the `*dir` forms (for a root, its last component).
fn dot_slash(entry: &Entry<'_, ()>) -> Vec<u8> {
    let name = if entry.is_root() { entry.file_name() } else { entry.name_cstr().to_bytes() };
    if name.starts_with(b"/") { name.to_vec() } else { [b"./".as_slice(), name].concat() }
}

/// One worker's pending `{} +` batches, one per action.
#[derive(Default)]
pub struct Batches {
    pending: Vec<Batch>,
}

struct Batch {
    action: usize,
    /// The directory the `-execdir` batch runs in.
    dir: Option<Arc<DirNode<()>>>,
    paths: Vec<Vec<u8>>,
    bytes: usize,
}

impl Batches {
    pub fn add(&mut self, find: &Find<'_>, action: usize, exec: &Exec, entry: &Entry<'_, ()>) {
        let dir = if exec.in_dir { entry.dir().cloned() } else { None };
        let target = if exec.in_dir { dot_slash(entry) } else { entry.path() };
        let position = self.pending.iter().position(|b| b.action == action);
        if let Some(i) = position {
            let same_dir = match (&self.pending[i].dir, &dir) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            };
            if !same_dir || self.pending[i].bytes + target.len() > BATCH_BYTES {
                let full = self.pending.swap_remove(i);
                full.run(find);
            }
        }
        match self.pending.iter_mut().find(|b| b.action == action) {
            Some(batch) => {
                batch.bytes += target.len() + 1;
                batch.paths.push(target);
            }
            None => self.pending.push(Batch { action, dir, bytes: target.len() + 1, paths: vec![target] }),
        }
    }

    pub fn flush_all(&mut self, find: &Find<'_>) {
        for batch in self.pending.drain(..) {
            batch.run(find);
        }
    }
}

impl Batch {
    fn run(self, find: &Find<'_>) {
        let canopy_expr::Action::Exec(exec) = &find.program.actions[self.action] else { return };
        let mut argv: Vec<Vec<u8>> = exec.argv[..exec.argv.len() - 1].to_vec();
        argv.extend(self.paths);
        let dir_fd = match &self.dir {
            Some(dir) => match dir.open() {
                Ok(fd) => Some(fd),
                Err(errno) => {
                    crate::common::print_error(
                        "find",
                        format_args!(
                            "'{}': {}",
                            String::from_utf8_lossy(dir.path()),
                            canopy_engine::errno_message(errno)
                        ),
                    );
                    find.exec.failed.store(true, Ordering::Relaxed);
                    return;
                }
            },
            None => None,
        };
        if run(&argv, dir_fd.as_ref().map(AsFd::as_fd)) != Some(true) {
            find.exec.failed.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_are_replaced_everywhere() {
        assert_eq!(replace_braces(b"x{}y{}", b"P"), b"xPyP");
        assert_eq!(replace_braces(b"{", b"P"), b"{");
    }
}
