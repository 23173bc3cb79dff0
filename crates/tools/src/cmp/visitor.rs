//! The comparison visitor. Both trees are walked at once (two roots of one walk): entries of A are
//! looked up in B and compared, entries of B are only looked up in A to find what B has in excess.
//! Below a directory present on one side only nothing more is reported.
//!
//! Under MPI a directory's stand-in on another rank gets its side and its counterpart as the other
//! root and the path below it; a big file's chunk names the two files by their path, and the
//! difference is reported once, by the rank that opened them, when the last chunk is compared.

use super::content::{Buffers, ChunkPair, Pair, equal};
use super::difference::Difference;
use crate::common::pieces::{PieceDone, PieceReports, Pieces};
use crate::common::{Mirror, lookup, print_error};
use canopy_engine::output::{OutBuf, Sink};
use canopy_engine::sys::open_beneath;
use canopy_engine::{
    Action, Cx, DirNode, DistributedVisitor, Entry, Errno, FileKind, Metadata, Op, Visitor, WalkError,
};
use canopy_util::path::{join_path, split_relative};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{CWD, Mode, OFlags, openat, readlinkat};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Side {
    #[default]
    A,
    B,
}

/// A directory of one tree and its counterpart in the other.
#[derive(Default, Serialize, Deserialize)]
pub struct CmpDir {
    side: Side,
    other: Mirror,
    /// Chunks compared here of files opened on other processes, on their way back.
    chunks_done: PieceReports,
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
    /// Big files being compared in chunks, opened here.
    pub pairs: Pieces<Pair>,
}

pub struct CmpState {
    out: OutBuf,
    buffers: Buffers,
    pub compared: u64,
    pub differences: u64,
}

#[derive(Serialize, Deserialize)]
pub enum CompareJob {
    /// A byte range of two big files.
    Chunk(ChunkPair),
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
        let rest = dir.relative_path();
        if rest.is_empty() {
            entry.name_cstr().to_bytes().to_vec()
        } else {
            join_path(rest, entry.name_cstr().to_bytes())
        }
    }

    /// The root of the other tree than `side`'s.
    fn other_root(&self, side: Side) -> &[u8] {
        if side == Side::A { &self.b } else { &self.a }
    }

    /// The other tree's entry: `Ok(None)` when it does not exist.
    fn counterpart(&self, entry: &Entry<'_, CmpDir>, side: Side) -> Result<Option<Metadata>, Errno> {
        match entry.dir() {
            Some(dir) => lookup(Mirror::open(dir, &other)?, entry.name_cstr()),
            None => canopy_engine::sys::stat_path(self.other_root(side), true).map(Some),
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
        let open = |dir: rustix::fd::BorrowedFd<'_>, name: &std::ffi::CStr| {
            openat(dir, name, read_flags(), Mode::empty())
        };
        match (entry.dir(), entry.dir_fd()) {
            (Some(dir), Some(fd)) => {
                let a = open(fd, entry.name_cstr()).map_err(|e| (entry.path(), e))?;
                let b = Mirror::open(dir, &other)
                    .and_then(|other| open(other.as_fd(), entry.name_cstr()))
                    .map_err(|e| (join_path(&self.b, &Self::relative(entry)), e))?;
                Ok((a, b))
            }
            _ => self.reopen(b"."),
        }
    }

    /// Opens the two files at `path` relative to the roots (`.` for the roots themselves), below
    /// each root one directory at a time with `O_NOFOLLOW`: a chunk compared on another process.
    fn reopen(&self, path: &[u8]) -> Result<(OwnedFd, OwnedFd), (Vec<u8>, Errno)> {
        let open = |root: &[u8]| {
            let full = if path == b"." { root.to_vec() } else { join_path(root, path) };
            let opened = if path == b"." {
                openat(CWD, root, read_flags(), Mode::empty())
            } else {
                let (dir, name) = split_relative(path);
                let name = CString::new(name).map_err(|_| Errno::INVAL);
                open_beneath(root, true, dir, false)
                    .and_then(|dir| openat(&dir, &name?, read_flags(), Mode::empty()))
            };
            opened.map_err(|e| (full, e))
        };
        Ok((open(&self.a)?, open(&self.b)?))
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
        let pair = Pair { a, b, path };
        let chunks = size.div_ceil(self.chunk_size);
        if chunks == 1 {
            if self.differs(cx, state, &pair, 0..size) {
                self.emit(state, &pair.path, Difference::Content);
            }
            return;
        }
        // The chunks count toward the files' directory; the roots' toward a group of their own.
        let group = match entry.dir() {
            Some(dir) => Arc::clone(dir),
            None => DirNode::job_group(&self.a, CmpDir::default()),
        };
        let path = pair.path.clone();
        let id = self.pairs.open(pair, chunks as usize).id;
        for index in 0..chunks {
            let start = index * self.chunk_size;
            let range = start..(start + self.chunk_size).min(size);
            cx.spawn_in(&group, CompareJob::Chunk(ChunkPair { id, path: path.clone(), range }));
        }
    }

    /// Whether `range` of the two files differs; a failure to read is reported.
    fn differs(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut CmpState,
        pair: &Pair,
        range: std::ops::Range<u64>,
    ) -> bool {
        match equal(pair, range, &mut state.buffers) {
            Ok(same) => !same,
            Err(errno) => {
                cx.report(WalkError::io(pair.path.clone(), Op::Tool("read"), errno));
                false
            }
        }
    }

    /// Compares one chunk. On the process that opened the files, the last chunk compared reports
    /// the difference; elsewhere the result goes back through the directory the chunk counts toward.
    fn compare_chunk(&self, cx: &mut Cx<'_, Self>, state: &mut CmpState, chunk: ChunkPair) {
        let Some(tracked) = self.pairs.get(chunk.id) else {
            let differs = match self.reopen(&chunk.path) {
                Ok((a, b)) => self.differs(cx, state, &Pair { a, b, path: chunk.path.clone() }, chunk.range),
                Err((path, errno)) => {
                    cx.report(WalkError::io(path, Op::Tool("read"), errno));
                    false
                }
            };
            let dir = cx.job_dir().expect("chunks are spawned in a directory or a job group");
            dir.data.chunks_done.push(PieceDone { id: chunk.id, flagged: differs });
            return;
        };
        // Once a difference is found, the rest need not be read.
        let differs = !tracked.flagged() && self.differs(cx, state, &tracked.item, chunk.range);
        if let Some(done) = self.pairs.done(&tracked, differs)
            && done.flagged()
        {
            self.emit(state, &done.item.path, Difference::Content);
        }
    }
}

fn read_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC
}

impl Visitor for Compare {
    type State = CmpState;
    type DirData = CmpDir;
    type Job = CompareJob;

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
                let other_root = self.other_root(side);
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
        let other =
            if entry.is_root() { Mirror::root(self.other_root(side), true) } else { Mirror::default() };
        cx.set_dir_data(CmpDir { side, other, chunks_done: PieceReports::default() });
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, _: &mut CmpState, dir: &Arc<DirNode<CmpDir>>) {
        dir.data.other.close();
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, state: &mut CmpState, job: CompareJob) {
        let CompareJob::Chunk(chunk) = job;
        self.compare_chunk(cx, state, chunk);
    }

    fn error(&self, error: &WalkError) -> bool {
        print_error("cmp", error);
        true
    }
}

impl DistributedVisitor for Compare {
    fn stand_in_data(&self, dir: &DirNode<CmpDir>) -> CmpDir {
        let side = dir.data.side;
        let other = Mirror::beneath(self.other_root(side), true, dir.relative_path());
        CmpDir { side, other, chunks_done: PieceReports::default() }
    }

    fn absorb_completed(
        &self,
        _: &mut Cx<'_, Self>,
        state: &mut CmpState,
        dir: &Arc<DirNode<CmpDir>>,
        from: CmpDir,
    ) {
        for done in self.pairs.absorb(from.chunks_done, &dir.data.chunks_done) {
            if done.flagged() {
                self.emit(state, &done.item.path, Difference::Content);
            }
        }
    }
}
