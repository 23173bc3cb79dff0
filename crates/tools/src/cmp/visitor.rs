//! The comparison visitor. Both trees are walked at once (two roots of one walk): entries of A are
//! looked up in B and compared, entries of B are only looked up in A to find what B has in excess.
//! Below a directory present on one side only nothing more is reported.

use super::content::{Buffers, Pair};
use super::difference::Difference;
use crate::common::{Mirror, lookup, print_error};
use canopy_engine::output::{OutBuf, Sink};
use canopy_engine::{
    Action, Cx, DirNode, Entry, Errno, FileKind, Metadata, Op, Visitor, WalkError, join_path,
};
use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags, openat, readlinkat};
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    #[default]
    A,
    B,
}

/// A directory of one tree and its counterpart in the other.
#[derive(Default)]
pub struct CmpDir {
    side: Side,
    other: Mirror,
}

fn other(dir: &CmpDir) -> &Mirror {
    &dir.other
}

pub struct Compare {
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub content: bool,
    pub json: bool,
    pub chunk_size: u64,
    pub sink: Arc<Sink>,
}

pub struct CmpState {
    out: OutBuf,
    buffers: Buffers,
    pub compared: u64,
    pub differences: u64,
}

pub enum Job {
    /// A byte range of two big files.
    Chunk(Arc<Pair>, std::ops::Range<u64>),
}

impl Compare {
    fn emit(&self, state: &mut CmpState, path: &[u8], difference: Difference) {
        state.differences += 1;
        let buf = state.out.buf();
        if self.json {
            serde_json::to_writer(&mut *buf, &difference.json(path)).expect("writing to memory");
        } else {
            buf.extend_from_slice(difference.human(path, &self.a, &self.b).as_bytes());
        }
        buf.push(b'\n');
        state.out.end_record();
    }

    /// The path of an entry relative to its root (`.` for the root).
    fn relative(entry: &Entry<'_, CmpDir>) -> Vec<u8> {
        let Some(dir) = entry.dir() else { return b".".to_vec() };
        let root = dir.ancestors().last().expect("a node is its own last ancestor at least");
        let rest = &dir.path()[root.path().len()..];
        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
        if rest.is_empty() {
            entry.name_cstr().to_bytes().to_vec()
        } else {
            join_path(rest, entry.name_cstr().to_bytes())
        }
    }

    /// The other tree's entry: `Ok(None)` when it does not exist.
    fn counterpart(&self, entry: &Entry<'_, CmpDir>, side: Side) -> Result<Option<Metadata>, Errno> {
        match entry.dir() {
            Some(dir) => lookup(Mirror::open(dir, &other)?, entry.name_cstr()),
            None => {
                canopy_engine::sys::stat_path(if side == Side::A { &self.b } else { &self.a }, true).map(Some)
            }
        }
    }

    /// Reports how `a` (the entry) and `b` (its counterpart) differ.
    fn differences(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut CmpState,
        entry: &Entry<'_, CmpDir>,
        a: &Metadata,
        b: &Metadata,
    ) {
        let path = Self::relative(entry);
        if a.kind() != b.kind() {
            return self.emit(state, &path, Difference::Type { a: a.kind(), b: b.kind() });
        }
        match a.kind() {
            FileKind::File if a.size != b.size => {
                self.emit(state, &path, Difference::Size { a: a.size, b: b.size })
            }
            FileKind::File if self.content && a.size > 0 => {
                self.compare_content(cx, state, entry, a.size, path.clone())
            }
            FileKind::Symlink => match self.targets(entry) {
                Ok((ta, tb)) if ta != tb => self.emit(state, &path, Difference::Target { a: ta, b: tb }),
                Ok(_) => {}
                Err(errno) => cx.report(WalkError::io(entry.path(), Op::Tool("read the target of"), errno)),
            },
            FileKind::BlockDevice | FileKind::CharDevice if a.rdev != b.rdev => {
                self.emit(state, &path, Difference::Content)
            }
            _ => {}
        }
        if a.mtime != b.mtime {
            self.emit(state, &path, Difference::Mtime { a: a.mtime, b: b.mtime });
        }
    }

    fn targets(&self, entry: &Entry<'_, CmpDir>) -> Result<(Vec<u8>, Vec<u8>), Errno> {
        let (a, b) = match entry.dir() {
            Some(dir) => {
                let other = Mirror::open(dir, &other)?;
                (
                    readlinkat(
                        entry.dir_fd().expect("a child has a directory fd"),
                        entry.name_cstr(),
                        Vec::new(),
                    )?,
                    readlinkat(&other, entry.name_cstr(), Vec::new())?,
                )
            }
            None => (
                readlinkat(rustix::fs::CWD, self.a.as_slice(), Vec::new())?,
                readlinkat(rustix::fs::CWD, self.b.as_slice(), Vec::new())?,
            ),
        };
        Ok((a.into_bytes(), b.into_bytes()))
    }

    fn open_pair(&self, entry: &Entry<'_, CmpDir>) -> Result<(OwnedFd, OwnedFd), (Vec<u8>, Errno)> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let open =
            |dir: rustix::fd::BorrowedFd<'_>, name: &std::ffi::CStr| openat(dir, name, flags, Mode::empty());
        match (entry.dir(), entry.dir_fd()) {
            (Some(dir), Some(fd)) => {
                let a = open(fd, entry.name_cstr()).map_err(|e| (entry.path(), e))?;
                let b = Mirror::open(dir, &other)
                    .and_then(|other| open(rustix::fd::AsFd::as_fd(&other), entry.name_cstr()))
                    .map_err(|e| (join_path(&self.b, &Self::relative(entry)), e))?;
                Ok((a, b))
            }
            _ => {
                let cwd = rustix::fs::CWD;
                let a =
                    openat(cwd, self.a.as_slice(), flags, Mode::empty()).map_err(|e| (self.a.clone(), e))?;
                let b =
                    openat(cwd, self.b.as_slice(), flags, Mode::empty()).map_err(|e| (self.b.clone(), e))?;
                Ok((a, b))
            }
        }
    }

    fn compare_content(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut CmpState,
        entry: &Entry<'_, CmpDir>,
        size: u64,
        path: Vec<u8>,
    ) {
        let (a, b) = match self.open_pair(entry) {
            Ok(pair) => pair,
            Err((path, errno)) => return cx.report(WalkError::io(path, Op::Tool("read"), errno)),
        };
        let chunks = size.div_ceil(self.chunk_size);
        let pair = Pair::new(a, b, path, chunks as usize);
        if chunks == 1 {
            return self.compare_range(cx, state, &pair, 0..size);
        }
        let pair = Arc::new(pair);
        for index in 0..chunks {
            let start = index * self.chunk_size;
            let range = start..(start + self.chunk_size).min(size);
            let job = Job::Chunk(Arc::clone(&pair), range);
            match entry.dir() {
                Some(dir) => cx.spawn_in(dir, job),
                None => cx.spawn(job),
            }
        }
    }

    fn compare_range(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut CmpState,
        pair: &Pair,
        range: std::ops::Range<u64>,
    ) {
        match pair.compare(range, &mut state.buffers) {
            Ok(Some(true)) => self.emit(state, &pair.path, Difference::Content),
            Ok(_) => {}
            Err(errno) => cx.report(WalkError::io(pair.path.clone(), Op::Tool("read"), errno)),
        }
    }
}

impl Visitor for Compare {
    type State = CmpState;
    type DirData = CmpDir;
    type Job = Job;

    fn new_state(&self) -> CmpState {
        CmpState {
            out: OutBuf::new(Arc::clone(&self.sink)),
            buffers: Buffers::default(),
            compared: 0,
            differences: 0,
        }
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, state: &mut CmpState, entry: &Entry<'_, CmpDir>) -> Action {
        let side = match entry.dir() {
            Some(dir) => dir.data.side,
            None if entry.name_cstr().to_bytes() == self.a.as_slice() => Side::A,
            None => Side::B,
        };
        let meta = match entry.metadata() {
            Ok(meta) => *meta,
            Err(errno) => {
                cx.report(WalkError::io(entry.path(), Op::Stat, errno));
                return Action::Prune;
            }
        };
        let counterpart = match self.counterpart(entry, side) {
            Ok(counterpart) => counterpart,
            // A missing root is reported by the walk itself.
            Err(_) if entry.is_root() => return Action::Prune,
            Err(errno) => {
                let other_root = if side == Side::A { &self.b } else { &self.a };
                cx.report(WalkError::io(join_path(other_root, &Self::relative(entry)), Op::Stat, errno));
                return Action::Prune;
            }
        };
        let Some(counterpart) = counterpart else {
            let only = if side == Side::A { Difference::OnlyInA } else { Difference::OnlyInB };
            self.emit(state, &Self::relative(entry), only);
            return Action::Prune;
        };
        if side == Side::A {
            state.compared += 1;
            self.differences(cx, state, entry, &meta, &counterpart);
        }
        if !(meta.is_dir() && counterpart.is_dir()) {
            return Action::Prune;
        }
        let other = if !entry.is_root() {
            Mirror::default()
        } else if side == Side::A {
            Mirror::root(&self.b, true)
        } else {
            Mirror::root(&self.a, true)
        };
        cx.set_dir_data(CmpDir { side, other });
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, _: &mut CmpState, dir: &Arc<DirNode<CmpDir>>) {
        dir.data.other.close();
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, state: &mut CmpState, job: Job) {
        let Job::Chunk(pair, range) = job;
        self.compare_range(cx, state, &pair, range);
    }

    fn error(&self, error: &WalkError) -> bool {
        print_error("cmp", error);
        true
    }
}
