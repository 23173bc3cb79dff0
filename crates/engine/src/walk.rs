//! The walk driver: roots, directory reads, big-directory chunks, jobs, post-order completion, and the
//! controller that grows the worker count and reports progress.

use crate::chunk::Chunk;
use crate::entry::Entry;
use crate::error::{ErrorKind, Op, WalkError};
use crate::meta::FileKind;
use crate::node::{DirFd, DirNode};
use crate::options::{Follow, WalkOptions, WalkProgress};
use crate::sched::{SAMPLE_INTERVAL, Scheduler, ThreadPolicy, UtilizationSampler};
use crate::sys::{FsClass, classify_fs, open_path};
use crate::visitor::{Action, Visitor};
use crossbeam_utils::CachePadded;
use rustix::fd::AsFd;
use rustix::fs::RawDir;
use serde::Serialize;
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Bytes of `getdents64` buffer per worker: big directories come back in few system calls.
const DIRENT_BUFFER: usize = 64 * 1024;

/// Work the pool schedules.
pub(crate) enum Task<V: Visitor> {
    /// Stat and visit the starting point with this index.
    Root(usize),
    /// Read a directory.
    Read(Arc<DirNode<V::DirData>>),
    /// Visit a chunk of a big directory's entries.
    Chunk(Box<Chunk>, Arc<DirNode<V::DirData>>),
    /// A visitor's follow-up job, optionally counted toward a directory's completion.
    Job(V::Job, Option<Arc<DirNode<V::DirData>>>),
}

#[derive(Default)]
struct Counters {
    entries: AtomicU64,
    dirs: AtomicU64,
    errors: AtomicU64,
}

/// What a walk leaves behind: every worker's state for the tool to merge, and the totals.
pub struct WalkOutcome<S> {
    pub states: Vec<S>,
    /// Failures reported (each already shown through [`Visitor::error`]).
    pub errors: u64,
    /// Whether a visitor stopped the walk early ([`Cx::quit`]).
    pub quit: bool,
    pub stats: WalkStats,
}

/// Totals of a walk, for summaries and `--stats`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WalkStats {
    pub entries: u64,
    pub dirs: u64,
    pub threads: usize,
    pub steal_requests: u64,
    pub steals: u64,
    pub idle_secs: f64,
    pub elapsed_secs: f64,
}

pub(crate) struct Shared<'a, V: Visitor> {
    visitor: &'a V,
    options: &'a WalkOptions,
    roots: &'a [CString],
    sched: Scheduler<Task<V>>,
    counters: Box<[CachePadded<Counters>]>,
    quit: AtomicBool,
}

/// The handle a visitor gets with each call: schedule jobs, report errors, stop the walk.
pub struct Cx<'w, V: Visitor> {
    shared: &'w Shared<'w, V>,
    worker: usize,
    /// Data for the directory the current visit continues into ([`Cx::set_dir_data`]).
    dir_data: Option<V::DirData>,
}

impl<V: Visitor> Cx<'_, V> {
    /// Index of the worker thread running this call.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Schedules a job on the pool.
    pub fn spawn(&mut self, job: V::Job) {
        self.shared.sched.push(self.worker, Task::Job(job, None));
    }

    /// Schedules a job that must finish before `dir`'s post-order [`Visitor::leave_dir`].
    pub fn spawn_in(&mut self, dir: &Arc<DirNode<V::DirData>>, job: V::Job) {
        dir.add_pending(1);
        self.shared.sched.push(self.worker, Task::Job(job, Some(Arc::clone(dir))));
    }

    /// Holds back `dir`'s post-order [`Visitor::leave_dir`] for a job that cannot be scheduled yet
    /// (it waits on work elsewhere, e.g. a hard link waiting for its target's copy); schedule it with
    /// [`Cx::spawn_reserved`] once it can run. A reservation dropped unspent keeps `dir` and its
    /// ancestors from ever being left.
    pub fn reserve(&mut self, dir: &Arc<DirNode<V::DirData>>) -> Reservation<V::DirData> {
        dir.add_pending(1);
        Reservation { dir: Arc::clone(dir) }
    }

    /// Schedules the job a [`Reservation`] was made for; it counts toward the reserved directory as
    /// if scheduled there with [`Cx::spawn_in`].
    pub fn spawn_reserved(&mut self, reservation: Reservation<V::DirData>, job: V::Job) {
        self.shared.sched.push(self.worker, Task::Job(job, Some(reservation.dir)));
    }

    /// Gives the directory being visited its [`Visitor::DirData`] (instead of `Default::default()`), so
    /// what the visit learned — a destination it created, a decision to remove everything below — is
    /// there for every entry inside it. Only meaningful in [`Visitor::visit`] of a directory that
    /// returns [`Action::Continue`]; ignored otherwise.
    pub fn set_dir_data(&mut self, data: V::DirData) {
        self.dir_data = Some(data);
    }

    /// Shows a failure through [`Visitor::error`] and counts it toward the exit status if the
    /// visitor says it counts.
    pub fn report(&mut self, error: WalkError) {
        if self.shared.visitor.error(&error) {
            self.shared.counters[self.worker].errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stops the walk as soon as every worker finishes its current call (find's `-quit`).
    pub fn quit(&mut self) {
        self.shared.quit.store(true, Ordering::SeqCst);
        self.shared.sched.stop();
    }

    pub fn is_quitting(&self) -> bool {
        self.shared.quit.load(Ordering::Relaxed)
    }

    /// The walk's options (follow mode, depth limits…).
    pub fn options(&self) -> &WalkOptions {
        self.shared.options
    }
}

/// A slot in a directory's pending work, taken with [`Cx::reserve`] and filled with
/// [`Cx::spawn_reserved`]; can be moved to another thread or job.
#[must_use = "a reservation dropped unspent keeps its directory from ever being left"]
pub struct Reservation<D> {
    dir: Arc<DirNode<D>>,
}

impl<D> Reservation<D> {
    /// The directory whose `leave_dir` waits for this reservation.
    pub fn dir(&self) -> &Arc<DirNode<D>> {
        &self.dir
    }
}

/// Walks `roots` in parallel, calling `visitor` for every entry. Roots are paths as bytes, of any
/// length; errors are reported and counted, never fatal.
pub fn walk<V: Visitor>(roots: &[Vec<u8>], options: &WalkOptions, visitor: &V) -> WalkOutcome<V::State> {
    let roots: Vec<CString> = roots.iter().map(|r| CString::new(r.clone()).unwrap_or_default()).collect();
    let policy = initial_policy(options.threads, &roots);
    let shared = Shared {
        visitor,
        options,
        roots: &roots,
        sched: Scheduler::new(policy.max(), options.split),
        counters: (0..policy.max()).map(|_| CachePadded::new(Counters::default())).collect(),
        quit: AtomicBool::new(false),
    };
    shared.sched.inject((0..roots.len()).map(Task::Root).collect());
    if roots.is_empty() {
        shared.sched.stop();
    }
    let started = Instant::now();
    let states = run_pool(&shared, policy, started);
    let stats = shared.stats(started);
    WalkOutcome {
        states,
        errors: shared.counters.iter().map(|c| c.errors.load(Ordering::Relaxed)).sum(),
        quit: shared.quit.load(Ordering::Relaxed),
        stats,
    }
}

/// A remote file system under the first root starts the adaptive policy high.
fn initial_policy(policy: ThreadPolicy, roots: &[CString]) -> ThreadPolicy {
    let Some(first) = roots.first() else {
        return policy;
    };
    match open_path(first.to_bytes(), true).map(|fd| classify_fs(&fd)) {
        Ok(FsClass::Remote(_)) => policy.for_remote_fs(),
        _ => policy,
    }
}

/// Runs the workers; the calling thread is the controller: it samples utilisation to grow the pool
/// and feeds the progress display until the pool stops.
fn run_pool<V: Visitor>(shared: &Shared<'_, V>, policy: ThreadPolicy, started: Instant) -> Vec<V::State> {
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let spawn = |handles: &mut Vec<_>| {
            if let Some(index) = shared.sched.add_worker() {
                handles.push(scope.spawn(move || shared.run_worker(index)));
            }
        };
        for _ in 0..policy.initial() {
            spawn(&mut handles);
        }
        let mut sampler = UtilizationSampler::default();
        while !shared.sched.wait_stopped(SAMPLE_INTERVAL) {
            let sched = &shared.sched;
            let target =
                policy.target(sched.workers(), sched.idle_workers(), sched.queued(), sampler.sample());
            while shared.sched.workers() < target {
                spawn(&mut handles);
            }
            if let Some(progress) = &shared.options.progress {
                progress(&shared.progress(started));
            }
        }
        if let Some(progress) = &shared.options.progress {
            progress(&shared.progress(started));
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// Per-thread scratch space of a worker.
struct Worker<S> {
    index: usize,
    state: S,
    dirents: Vec<MaybeUninit<u8>>,
    spare: Chunk,
}

impl<'a, V: Visitor> Shared<'a, V> {
    fn run_worker(&'a self, index: usize) -> V::State {
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15 ^ index as u64);
        let mut worker = Worker {
            index,
            state: self.visitor.new_state(),
            dirents: vec![MaybeUninit::uninit(); DIRENT_BUFFER],
            spare: Chunk::with_capacity(self.options.chunk_size),
        };
        while let Some(task) = self.sched.next(index, &mut rng) {
            match task {
                Task::Root(i) => self.visit_root(&mut worker, i),
                Task::Read(node) => self.read_dir(&mut worker, node),
                Task::Chunk(chunk, node) => self.visit_chunk_task(&mut worker, &chunk, node),
                Task::Job(job, dir) => {
                    self.visitor.run_job(&mut self.cx(worker.index), &mut worker.state, job);
                    if let Some(dir) = dir {
                        self.finish(&mut worker, dir);
                    }
                }
            }
            self.sched.task_done();
        }
        worker.state
    }

    fn cx(&'a self, worker: usize) -> Cx<'a, V> {
        Cx { shared: self, worker, dir_data: None }
    }

    fn report(&'a self, worker: usize, error: WalkError) {
        self.cx(worker).report(error);
    }

    fn quitting(&self) -> bool {
        self.quit.load(Ordering::Relaxed)
    }

    fn visit_root(&'a self, worker: &mut Worker<V::State>, index: usize) {
        let path = &self.roots[index];
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
        self.counters[worker.index].entries.fetch_add(1, Ordering::Relaxed);
        if let Some(parent) = parent
            && self.options.follow == Follow::Always
            && !self.followable(worker.index, entry, parent)
        {
            return;
        }
        let mut cx = self.cx(worker.index);
        let action = self.visitor.visit(&mut cx, &mut worker.state, entry);
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
        let ancestor =
            parent.ancestors().find(|a| a.metadata().is_some_and(|m| m.file_id() == meta.file_id()));
        if let Some(ancestor) = ancestor {
            let ancestor = ancestor.path().to_vec();
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
        while let Some(next) = entries.next() {
            let dirent = match next {
                Ok(dirent) => dirent,
                Err(errno) => {
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

    /// Finishes one unit of `node`'s pending work; the last one runs the post-order hook and
    /// propagates to the parent.
    fn finish(&'a self, worker: &mut Worker<V::State>, node: Arc<DirNode<V::DirData>>) {
        let mut node = node;
        while node.release() {
            if !self.quitting() {
                self.visitor.leave_dir(&mut self.cx(worker.index), &mut worker.state, &node);
            }
            node.drop_cached_fd();
            match node.parent() {
                Some(parent) => node = Arc::clone(parent),
                None => return,
            }
        }
    }

    fn progress(&self, started: Instant) -> WalkProgress {
        let sum =
            |f: fn(&Counters) -> &AtomicU64| self.counters.iter().map(|c| f(c).load(Ordering::Relaxed)).sum();
        WalkProgress {
            entries: sum(|c| &c.entries),
            dirs: sum(|c| &c.dirs),
            errors: sum(|c| &c.errors),
            threads: self.sched.workers(),
            elapsed: started.elapsed(),
        }
    }

    fn stats(&self, started: Instant) -> WalkStats {
        let progress = self.progress(started);
        let workers = self.sched.workers();
        let steal = |f: fn(&crate::sched::StealStats) -> &AtomicU64| -> u64 {
            (0..workers).map(|w| f(self.sched.stats(w)).load(Ordering::Relaxed)).sum()
        };
        WalkStats {
            entries: progress.entries,
            dirs: progress.dirs,
            threads: workers,
            steal_requests: steal(|s| &s.requests),
            steals: steal(|s| &s.fruitful),
            idle_secs: steal(|s| &s.idle_ns) as f64 / 1e9,
            elapsed_secs: progress.elapsed.as_secs_f64(),
        }
    }
}
