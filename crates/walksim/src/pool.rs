//! A rank's worker pool, as the engine runs it: a queue of tasks (workers take the newest, exports
//! the oldest), worker threads that each run one task at a time as a sequence of file-system
//! requests, and growth of the pool by the engine's adaptive thread policy.
//!
//! A directory read is the engine's `read_dir`: open (lookup, opendir), the listing (readdir requests
//! of `readdir_entries` each; every full chunk of `chunk_size` entries is queued for other workers as
//! it is read), then a stat of every entry left, queuing each subdirectory as it is met, and a
//! releasedir that does not hold the worker. A chunk is a stat of each of its entries.

use crate::events::Event;
use crate::model::Time;
use crate::sim::{Import, Protocol, Sim};
use canopy_engine::ThreadPolicy;
use canopy_engine::sched::{IoSampler, SAMPLE_INTERVAL};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// Stat the root, then read it.
    Root,
    Read(u32),
    Chunk {
        dir: u32,
        start: u32,
        len: u32,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Task {
    pub work: Work,
    /// The import it counts toward on this rank (`None`: this rank's own work).
    pub group: Option<usize>,
}

pub(crate) struct Pool {
    pub queue: VecDeque<Task>,
    threads: Vec<Option<Running>>,
    idle: Vec<u32>,
    policy: ThreadPolicy,
    /// Workers that may take tasks (the governor parks the others).
    active: usize,
    /// CP workers: subdirectories found go here, for the master, instead of into the queue.
    pub results: Option<Vec<Work>>,
    io_ns: u64,
    io_calls: u64,
    sampler: IoSampler,
    ticking: bool,
}

struct Running {
    task: Task,
    step: Step,
}

enum Step {
    StatRoot { left: u32 },
    Open { dir: u32, left: u32 },
    Readdir { dir: u32, calls: u32, done: u32, chunked: u32 },
    Entries { dir: u32, pos: u32, end: u32, next_sub: u32, left: u32 },
}

impl Pool {
    pub fn new(policy: ThreadPolicy) -> Self {
        let threads = policy.initial();
        Pool {
            queue: VecDeque::new(),
            threads: (0..threads).map(|_| None).collect(),
            idle: (0..threads as u32).rev().collect(),
            active: threads,
            policy,
            results: None,
            io_ns: 0,
            io_calls: 0,
            sampler: IoSampler::default(),
            ticking: false,
        }
    }

    pub fn running(&self) -> usize {
        self.threads.len() - self.idle.len()
    }

    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Tasks queued or running (the engine's `pending`): zero means the rank is idle.
    pub fn pending(&self) -> usize {
        self.queue.len() + self.running()
    }

    /// Starts workers up to `target` (within the policy's maximum), of which `active` may take
    /// tasks.
    pub fn resize(&mut self, target: usize, active: usize) {
        while self.threads.len() < target.min(self.policy.max()) {
            self.idle.push(self.threads.len() as u32);
            self.threads.push(None);
        }
        self.active = active.min(self.threads.len()).max(1);
    }

    pub fn active(&self) -> usize {
        self.active
    }

    /// The load as the export policy sees it: the workers that may take tasks.
    pub fn load(&self) -> canopy_distwalk::export::Load {
        canopy_distwalk::export::Load {
            queued: self.queue.len(),
            running: self.running(),
            threads: self.active,
        }
    }
}

impl Sim<'_> {
    /// Queues a task found by a worker (or imported): idle workers take it unless it is reserved.
    pub fn push(&mut self, rank: u32, task: Task) {
        self.ranks[rank as usize].pool.queue.push_back(task);
        self.dispatch(rank);
    }

    /// A task discovered here: it exists now, and counts toward its parent's import.
    fn spawn(&mut self, rank: u32, parent: Task, work: Work) {
        self.totals.tasks_alive += 1;
        if let Some(g) = parent.group {
            self.ranks[rank as usize].imports[g].pending += 1;
        }
        let task = Task { work, group: parent.group };
        match &mut self.ranks[rank as usize].pool.results {
            Some(results) if matches!(work, Work::Read(_)) => results.push(work),
            _ => self.push(rank, task),
        }
    }

    /// Idle workers take queued tasks, newest first, leaving what the export policy reserves —
    /// and then the communication thread is woken to offer it.
    pub fn dispatch(&mut self, rank: u32) {
        loop {
            let r = &mut self.ranks[rank as usize];
            if r.pool.idle.is_empty() || r.pool.queue.is_empty() {
                return;
            }
            if r.pool.running() >= r.pool.active() {
                return;
            }
            let reserve = match &r.protocol {
                Protocol::Steal(state) => state.reserve(r.pool.load(), self.now),
                _ => 0,
            };
            if r.pool.queue.len() <= reserve {
                self.notify(rank);
                return;
            }
            let thread = r.pool.idle.pop().expect("checked non-empty");
            let task = r.pool.queue.pop_back().expect("checked non-empty");
            self.start_task(rank, thread, task);
        }
    }

    fn start_task(&mut self, rank: u32, thread: u32, task: Task) {
        let step = match task.work {
            Work::Root => Some(Step::StatRoot { left: self.model.stat_requests }),
            Work::Read(dir) => Some(self.open(rank, dir)),
            Work::Chunk { dir, start, len } => self.entries(dir, start, start + len),
        };
        let Some(step) = step else {
            self.finish(rank, thread, task);
            return;
        };
        let r = &mut self.ranks[rank as usize];
        r.stats.first_task.get_or_insert(self.now);
        r.pool.threads[thread as usize] = Some(Running { task, step });
        if !r.pool.ticking {
            r.pool.ticking = true;
            let next = next_tick(self.now, r.start);
            self.events.push(next, Event::Tick { rank });
        }
        self.issue(rank, thread);
    }

    fn open(&mut self, rank: u32, dir: u32) -> Step {
        self.totals.reads[dir as usize] = self.totals.reads[dir as usize].saturating_add(1);
        self.ranks[rank as usize].stats.dirs += 1;
        Step::Open { dir, left: self.model.dir_open_requests.max(1) }
    }

    /// Stats of listing positions `pos..end`; `None` if there are none.
    fn entries(&self, dir: u32, pos: u32, end: u32) -> Option<Step> {
        let next_sub = first_sub_at(self.tree.dir(dir), pos);
        (pos < end).then_some(Step::Entries { dir, pos, end, next_sub, left: self.model.stat_requests })
    }

    /// Sends the thread's next request to its node's mount.
    fn issue(&mut self, rank: u32, thread: u32) {
        let done = self.request(rank);
        let pool = &mut self.ranks[rank as usize].pool;
        pool.io_ns += done - self.now;
        pool.io_calls += 1;
        self.events.push(done, Event::RequestDone { rank, thread });
    }

    /// A request on `rank`'s mount now: when it completes.
    fn request(&mut self, rank: u32) -> Time {
        let jitter = self.model.fs_jitter * (2.0 * self.rng.f64() - 1.0);
        let service = (self.model.fs_latency as f64 * (1.0 + jitter)).max(1.0) as Time;
        let node = self.ranks[rank as usize].node as usize;
        self.mounts[node].request(self.now, service)
    }

    pub fn request_done(&mut self, rank: u32, thread: u32) {
        let slot = &mut self.ranks[rank as usize].pool.threads[thread as usize];
        let Running { task, step } = slot.take().expect("a running thread");
        match self.advance(rank, task, step) {
            Some(step) => {
                self.ranks[rank as usize].pool.threads[thread as usize] = Some(Running { task, step });
                self.issue(rank, thread);
            }
            None => self.finish(rank, thread, task),
        }
    }

    /// What follows a completed request of `step`: the next step, or `None` when the task is done.
    fn advance(&mut self, rank: u32, task: Task, step: Step) -> Option<Step> {
        match step {
            Step::StatRoot { left } if left > 1 => Some(Step::StatRoot { left: left - 1 }),
            Step::StatRoot { .. } => {
                self.visited(rank);
                Some(self.open(rank, 0))
            }
            Step::Open { dir, left } if left > 1 => Some(Step::Open { dir, left: left - 1 }),
            Step::Open { dir, .. } => {
                let calls = self.model.readdir_requests(self.tree.dir(dir).entries());
                Some(Step::Readdir { dir, calls, done: 0, chunked: 0 })
            }
            Step::Readdir { dir, calls, done, mut chunked } => {
                let done = done + 1;
                let entries = self.tree.dir(dir).entries();
                let listed = (done * self.model.readdir_entries).min(entries);
                let chunk = self.model.chunk_size.max(1);
                while listed - chunked >= chunk {
                    self.spawn(rank, task, Work::Chunk { dir, start: chunked, len: chunk });
                    chunked += chunk;
                }
                if done < calls {
                    return Some(Step::Readdir { dir, calls, done, chunked });
                }
                self.request(rank); // releasedir: takes a slot, the worker does not wait for it
                self.entries(dir, chunked, entries)
            }
            Step::Entries { dir, pos, end, next_sub, left } if left > 1 => {
                Some(Step::Entries { dir, pos, end, next_sub, left: left - 1 })
            }
            Step::Entries { dir, pos, end, mut next_sub, .. } => {
                self.visited(rank);
                let d = *self.tree.dir(dir);
                if next_sub < d.subdirs && d.sub_position(next_sub) == pos {
                    self.spawn(rank, task, Work::Read(d.first_sub + next_sub));
                    next_sub += 1;
                }
                let pos = pos + 1;
                (pos < end).then_some(Step::Entries {
                    dir,
                    pos,
                    end,
                    next_sub,
                    left: self.model.stat_requests,
                })
            }
        }
    }

    fn visited(&mut self, rank: u32) {
        self.ranks[rank as usize].stats.entries += 1;
        self.totals.entries += 1;
    }

    fn finish(&mut self, rank: u32, thread: u32, task: Task) {
        let r = &mut self.ranks[rank as usize];
        r.pool.idle.push(thread);
        r.stats.tasks += 1;
        r.stats.last_task = self.now;
        self.totals.tasks_alive -= 1;
        if self.totals.tasks_alive == 0 {
            self.totals.work_done_at = self.now;
        }
        if let Some(g) = task.group {
            self.release(rank, g);
        }
        self.dispatch(rank);
        let load = self.ranks[rank as usize].pool.load();
        if load.pending() == 0 {
            self.notify(rank);
        } else if let Protocol::Steal(state) = &self.ranks[rank as usize].protocol
            && state.wants_work(load)
        {
            // Not woken: the loop notices at its next regular poll.
            let at = self.next_poll_after(rank, self.now);
            self.wake(rank, at);
        }
    }

    /// One task of import `g` is done; the last one makes the import's completion due.
    pub fn release(&mut self, rank: u32, g: usize) {
        let import = &mut self.ranks[rank as usize].imports[g];
        import.pending -= 1;
        if import.pending == 0 {
            self.ranks[rank as usize].finished_imports.push(g);
            self.notify(rank);
        }
    }

    /// Takes `n` tasks from the front of the queue (the oldest, shallowest) for `peer`, each under an
    /// export id; returns them and the bytes of the batch.
    pub fn export(&mut self, rank: u32, n: usize) -> (Vec<(usize, Work)>, usize) {
        let r = &mut self.ranks[rank as usize];
        let n = n.min(r.pool.queue.len());
        let mut tasks = Vec::with_capacity(n);
        let mut task_bytes = 0;
        for task in r.pool.queue.drain(..n) {
            let id = r.exports.insert(task.group);
            task_bytes += self.wire.task(crate::outcome::shape(self.tree, task.work));
            tasks.push((id, task.work));
        }
        r.stats.tasks_exported += n as u64;
        let bytes = self.wire.batch(rank, n, task_bytes);
        (tasks, bytes)
    }

    /// Queues work received from `from`, each task as an import of its own.
    pub fn import(&mut self, rank: u32, from: u32, tasks: Vec<(usize, Work)>) {
        self.ranks[rank as usize].stats.tasks_imported += tasks.len() as u64;
        for (export_id, work) in tasks {
            let g = self.ranks[rank as usize].imports.insert(Import {
                from,
                export_id: export_id as u32,
                pending: 1,
            });
            self.ranks[rank as usize].pool.queue.push_back(Task { work, group: Some(g) });
        }
        self.dispatch(rank);
    }

    /// A peer finished work exported from here under `id`.
    pub fn completed(&mut self, rank: u32, id: usize) {
        if let Some(g) = self.ranks[rank as usize].exports.remove(id) {
            self.release(rank, g);
        }
    }

    /// The engine's controller samples: the pool grows as the adaptive policy (and, for the
    /// balancing scheduler, the export policy) says.
    pub fn tick(&mut self, rank: u32) {
        let now = self.now;
        let r = &mut self.ranks[rank as usize];
        let pool = &mut r.pool;
        if pool.running() == 0 {
            pool.ticking = false;
            return;
        }
        let latency = pool.sampler.sample(pool.io_ns, pool.io_calls);
        let wanted = pool.policy.target(pool.threads(), pool.idle.len(), pool.queue.len(), latency);
        let target = match &mut r.protocol {
            Protocol::Steal(s) => s.thread_target(pool.load(), latency, wanted),
            _ => wanted,
        };
        let active = match &r.protocol {
            Protocol::Steal(s) => s.active(target.max(pool.threads())),
            _ => target.max(pool.threads()),
        };
        pool.resize(target, active);
        self.events.push(next_tick(now + 1, r.start), Event::Tick { rank });
        self.dispatch(rank);
    }
}

/// The first sample time at or after `now` for a rank started at `start`.
fn next_tick(now: Time, start: Time) -> Time {
    let interval = SAMPLE_INTERVAL.as_nanos() as Time;
    let since = now.saturating_sub(start);
    start + since.div_ceil(interval).max(1) * interval
}

/// The first subdirectory at or after listing position `pos`.
fn first_sub_at(d: &crate::tree::Dir, pos: u32) -> u32 {
    let (mut lo, mut hi) = (0, d.subdirs);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if d.sub_position(mid) < pos { lo = mid + 1 } else { hi = mid }
    }
    lo
}
