//! The grep visitor: regular files that pass `--include`/`--exclude` are searched as engine jobs (so
//! any worker, or under MPI any rank, takes them), each opened relative to its directory;
//! directories that `--exclude-dir` names are not entered.

use super::fold::Folded;
use super::output::{Mode, Output, Show};
use super::pattern::Pattern;
use super::search::{FileSearch, Found};
use super::select::Selection;
use crate::common::print_error;
use canopy_engine::{
    Action, Cx, DistributedVisitor, Entry, Errno, ErrorKind, FileKind, Op, Visitor, WalkError, errno_message,
    polite,
};
use canopy_util::path::join_path;
use grep_searcher::{Searcher, SearcherBuilder};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode as FileMode, OFlags};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Grep {
    pub pattern: Pattern,
    pub show: Show,
    pub selection: Selection,
    pub output: Output,
    pub searcher: SearcherBuilder,
    /// `-s`: no messages about files that cannot be read.
    pub silent: bool,
    /// The walk started at an implicit `.` (`grep -r PATTERN`): names are printed without `./`.
    pub implicit_root: bool,
    /// `-R`: symlinks met inside the trees are followed.
    pub follow_all: bool,
    /// `-q` found a line: everything stops.
    pub done: AtomicBool,
}

/// One worker's state.
pub struct GrepState {
    searcher: Searcher,
    out: Vec<u8>,
    matches: Vec<(usize, usize)>,
    pub folded: Folded,
    /// Lines selected.
    pub selected: u64,
}

/// A file to search: its name in the directory the job was scheduled in, or a whole path for a
/// file given on the command line.
#[derive(Debug, Serialize, Deserialize)]
pub enum GrepJob {
    InDir(Vec<u8>),
    Root(Vec<u8>),
}

impl Grep {
    pub fn new_state(&self) -> GrepState {
        GrepState {
            searcher: self.searcher.build(),
            out: Vec::new(),
            matches: Vec::new(),
            folded: Folded::default(),
            selected: 0,
        }
    }

    /// The name a path is printed under.
    fn shown<'p>(&self, path: &'p [u8]) -> &'p [u8] {
        if self.implicit_root { path.strip_prefix(b"./").unwrap_or(path) } else { path }
    }

    /// Searches with `run` (a file or a stream) and records what was found under `name`.
    pub fn search(
        &self,
        state: &mut GrepState,
        name: &[u8],
        run: impl FnOnce(&Pattern, &mut Searcher, FileSearch<'_>) -> std::io::Result<Found>,
    ) -> std::io::Result<()> {
        let sink = FileSearch::new(
            &self.show,
            &self.pattern,
            name,
            &mut state.out,
            &mut state.folded,
            &mut state.matches,
        );
        let found = run(&self.pattern, &mut state.searcher, sink)?;
        state.selected += found.selected;
        if found.binary_matched && self.show.mode == Mode::Lines && !self.show.group {
            print_error("grep", format_args!("{}: binary file matches", String::from_utf8_lossy(name)));
        }
        self.output.file_done(&mut state.out);
        if self.show.mode == Mode::Quiet && found.selected > 0 {
            self.done.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    fn search_fd(&self, state: &mut GrepState, path: &[u8], fd: OwnedFd) -> Result<(), Errno> {
        let file = File::from(fd);
        let name = self.shown(path).to_vec();
        self.search(state, &name, |pattern, searcher, mut sink| {
            pattern.search_file(searcher, &file, &mut sink)?;
            Ok(sink.finish())
        })
        .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error))
    }

    /// Writes what a worker buffered.
    pub fn flush(&self, state: &mut GrepState) {
        self.output.write(&mut state.out);
    }

    /// How a failure reads, as grep words it: `FILE: reason`.
    pub fn report(&self, path: &[u8], errno: Errno) {
        if !self.silent {
            print_error(
                "grep",
                format_args!("{}: {}", String::from_utf8_lossy(self.shown(path)), errno_message(errno)),
            );
        }
    }
}

/// Opens a file for reading without following a symlink (unless `follow`, `-R`) or blocking on a
/// FIFO swapped in for it; anything that is not a regular file is passed over (`None`).
fn open_regular(dir: BorrowedFd<'_>, name: &[u8], follow: bool) -> Result<Option<OwnedFd>, Errno> {
    let name = CString::new(name).map_err(|_| Errno::INVAL)?;
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = match polite(|| rustix::fs::openat(dir, &name, flags, FileMode::empty())) {
        Ok(fd) => fd,
        // Swapped for a symlink since it was listed: not a file to search any more.
        Err(Errno::LOOP) => return Ok(None),
        Err(errno) => return Err(errno),
    };
    let is_file = rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode)
        == rustix::fs::FileType::RegularFile;
    Ok(is_file.then_some(fd))
}

/// Opens a file named on the command line: followed if a symlink, read whatever it is (a FIFO or
/// a device too, as grep reads them).
fn open_operand(path: &[u8]) -> Result<OwnedFd, Errno> {
    let path = CString::new(path).map_err(|_| Errno::INVAL)?;
    polite(|| rustix::fs::open(&path, OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY, FileMode::empty()))
}

impl Visitor for Grep {
    type State = GrepState;
    type DirData = ();
    type Job = GrepJob;

    fn new_state(&self) -> GrepState {
        Grep::new_state(self)
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, _state: &mut GrepState, entry: &Entry<'_, ()>) -> Action {
        if self.done.load(Ordering::Relaxed) {
            cx.quit();
            return Action::Prune;
        }
        match entry.kind() {
            FileKind::Dir if entry.is_root() => {
                return if self.selection.operand_dir(entry.name_cstr().to_bytes()) {
                    Action::Continue
                } else {
                    Action::Prune
                };
            }
            FileKind::Dir => {
                return if self.selection.dir(entry.file_name()) { Action::Continue } else { Action::Prune };
            }
            FileKind::File => {}
            // Named on the command line: read whatever it is.
            _ if entry.is_root() => {}
            // Symlinks met inside a tree are not followed (grep -r); devices, FIFOs and sockets
            // are not read.
            _ => return Action::Continue,
        }
        let admitted = if entry.is_root() {
            self.selection.operand_file(entry.name_cstr().to_bytes())
        } else {
            self.selection.file(entry.file_name())
        };
        if !admitted {
            return Action::Continue;
        }
        match entry.dir() {
            Some(dir) => cx.spawn_in(dir, GrepJob::InDir(entry.name_cstr().to_bytes().to_vec())),
            None => cx.spawn(GrepJob::Root(entry.path())),
        }
        Action::Continue
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, state: &mut GrepState, job: GrepJob) {
        if self.done.load(Ordering::Relaxed) {
            cx.quit();
            return;
        }
        let (path, opened) = match job {
            GrepJob::Root(path) => {
                let opened = open_operand(&path).map(Some);
                (path, opened)
            }
            GrepJob::InDir(name) => {
                let Some(dir) = cx.job_dir().cloned() else {
                    return;
                };
                let path = join_path(dir.path(), &name);
                let opened = dir.open().and_then(|fd| open_regular(fd.as_fd(), &name, self.follow_all));
                (path, opened)
            }
        };
        match opened.and_then(|fd| fd.map_or(Ok(()), |fd| self.search_fd(state, &path, fd))) {
            Ok(()) => {}
            Err(errno) => cx.report(WalkError::io(path, Op::Tool("read"), errno)),
        }
        if self.done.load(Ordering::Relaxed) {
            cx.quit();
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        match error.kind {
            ErrorKind::Io { errno, .. } => self.report(&error.path, errno),
            ErrorKind::Loop { .. } if !self.silent => print_error("grep", error),
            ErrorKind::Loop { .. } => {}
        }
        true
    }
}

impl DistributedVisitor for Grep {}
