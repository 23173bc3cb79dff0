//! The grep visitor: regular files whose name passes `--glob` are searched as engine jobs (so any
//! worker, or under MPI any rank, takes them), each opened relative to its directory.

use super::fold::{Folded, Key};
use super::matcher::Pattern;
use super::output::Style;
use super::search::{Found, Want, search_file};
use canopy_engine::output::{OutBuf, Sink};
use canopy_engine::{Action, Cx, Entry, Errno, FileKind, Op, Visitor, WalkError, join_path};
use globset::GlobSet;
use grep_searcher::Searcher;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::fs::File;
use std::sync::Arc;

/// Which files are searched, besides regular files: none is skipped unless it fails `include`.
pub struct Selection {
    /// Name globs a file must match (none: every file).
    pub include: Option<GlobSet>,
    /// Name globs that exclude a file.
    pub exclude: Option<GlobSet>,
}

impl Selection {
    fn admits(&self, name: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        self.include.as_ref().is_none_or(|g| g.is_match(name.as_ref()))
            && self.exclude.as_ref().is_none_or(|g| !g.is_match(name.as_ref()))
    }
}

pub struct Grep {
    pub pattern: Pattern,
    pub want: Want,
    pub style: Style,
    pub selection: Selection,
    /// `--group`: fold results instead of printing them per file.
    pub group: bool,
    pub stdout: Arc<Sink>,
}

/// One worker's state.
pub struct GrepState {
    searcher: Searcher,
    out: OutBuf,
    pub folded: Folded,
    /// Lines (or, with -l, files) selected.
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
    fn search(&self, state: &mut GrepState, path: &[u8], fd: OwnedFd) -> Result<(), Errno> {
        let file = File::from(fd);
        let found = search_file(&mut state.searcher, self.pattern.matcher(), &file, self.want)
            .map_err(|e| e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error))?;
        self.record(state, path, found);
        Ok(())
    }

    fn record(&self, state: &mut GrepState, path: &[u8], found: Found) {
        let listed = found.count > 0;
        state.selected += if self.want == Want::Any { u64::from(listed) } else { found.count };
        if self.group {
            match self.want {
                Want::Lines => {
                    for (number, text) in found.lines {
                        let key = Key::Line { number: self.style.line_numbers.then_some(number), text };
                        state.folded.add(key, number, path);
                    }
                }
                Want::Count => state.folded.add(Key::Count(found.count), 0, path),
                Want::Any if listed => state.folded.add(Key::Listed, 0, path),
                Want::Any => {}
            }
            return;
        }
        let out = state.out.buf();
        match self.want {
            Want::Lines => self.style.lines(out, path, &found.lines),
            Want::Count => self.style.count(out, path, found.count),
            Want::Any if listed => self.style.listed(out, path),
            Want::Any => {}
        }
        // One file's output stays together.
        state.out.end_record();
    }

    fn report(cx: &mut Cx<'_, Self>, path: Vec<u8>, errno: Errno) {
        cx.report(WalkError::io(path, Op::Tool("read"), errno));
    }

    /// Finishes a worker: writes what it buffered.
    pub fn flush(state: &mut GrepState) {
        state.out.flush();
    }
}

/// Opens a file for reading without following a symlink or blocking on a FIFO swapped in for it,
/// and refuses anything that is not a regular file.
fn open_regular(dir: Option<BorrowedFd<'_>>, name: &[u8], follow: bool) -> Result<OwnedFd, Errno> {
    let name = CString::new(name).map_err(|_| Errno::INVAL)?;
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = match dir {
        Some(dir) => rustix::fs::openat(dir, &name, flags, Mode::empty())?,
        None => rustix::fs::open(&name, flags, Mode::empty())?,
    };
    if rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode)
        != rustix::fs::FileType::RegularFile
    {
        return Err(Errno::INVAL);
    }
    Ok(fd)
}

impl Visitor for Grep {
    type State = GrepState;
    type DirData = ();
    type Job = GrepJob;

    fn new_state(&self) -> GrepState {
        GrepState {
            searcher: self.pattern.searcher(),
            out: OutBuf::new(Arc::clone(&self.stdout)),
            folded: Folded::default(),
            selected: 0,
        }
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, _state: &mut GrepState, entry: &Entry<'_, ()>) -> Action {
        match entry.kind() {
            FileKind::Dir => return Action::Continue,
            FileKind::File => {}
            // Symlinks met inside a tree are not followed (grep -r); devices, FIFOs and sockets
            // are not read.
            _ => return Action::Continue,
        }
        if !entry.is_root() && !self.selection.admits(entry.file_name()) {
            return Action::Continue;
        }
        match entry.dir() {
            Some(dir) => cx.spawn_in(dir, GrepJob::InDir(entry.name_cstr().to_bytes().to_vec())),
            None => cx.spawn(GrepJob::Root(entry.path())),
        }
        Action::Continue
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, state: &mut GrepState, job: GrepJob) {
        let (path, opened) = match job {
            GrepJob::Root(path) => {
                // Like grep, a symlink given on the command line is followed.
                let opened = open_regular(None, &path, true);
                (path, opened)
            }
            GrepJob::InDir(name) => {
                let Some(dir) = cx.job_dir().cloned() else {
                    return;
                };
                let path = join_path(dir.path(), &name);
                let opened = dir.open().and_then(|fd| open_regular(Some(fd.as_fd()), &name, false));
                (path, opened)
            }
        };
        if let Err(errno) = opened.and_then(|fd| self.search(state, &path, fd)) {
            Self::report(cx, path, errno);
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        crate::common::print_error("grep", error);
        true
    }
}
