//! A walk session: the shared state of one walk, the worker threads, and the [`Driver`] that
//! controls them from the calling thread — the adaptive controller for a local walk, the
//! communication loop of the distributed transport for one rank of a multi-process walk.

use crate::failure::{FailureKind, WalkFailure, into_failure};
use crate::node::DirNode;
use crate::once::EnteredDirs;
use crate::options::{WalkOptions, WalkProgress};
use crate::politeness::{CallLimiter, Politeness};
use crate::sched::{IoSampler, SAMPLE_INTERVAL, Scheduler, StealStats, ThreadPolicy, cores, thread_limit};
use crate::sys::{FsClass, classify_fs, open_path};
use crate::task::Task;
use crate::visitor::{DistributedVisitor, StandInHooks, Visitor};
use crossbeam_utils::CachePadded;
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::CString;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// Per-worker counters, written only by their worker.
#[derive(Default)]
pub(crate) struct Counters {
    pub entries: AtomicU64,
    pub dirs: AtomicU64,
    pub errors: AtomicU64,
    pub tasks: AtomicU64,
    pub readdir_ns: AtomicU64,
    pub stat_ns: AtomicU64,
    pub open_ns: AtomicU64,
    pub io_calls: AtomicU64,
}

pub(crate) struct Shared<'a, V: Visitor> {
    pub visitor: &'a V,
    /// The visitor's distributed hooks, in a distributed session: the only kind that imports work.
    pub stand_ins: Option<&'a dyn StandInHooks<V>>,
    pub options: &'a WalkOptions,
    pub sched: Scheduler<Task<V>>,
    pub counters: Box<[CachePadded<Counters>]>,
    pub quit: AtomicBool,
    /// Directories whose pending work was exported, by export id, until the peer reports back.
    pub exported: Mutex<HashMap<u64, Arc<DirNode<V::DirData>>>>,
    pub next_export_id: AtomicU64,
    /// Imported directories whose work is done here, waiting to be reported to their peer.
    pub finished_imports: Mutex<Vec<Arc<DirNode<V::DirData>>>>,
    /// What ended the walk early, if anything did ([`crate::failure`]).
    pub failure: Mutex<Option<WalkFailure>>,
    /// Directories entered so far, when each is entered once ([`WalkOptions::each_dir_once`]).
    pub entered: Option<EnteredDirs>,
    /// The politeness budget every worker's calls go through, if the walk has limits.
    pub limiter: Option<Arc<CallLimiter>>,
}

/// What a walk leaves behind: every worker's state for the tool to merge, and the totals.
pub struct WalkOutcome<S> {
    pub states: Vec<S>,
    /// Failures reported (each already shown through [`Visitor::error`]).
    pub errors: u64,
    /// Whether a visitor stopped the walk early ([`crate::Cx::quit`]).
    pub quit: bool,
    pub stats: WalkStats,
}

/// Totals of a walk, for summaries and `--stats`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WalkStats {
    pub entries: u64,
    pub dirs: u64,
    /// Units of work run: directory reads, chunks, jobs.
    pub tasks: u64,
    pub threads: usize,
    pub steal_requests: u64,
    pub steals: u64,
    pub idle_secs: f64,
    pub readdir_secs: f64,
    pub stat_secs: f64,
    /// Metadata system calls made by the walk itself (open, getdents64, statx).
    pub metadata_calls: u64,
    pub elapsed_secs: f64,
}

/// What the pool looked like at a [`Driver::tick_with`].
#[derive(Clone, Copy, Debug)]
pub struct PoolSample {
    /// Mean latency of the metadata calls made since the last sample (`None` if none finished).
    pub latency: Option<Duration>,
    /// Workers the thread policy wants.
    pub wanted: usize,
}

/// One walk, local or one rank's part of a distributed one.
pub struct Session<'a, V: Visitor> {
    pub(crate) shared: Shared<'a, V>,
    policy: ThreadPolicy,
    /// Queued once the first workers are up ([`Session::run`]).
    roots: Mutex<Vec<CString>>,
}

impl<'a, V: Visitor> Session<'a, V> {
    /// A walk of `roots` that ends when they are done.
    pub fn new(roots: &[Vec<u8>], options: &'a WalkOptions, visitor: &'a V) -> Self {
        let session = Self::build(roots, options, visitor);
        if roots.is_empty() {
            session.shared.sched.stop();
        }
        session
    }

    fn build(roots: &[Vec<u8>], options: &'a WalkOptions, visitor: &'a V) -> Self {
        let roots: Vec<CString> = roots.iter().map(|r| CString::new(r.clone()).unwrap_or_default()).collect();
        let policy = initial_policy(options.threads, &roots);
        let shared = Shared {
            visitor,
            stand_ins: None,
            options,
            sched: Scheduler::new(policy.max(), options.split),
            counters: (0..policy.max()).map(|_| CachePadded::new(Counters::default())).collect(),
            quit: AtomicBool::new(false),
            exported: Mutex::new(HashMap::new()),
            next_export_id: AtomicU64::new(1),
            finished_imports: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
            entered: options.each_dir_once.then(EnteredDirs::new),
            limiter: CallLimiter::new(&options.politeness),
        };
        Session { shared, policy, roots: Mutex::new(roots) }
    }

    /// Runs the workers while `drive` controls them from the calling thread; returns when `drive`
    /// has returned and the pool has stopped.
    ///
    /// # Panics
    ///
    /// With a [`WalkFailure`] as the payload when the walk could not finish (a visitor panicked,
    /// no worker thread could be started), once every worker has returned; with `drive`'s own
    /// payload if `drive` panics.
    pub fn run<R>(&self, drive: impl FnOnce(&Driver<'_, '_, 'a, V>) -> R) -> (WalkOutcome<V::State>, R) {
        let started = Instant::now();
        let shared = &self.shared;
        let (states, result) = std::thread::scope(|scope| {
            let driver = Driver {
                shared,
                scope,
                policy: self.policy,
                handles: RefCell::new(Vec::new()),
                sampler: RefCell::new(IoSampler::default()),
                started,
                spawn_refused: Cell::new(false),
            };
            for _ in 0..self.policy.initial() {
                if !driver.spawn_worker() {
                    break;
                }
            }
            // Work starts once the first workers exist: none of them can be done (and gone)
            // before the others are started.
            let roots = std::mem::take(&mut *self.roots.lock().unwrap_or_else(|e| e.into_inner()));
            shared.sched.inject(roots.into_iter().map(Task::Root).collect());
            let result = catch_unwind(AssertUnwindSafe(|| drive(&driver)));
            shared.sched.stop();
            let mut states = Vec::new();
            for handle in driver.handles.into_inner() {
                match handle.join() {
                    Ok(Some(state)) => states.push(state),
                    Ok(None) => {}
                    Err(payload) => shared.fail(into_failure(payload)),
                }
            }
            match result {
                Ok(result) => (states, result),
                Err(payload) => resume_unwind(payload),
            }
        });
        if let Some(failure) = shared.failure.lock().unwrap_or_else(|e| e.into_inner()).take() {
            resume_unwind(Box::new(failure));
        }
        let outcome = WalkOutcome {
            states,
            errors: shared.counters.iter().map(|c| c.errors.load(Ordering::Relaxed)).sum(),
            quit: shared.quit.load(Ordering::Relaxed),
            stats: shared.stats(started),
        };
        (outcome, result)
    }
}

impl<'a, V: DistributedVisitor> Session<'a, V> {
    /// One process's part of a walk spread over several: running out of local work does not end
    /// it; the [`Driver`] imports work from peers and stops the session when the whole walk is done.
    pub fn distributed(roots: &[Vec<u8>], options: &'a WalkOptions, visitor: &'a V) -> Self {
        let mut session = Self::build(roots, options, visitor);
        session.shared.stand_ins = Some(visitor);
        session.shared.sched.set_held(true);
        session
    }
}

/// Walks `roots` in parallel, calling `visitor` for every entry. Roots are paths as bytes, of any
/// length; errors are reported and counted, never fatal. A visitor that panics ends the walk: it
/// unwinds out of here with a [`WalkFailure`] naming the path (see [`Session::run`]).
pub fn walk<V: Visitor>(roots: &[Vec<u8>], options: &WalkOptions, visitor: &V) -> WalkOutcome<V::State> {
    let session = Session::new(roots, options, visitor);
    session
        .run(|driver| {
            while !driver.wait(SAMPLE_INTERVAL) {
                driver.tick();
            }
            driver.tick();
        })
        .0
}

/// A remote file system under the first root starts the adaptive policy high; no policy starts
/// more threads than the system allows ([`thread_limit`]).
fn initial_policy(policy: ThreadPolicy, roots: &[CString]) -> ThreadPolicy {
    let policy = policy.clamped(thread_limit().max);
    let Some(first) = roots.first() else {
        return policy;
    };
    match open_path(first.to_bytes(), true).map(|fd| classify_fs(&fd)) {
        Ok(FsClass::Remote(_)) => policy.for_remote_fs(),
        _ => policy,
    }
}

/// Controls a running session from the calling thread.
pub struct Driver<'scope, 'env, 'a, V: Visitor> {
    pub(crate) shared: &'env Shared<'a, V>,
    scope: &'scope Scope<'scope, 'env>,
    policy: ThreadPolicy,
    handles: RefCell<Vec<ScopedJoinHandle<'scope, Option<V::State>>>>,
    sampler: RefCell<IoSampler>,
    started: Instant,
    /// The system refused a thread: the pool stays at the size it has.
    spawn_refused: Cell<bool>,
}

impl<'scope, 'env, 'a, V: Visitor> Driver<'scope, 'env, 'a, V> {
    /// Starts one more worker; false when none can be (all slots taken, or the system refused a
    /// thread). A refusal degrades the walk to the workers it has, with a warning; with none at
    /// all the walk fails.
    fn spawn_worker(&self) -> bool {
        if self.spawn_refused.get() {
            return false;
        }
        let sched = &self.shared.sched;
        let Some(index) = sched.add_worker() else { return false };
        let shared = self.shared;
        let spawned = std::thread::Builder::new()
            .name(format!("canopy-worker-{index}"))
            .spawn_scoped(self.scope, move || shared.run_worker(index));
        match spawned {
            Ok(handle) => {
                self.handles.borrow_mut().push(handle);
                true
            }
            Err(error) => {
                sched.remove_last_worker(index);
                self.spawn_refused.set(true);
                let message = crate::errno_message(Errno::from_io_error(&error).unwrap_or(Errno::AGAIN));
                match sched.workers() {
                    0 => shared.fail(WalkFailure { kind: FailureKind::NoThreads, message, path: None }),
                    n => eprintln!(
                        "canopy: warning: cannot start more worker threads ({message}); continuing with {n}"
                    ),
                }
                false
            }
        }
    }

    /// Grows the pool if the workers wait on the file system with work queued, and reports
    /// progress. Call every [`SAMPLE_INTERVAL`] or so.
    pub fn tick(&self) {
        self.tick_with(|sample| sample.wanted);
    }

    /// [`Driver::tick`], with the pool size to grow to decided by `limit` from the sample and
    /// what the thread policy wants (a transport's own limit, such as what the node's mount serves).
    pub fn tick_with(&self, limit: impl FnOnce(&PoolSample) -> usize) {
        let sched = &self.shared.sched;
        let (ns, calls) = (
            self.shared.sum(|c| &c.readdir_ns)
                + self.shared.sum(|c| &c.stat_ns)
                + self.shared.sum(|c| &c.open_ns),
            self.shared.sum(|c| &c.io_calls),
        );
        let latency = self.sampler.borrow_mut().sample(ns, calls);
        let mut wanted = self.policy.target(sched.workers(), sched.idle_workers(), sched.queued(), latency);
        // A worker waiting for its turn under the politeness budget looks busy: grow no further
        // than the budget can use.
        if let Some(useful) = self.politeness().useful_workers(latency, cores()) {
            wanted = wanted.min(useful.max(self.policy.initial()));
        }
        self.grow_to(limit(&PoolSample { latency, wanted }));
        if let Some(progress) = &self.shared.options.progress {
            progress(&self.shared.progress(self.started));
        }
    }

    /// The politeness limits in force: the walk's own, or its share as last set.
    pub fn politeness(&self) -> Politeness {
        self.shared.limiter.as_ref().map_or(Politeness::default(), |limiter| limiter.limits())
    }

    /// Changes the politeness limits in force (a distributed walk moves budget between ranks with
    /// their work). A walk started without a limit stays without it.
    pub fn set_politeness(&self, limits: &Politeness) {
        if let Some(limiter) = &self.shared.limiter {
            limiter.set(limits);
        }
    }

    /// Starts workers up to `workers` in all, within the thread policy's maximum.
    pub fn grow_to(&self, workers: usize) {
        let sched = &self.shared.sched;
        while sched.workers() < workers.min(self.policy.max()) && self.spawn_worker() {}
    }

    /// Workers started.
    pub fn workers(&self) -> usize {
        self.shared.sched.workers()
    }

    /// Workers that may take tasks ([`Driver::set_active`]).
    pub fn active_workers(&self) -> usize {
        self.shared.sched.active_workers()
    }

    /// Lets only `workers` of the started workers take tasks; the rest stay parked.
    pub fn set_active(&self, workers: usize) {
        self.shared.sched.set_active(workers);
    }

    /// Tasks running now (pending and not queued).
    pub fn running(&self) -> usize {
        let sched = &self.shared.sched;
        sched.pending().saturating_sub(sched.queued())
    }

    /// Leaves the oldest `tasks` queued tasks for [`Driver::export_oldest`]: idle workers do not
    /// take them. The transport must export or release them ([`Driver::set_reserve`] lower).
    pub fn set_reserve(&self, tasks: usize) {
        self.shared.sched.set_reserve(tasks);
    }

    /// With `true`, workers run only work the transport injects; every task they create waits for
    /// [`Driver::export_created`] (the centralised scheduler: each directory passes the master).
    /// A worker that finds only such tasks wakes the transport's [`Driver::wait`].
    pub fn set_forward_created(&self, forward: bool) {
        self.shared.sched.set_forward_created(forward);
    }

    /// Sleeps up to `timeout`, or until the walk stops or (distributed) runs out of local work.
    /// Returns whether the walk has stopped.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.shared.sched.wait_stopped(timeout)
    }

    /// Whether no work is queued or running here.
    pub fn is_idle(&self) -> bool {
        self.shared.sched.pending() == 0
    }

    /// Tasks waiting in this process's queues.
    pub fn queued(&self) -> usize {
        self.shared.sched.queued()
    }

    /// Ends the walk (the distributed transport calls this once termination is detected).
    pub fn stop(&self) {
        self.shared.sched.stop();
    }

    pub fn is_stopped(&self) -> bool {
        self.shared.sched.is_stopped()
    }

    /// Whether a visitor asked to stop everything (find's `-quit`).
    pub fn quit_requested(&self) -> bool {
        self.shared.quit.load(Ordering::Relaxed)
    }

    /// Whether the walk failed here ([`WalkFailure`]): the transport should return at once, and
    /// [`Session::run`] raises the failure for the top level to report (under MPI: abort the job).
    pub fn failed(&self) -> bool {
        self.shared.failure.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// The counters so far.
    pub fn stats(&self) -> WalkStats {
        self.shared.stats(self.started)
    }
}

impl<V: Visitor> Shared<'_, V> {
    pub(crate) fn progress(&self, started: Instant) -> WalkProgress {
        WalkProgress {
            entries: self.sum(|c| &c.entries),
            dirs: self.sum(|c| &c.dirs),
            errors: self.sum(|c| &c.errors),
            threads: self.sched.workers(),
            elapsed: started.elapsed(),
        }
    }

    fn sum(&self, field: fn(&Counters) -> &AtomicU64) -> u64 {
        self.counters.iter().map(|c| field(c).load(Ordering::Relaxed)).sum()
    }

    pub(crate) fn stats(&self, started: Instant) -> WalkStats {
        let workers = self.sched.workers();
        let steal = |field: fn(&StealStats) -> &AtomicU64| -> u64 {
            (0..workers).map(|w| field(self.sched.stats(w)).load(Ordering::Relaxed)).sum()
        };
        WalkStats {
            entries: self.sum(|c| &c.entries),
            dirs: self.sum(|c| &c.dirs),
            tasks: self.sum(|c| &c.tasks),
            threads: workers,
            steal_requests: steal(|s| &s.requests),
            steals: steal(|s| &s.fruitful),
            idle_secs: steal(|s| &s.idle_ns) as f64 / 1e9,
            readdir_secs: self.sum(|c| &c.readdir_ns) as f64 / 1e9,
            stat_secs: self.sum(|c| &c.stat_ns) as f64 / 1e9,
            metadata_calls: self.sum(|c| &c.io_calls),
            elapsed_secs: started.elapsed().as_secs_f64(),
        }
    }
}
