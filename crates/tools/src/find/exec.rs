//! `-exec`, `-execdir`, `-ok`, `-okdir`: commands run per entry or, with `{} +`, per batch of paths.
//! The `*dir` forms run in the entry's directory (entered with `fchdir` on its fd, so it works at any
//! depth; for a starting point, the directory part of its path) with `./NAME` in place of `{}`.
//!
//! As in GNU find, children run one at a time: the walk stays parallel, but while a child runs no
//! worker writes to stdout, and stdout is flushed before it starts — so a child's output never
//! lands in the middle of a line. Children get the `RLIMIT_NOFILE` find was started with, not the
//! raised one the walk uses.

use super::output::{Outputs, StdoutGate};
use super::visitor::Find;
use canopy_engine::sys::{open_path, original_nofile_limit};
use canopy_engine::{DirNode, Entry, Errno, errno_message};
use canopy_expr::Exec;
use canopy_util::path::split_parent;
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ffi::OsStr;
use std::io::{BufRead, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Batches are flushed when their arguments reach this size, well below Linux's ARG_MAX.
const BATCH_BYTES: usize = 128 * 1024;

pub struct ExecRunner {
    failed: AtomicBool,
    /// Held exclusively while a child runs (or `-ok` prompts); stdout writers hold it shared.
    gate: Arc<StdoutGate>,
    /// `{} +` actions whose command could not be started: reported once, not once per batch.
    unstartable: Mutex<Vec<usize>>,
}

impl ExecRunner {
    pub fn new(gate: Arc<StdoutGate>) -> Self {
        ExecRunner { failed: AtomicBool::new(false), gate, unstartable: Mutex::new(Vec::new()) }
    }

    /// Whether any `{} +` command failed (find then exits 1).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// `-exec … ;`: runs the command for one entry; its success is the action's value.
    pub fn run_one(&self, exec: &Exec, entry: &Entry<'_, ()>, outputs: &mut Outputs) -> bool {
        let (dir, target) = WorkDir::target(exec, entry);
        let argv: Vec<Vec<u8>> = exec.argv.iter().map(|a| replace_braces(a, &target)).collect();
        let _alone = self.gate.exclusive();
        outputs.flush_alone();
        if exec.confirm && !confirm(&argv[0], &target) {
            return false;
        }
        let dir_fd = match dir.as_ref().map(WorkDir::open).transpose() {
            Ok(fd) => fd,
            Err(()) => return false,
        };
        run(&argv, dir_fd.as_ref().map(AsFd::as_fd)).unwrap_or(false)
    }

    /// Runs a full `{} +` batch (after this worker's pending output).
    fn run_batch(&self, find: &Find<'_>, batch: Batch, outputs: Option<&mut Outputs>) {
        let canopy_expr::Action::Exec(exec) = &find.program.actions[batch.action] else { return };
        let _alone = self.gate.exclusive();
        if let Some(outputs) = outputs {
            outputs.flush_alone();
        }
        if self.unstartable.lock().unwrap_or_else(|e| e.into_inner()).contains(&batch.action) {
            return; // already reported; find's status is already 1
        }
        let mut argv: Vec<Vec<u8>> = exec.argv[..exec.argv.len() - 1].to_vec();
        argv.extend(batch.paths);
        let dir_fd = match batch.dir.as_ref().map(WorkDir::open).transpose() {
            Ok(fd) => fd,
            Err(()) => {
                self.failed.store(true, Ordering::Relaxed);
                return;
            }
        };
        match run(&argv, dir_fd.as_ref().map(AsFd::as_fd)) {
            Some(true) => {}
            Some(false) => self.failed.store(true, Ordering::Relaxed),
            None => {
                self.failed.store(true, Ordering::Relaxed);
                self.unstartable.lock().unwrap_or_else(|e| e.into_inner()).push(batch.action);
            }
        }
    }
}

/// GNU's prompt: `< COMMAND ... PATH > ? `, answered with a line starting with y or Y.
fn confirm(command: &[u8], path: &[u8]) -> bool {
    eprint!("< {} ... {} > ? ", String::from_utf8_lossy(command), String::from_utf8_lossy(path));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    answer.trim_start().starts_with(['y', 'Y'])
}

/// Runs `argv`, in directory `dir` if given; `None` if it could not be started (reported).
fn run(argv: &[Vec<u8>], dir: Option<BorrowedFd<'_>>) -> Option<bool> {
    let mut command = Command::new(OsStr::from_bytes(&argv[0]));
    command.args(argv[1..].iter().map(|a| OsStr::from_bytes(a)));
    let limit = original_nofile_limit();
    let dir = dir.map(|fd| fd.as_raw_fd());
    // SAFETY: fchdir and setrlimit are async-signal-safe system calls; the fd stays open until
    // spawn returns.
    unsafe {
        command.pre_exec(move || {
            if let Some(raw) = dir {
                rustix::process::fchdir(BorrowedFd::borrow_raw(raw))?;
            }
            rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)?;
            Ok(())
        });
    }
    match command.status() {
        Ok(status) => Some(status.success()),
        Err(e) => {
            let message = canopy_util::errors::io_error_message(&e);
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

/// Where an `-execdir` child runs.
#[derive(Clone)]
enum WorkDir {
    /// The directory the entry was found in.
    Node(Arc<DirNode<()>>),
    /// For a starting point, the directory part of its path (`a/b` runs in `a`; `/` in `/`).
    Path(Vec<u8>),
}

impl WorkDir {
    /// Where `exec` runs for `entry` (the caller's directory unless `-execdir`) and what replaces
    /// `{}` there.
    fn target(exec: &Exec, entry: &Entry<'_, ()>) -> (Option<WorkDir>, Vec<u8>) {
        if exec.in_dir {
            let (dir, name) = Self::of(entry);
            (Some(dir), name)
        } else {
            (None, entry.path())
        }
    }

    /// The directory and the `{}` replacement (`./NAME`) for `entry`.
    fn of(entry: &Entry<'_, ()>) -> (WorkDir, Vec<u8>) {
        if let Some(dir) = entry.dir() {
            let name = entry.name_cstr().to_bytes();
            return (WorkDir::Node(Arc::clone(dir)), [b"./".as_slice(), name].concat());
        }
        let path = entry.name_cstr().to_bytes();
        if !path.is_empty() && path.iter().all(|&b| b == b'/') {
            return (WorkDir::Path(b"/".to_vec()), b"/".to_vec());
        }
        let (parent, name) = split_parent(path);
        (WorkDir::Path(parent.to_vec()), [b"./".as_slice(), name].concat())
    }

    fn same(&self, other: &WorkDir) -> bool {
        match (self, other) {
            (WorkDir::Node(a), WorkDir::Node(b)) => Arc::ptr_eq(a, b),
            (WorkDir::Path(a), WorkDir::Path(b)) => a == b,
            _ => false,
        }
    }

    /// Opens it (reporting failure).
    fn open(&self) -> Result<OpenDir, ()> {
        let (path, opened) = match self {
            WorkDir::Node(dir) => (dir.path(), dir.open().map(OpenDir::Node)),
            WorkDir::Path(path) => (path.as_slice(), open_path(path, true).map(OpenDir::Path)),
        };
        opened.map_err(|errno: Errno| {
            crate::common::print_error(
                "find",
                format_args!("'{}': {}", String::from_utf8_lossy(path), errno_message(errno)),
            );
        })
    }
}

enum OpenDir {
    Node(canopy_engine::DirFd),
    Path(OwnedFd),
}

impl AsFd for OpenDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            OpenDir::Node(fd) => fd.as_fd(),
            OpenDir::Path(fd) => fd.as_fd(),
        }
    }
}

/// One worker's pending `{} +` batches, one per action.
#[derive(Default)]
pub struct Batches {
    pending: Vec<Batch>,
}

struct Batch {
    action: usize,
    /// The directory an `-execdir` batch runs in.
    dir: Option<WorkDir>,
    paths: Vec<Vec<u8>>,
    bytes: usize,
}

impl Batches {
    /// Adds `entry` to action `action`'s batch, first running the batch if it is full or (for
    /// `-execdir`) belongs to another directory.
    pub fn add(
        &mut self,
        find: &Find<'_>,
        action: usize,
        exec: &Exec,
        entry: &Entry<'_, ()>,
        outputs: &mut Outputs,
    ) {
        let (dir, target) = WorkDir::target(exec, entry);
        if let Some(i) = self.pending.iter().position(|b| b.action == action)
            && (!same_dir(&self.pending[i].dir, &dir) || self.pending[i].bytes + target.len() > BATCH_BYTES)
        {
            let full = self.pending.swap_remove(i);
            find.exec.run_batch(find, full, Some(outputs));
        }
        match self.pending.iter_mut().find(|b| b.action == action) {
            Some(batch) => {
                batch.bytes += target.len() + 1;
                batch.paths.push(target);
            }
            None => self.pending.push(Batch { action, dir, bytes: target.len() + 1, paths: vec![target] }),
        }
    }

    /// Runs what the workers left (after the walk, when all output before it has been written):
    /// their batches of one action (for `-execdir`, of one directory) joined, so the command runs
    /// as few times as its arguments fit, as GNU find runs it — not once per worker.
    pub fn flush_merged(workers: impl IntoIterator<Item = Batches>, find: &Find<'_>) {
        let mut merged: Vec<Batch> = Vec::new();
        for batch in workers.into_iter().flat_map(|batches| batches.pending) {
            match merged.iter().position(|m| m.action == batch.action && same_dir(&m.dir, &batch.dir)) {
                Some(i) if merged[i].bytes + batch.bytes <= BATCH_BYTES => {
                    merged[i].bytes += batch.bytes;
                    merged[i].paths.extend(batch.paths);
                }
                Some(i) => {
                    let full = std::mem::replace(&mut merged[i], batch);
                    find.exec.run_batch(find, full, None);
                }
                None => merged.push(batch),
            }
        }
        for batch in merged {
            find.exec.run_batch(find, batch, None);
        }
    }
}

/// Whether two batches run in the same place: the same directory (`-execdir`) or both none.
fn same_dir(a: &Option<WorkDir>, b: &Option<WorkDir>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same(b),
        (a, b) => a.is_none() && b.is_none(),
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

    #[test]
    fn starting_points_run_in_their_parent() {
        let of = |path: &std::ffi::CStr| {
            let entry = Entry::<()>::root(path, false);
            let (WorkDir::Path(dir), target) = WorkDir::of(&entry) else { panic!("a root runs in a path") };
            (String::from_utf8(dir).unwrap(), String::from_utf8(target).unwrap())
        };
        assert_eq!(of(c"/"), ("/".into(), "/".into()));
        assert_eq!(of(c"//"), ("/".into(), "/".into()));
        assert_eq!(of(c"x"), (".".into(), "./x".into()));
        assert_eq!(of(c"x/y/"), ("x".into(), "./y/".into()));
        assert_eq!(of(c"/usr"), ("/".into(), "./usr".into()));
    }
}
