//! What a worker does with each task: visit roots and entries, read directories (sharing out big
//! ones in chunks), run jobs, and finish directories in post-order. Every visitor call is guarded:
//! a panic names the path being visited and ends the walk instead of wedging it.

use crate::chunk::Chunk;
use crate::cx::Cx;
use crate::entry::Entry;
use crate::error::{ErrorKind, Op, WalkError};
use crate::failure::{WalkFailure, into_failure, visiting};
use crate::meta::FileKind;
use crate::node::{DirFd, DirNode};
use crate::options::Follow;
use crate::politeness;
use crate::session::Shared;
use crate::sys::{thread_io, timed_readdir};
use crate::task::Task;
use crate::visitor::{Action, StandInHooks, Visitor};
use rustix::fd::AsFd;
use rustix::fs::RawDir;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Bytes of `getdents64` buffer per worker: big directories come back in few system calls.
const DIRENT_BUFFER: usize = 64 * 1024;

/// Per-thread scratch space of a worker.
struct Worker<S> {
    index: usize,
    state: S,
    dirents: Vec<MaybeUninit<u8>>,
    spare: Chunk,
}

impl<'a, V: Visitor> Shared<'a, V> {
    /// A worker's life: tasks until the pool stops. A panic ends the walk (see [`crate::failure`]):
    /// the worker's state is dropped and `None` returned.
    pub(crate) fn run_worker(&'a self, index: usize) -> Option<V::State> {
        match catch_unwind(AssertUnwindSafe(|| self.work(index))) {
            Ok(state) => Some(state),
            Err(payload) => {
                self.fail(into_failure(payload));
                None
            }
        }
    }

    /// Ends the walk for good: the first failure is kept for [`crate::Session::run`] to raise.
    pub(crate) fn fail(&self, failure: WalkFailure) {
        self.failure.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(failure);
        self.quit.store(true, Ordering::SeqCst);
        self.sched.stop();
    }

    fn work(&'a self, index: usize) -> V::State {
        let _limits = politeness::install(self.limiter.clone());
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15 ^ index as u64);
        let mut worker = Worker {
            index,
            state: self.visitor.new_state(),
            dirents: vec![MaybeUninit::uninit(); DIRENT_BUFFER],
            spare: Chunk::with_capacity(self.options.chunk_size),
        };
        let counters = &self.counters[index];
        while let Some(task) = self.sched.next(index, &mut rng) {
            match task {
                Task::Root(path) => self.visit_root(&mut worker, &path),
                Task::Read(node) => self.read_dir(&mut worker, node),
                Task::Chunk(chunk, node) => self.visit_chunk_task(&mut worker, &chunk, node),
                Task::Job(job, dir) => {
                    let path = || dir.as_ref().map(|d| d.path().to_vec());
                    let mut cx =
                        Cx { shared: self, worker: worker.index, dir_data: None, job_dir: dir.clone() };
                    visiting(path, || self.visitor.run_job(&mut cx, &mut worker.state, job));
                    if let Some(dir) = cx.job_dir {
                        self.finish(&mut worker, dir);
                    }
                }
                Task::Complete(node, data) => {
                    let hooks = self.stand_in_hooks();
                    visiting(
                        || Some(node.path().to_vec()),
                        || hooks.absorb_completed(&mut self.cx(worker.index), &mut worker.state, &node, data),
                    );
                    self.finish(&mut worker, node);
                }
            }
            let io = thread_io();
            counters.readdir_ns.store(io.readdir_ns, Ordering::Relaxed);
            counters.stat_ns.store(io.stat_ns, Ordering::Relaxed);
            counters.open_ns.store(io.open_ns, Ordering::Relaxed);
            counters.io_calls.store(io.calls, Ordering::Relaxed);
            counters.tasks.fetch_add(1, Ordering::Relaxed);
            self.sched.task_done();
        }
        worker.state
    }

    /// Completions and stand-ins come only from other processes, into a distributed session.
    fn stand_in_hooks(&self) -> &'a dyn StandInHooks<V> {
        self.stand_ins.expect("work from another process arrives only in a distributed session")
    }

    fn cx(&'a self, worker: usize) -> Cx<'a, V> {
        Cx { shared: self, worker, dir_data: None, job_dir: None }
    }

    fn report(&'a self, worker: usize, error: WalkError) {
        self.cx(worker).report(error);
    }

    fn quitting(&self) -> bool {
        self.quit.load(Ordering::Relaxed)
    }

    fn visit_root(&'a self, worker: &mut Worker<V::State>, path: &CString) {
        let entry = Entry::root(path, self.options.follow != Follow::Never);
        if let Err(errno) = entry.metadata() {
            self.report(worker.index, WalkError::io(path.to_bytes().to_vec(), Op::Stat, errno));
            return;
        }
        self.visit_entry(worker, &entry, None);
    }

    /// Visits one entry and, if it is a directory the visitor wants entered, schedules its read.
    fn visit_entry(
        &'a self,
        worker: &mut Worker<V::State>,
        entry: &Entry<'_, V::DirData>,
        parent: Option<&Arc<DirNode<V::DirData>>>,
    ) {
        if let Some(entered) = &self.entered
            && entry.kind() == FileKind::Dir
            && let Ok(meta) = entry.metadata()
            && !entered.first_visit(meta.file_id())
        {
            return;
        }
        self.counters[worker.index].entries.fetch_add(1, Ordering::Relaxed);
        if let Some(parent) = parent
            && self.options.follow == Follow::Always
            && !self.followable(worker.index, entry, parent)
        {
            return;
        }
        let mut cx = self.cx(worker.index);
        let action =
            visiting(|| Some(entry.path()), || self.visitor.visit(&mut cx, &mut worker.state, entry));
        if action == Action::Prune || self.quitting() || entry.kind() != FileKind::Dir {
            return;
        }
        let data = cx.dir_data.take().unwrap_or_default();
        let enter = parent.is_none_or(|parent| self.may_enter(worker.index, entry, parent))
            && self.options.max_depth.is_none_or(|max| entry.depth() < max);
        let meta = entry.cached_metadata().copied();
        let node = match parent {
            None => DirNode::root_with(entry.name_cstr().to_bytes(), entry.follows(), meta, data),
            Some(parent) => DirNode::child_with(parent, entry.name_cstr(), entry.follows(), meta, data),
        };
        if enter {
            self.sched.push(worker.index, Task::Read(node));
        } else {
            // Not entered, but still left: post-order visitors see every directory they continued.
            self.finish(worker, node);
        }
    }

    /// When following links, an entry is only visited once what it leads to is known: a link whose
    /// target cannot be stat'ed (a loop of links, permission denied) is reported instead, and so is a
    /// directory that is one of its own ancestors — GNU find's behaviour under -L.
    fn followable(
        &'a self,
        worker: usize,
        entry: &Entry<'_, V::DirData>,
        parent: &Arc<DirNode<V::DirData>>,
    ) -> bool {
        if matches!(entry.dirent_kind(), FileKind::Symlink | FileKind::Unknown)
            && let Err(errno) = entry.metadata()
        {
            self.report(worker, WalkError::io(entry.path(), Op::Stat, errno));
            return false;
        }
        if entry.kind() != FileKind::Dir {
            return true;
        }
        let meta = match entry.metadata() {
            Ok(meta) => *meta,
            Err(errno) => {
                self.report(worker, WalkError::io(entry.path(), Op::Stat, errno));
                return false;
            }
        };
        if let Some(ancestor) = parent.ancestor_with_id(meta.file_id()) {
            self.report(worker, WalkError { path: entry.path(), kind: ErrorKind::Loop { ancestor } });
            return false;
        }
        true
    }

    /// `-xdev`: directories on another file system than their root are visited but not entered.
    fn may_enter(
        &'a self,
        worker: usize,
        entry: &Entry<'_, V::DirData>,
        parent: &Arc<DirNode<V::DirData>>,
    ) -> bool {
        if !self.options.same_file_system {
            return true;
        }
        match entry.metadata() {
            Ok(meta) => parent.root_dev().is_none_or(|dev| dev == meta.dev),
            Err(errno) => {
                self.report(worker, WalkError::io(entry.path(), Op::Stat, errno));
                false
            }
        }
    }

    /// Reads a directory, handing out full chunks of a big one to other workers as it goes and
    /// visiting the last (for most directories, the only) chunk itself.
    fn read_dir(&'a self, worker: &mut Worker<V::State>, node: Arc<DirNode<V::DirData>>) {
        if self.quitting() {
            return;
        }
        self.counters[worker.index].dirs.fetch_add(1, Ordering::Relaxed);
        let fd = match node.open_and_cache() {
            Ok(fd) => fd,
            Err(errno) => {
                self.report(worker.index, WalkError::io(node.path().to_vec(), Op::OpenDir, errno));
                self.finish(worker, node);
                return;
            }
        };
        let mut chunk = std::mem::take(&mut worker.spare);
        let mut entries = RawDir::new(&fd, &mut worker.dirents);
        loop {
            // Only a call that refills the buffer is a system call worth timing.
            let next =
                if entries.is_buffer_empty() { timed_readdir(|| entries.next()) } else { entries.next() };
            let dirent = match next {
                None => break,
                Some(Ok(dirent)) => dirent,
                Some(Err(errno)) => {
                    self.report(worker.index, WalkError::io(node.path().to_vec(), Op::ReadDir, errno));
                    break;
                }
            };
            let name = dirent.file_name().to_bytes_with_nul();
            if name == b".\0" || name == b"..\0" {
                continue;
            }
            chunk.push(name, FileKind::from_file_type(dirent.file_type()));
            if chunk.len() >= self.options.chunk_size {
                let full = std::mem::replace(&mut chunk, Chunk::with_capacity(self.options.chunk_size));
                node.add_pending(1);
                self.sched.push(worker.index, Task::Chunk(Box::new(full), Arc::clone(&node)));
            }
        }
        self.visit_chunk(worker, &chunk, &node, &fd);
        chunk.clear();
        worker.spare = chunk;
        drop(fd);
        self.finish(worker, node);
    }

    fn visit_chunk_task(
        &'a self,
        worker: &mut Worker<V::State>,
        chunk: &Chunk,
        node: Arc<DirNode<V::DirData>>,
    ) {
        match node.open() {
            Ok(fd) => self.visit_chunk(worker, chunk, &node, &fd),
            Err(errno) => self.report(worker.index, WalkError::io(node.path().to_vec(), Op::OpenDir, errno)),
        }
        self.finish(worker, node);
    }

    fn visit_chunk(
        &'a self,
        worker: &mut Worker<V::State>,
        chunk: &Chunk,
        node: &Arc<DirNode<V::DirData>>,
        fd: &DirFd,
    ) {
        let follow = self.options.follow == Follow::Always;
        for (name, kind) in chunk.iter() {
            if self.quitting() {
                return;
            }
            let entry = Entry::child(node, fd.as_fd(), name, kind, follow);
            self.visit_entry(worker, &entry, Some(node));
        }
    }

    /// Finishes one unit of `node`'s pending work. The last one runs the post-order hook and
    /// propagates to the parent — or, for a directory imported from another process, queues the
    /// report back to that process, which runs the hook where the directory's parent lives.
    fn finish(&'a self, worker: &mut Worker<V::State>, node: Arc<DirNode<V::DirData>>) {
        let mut node = node;
        while node.release() {
            if node.import().is_some() {
                if !self.quitting() {
                    let hooks = self.stand_in_hooks();
                    visiting(
                        || Some(node.path().to_vec()),
                        || hooks.leave_stand_in(&mut self.cx(worker.index), &mut worker.state, &node),
                    );
                }
                node.drop_cached_fd();
                self.finished_imports.lock().unwrap_or_else(|e| e.into_inner()).push(node);
                self.sched.notify_controller();
                return;
            }
            if !self.quitting() {
                visiting(
                    || Some(node.path().to_vec()),
                    || self.visitor.leave_dir(&mut self.cx(worker.index), &mut worker.state, &node),
                );
            }
            node.drop_cached_fd();
            match node.parent() {
                Some(parent) => node = Arc::clone(parent),
                None => return,
            }
        }
    }
}
