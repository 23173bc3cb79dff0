use super::queue::{SplitMode, WorkQueue};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Per-worker stealing counters: the seed's "work requests sent / fruitful" and idle time.
#[derive(Default)]
pub struct StealStats {
    pub requests: AtomicU64,
    pub fruitful: AtomicU64,
    pub items_stolen: AtomicU64,
    pub idle_ns: AtomicU64,
}

/// A pool of work queues shared by the workers of one process (or one MPI rank).
///
/// Termination is exact: `pending` counts tasks created and not yet finished. A task can only create
/// tasks while it runs, i.e. while its own count is held, so `pending` reaching zero means no task
/// exists and none can appear — the walk is complete. Idle workers park on a condvar; a push wakes one
/// when any are parked. The sleeper increments `idle` and then checks the queue lengths, the pusher
/// stores the length and then checks `idle`, all sequentially consistent, so a wake-up cannot be lost.
///
/// Every push and finished task writes `pending`, every push reads `idle`, every request for a task
/// reads `stopped`: each has a cache line of its own, as each queue has, so that writing one does
/// not take the line of the others away from every core.
pub struct Scheduler<T> {
    /// One queue per possible worker, plus the injector (last) for work arriving from outside.
    queues: Box<[CachePadded<WorkQueue<T>>]>,
    stats: Box<[CachePadded<StealStats>]>,
    started: AtomicUsize,
    pending: CachePadded<AtomicUsize>,
    idle: CachePadded<AtomicUsize>,
    stopped: CachePadded<AtomicBool>,
    /// While held, an empty pool is not the end: more work may arrive from other ranks.
    held: AtomicBool,
    /// Queued tasks idle workers leave alone, for the distributed transport to send to a peer.
    reserve: AtomicUsize,
    /// Workers (by index) that may take tasks; the others stay parked.
    active: AtomicUsize,
    /// Tasks workers create wait in their queues for the transport, which sends each to the master
    /// (the centralised baseline); workers run only what is injected.
    forward_created: AtomicBool,
    sleep: Mutex<()>,
    work_ready: Condvar,
    state_changed: Condvar,
    split: SplitMode,
}

impl<T: Send> Scheduler<T> {
    pub fn new(max_workers: usize, split: SplitMode) -> Self {
        let max_workers = max_workers.max(1);
        Scheduler {
            queues: (0..=max_workers).map(|_| CachePadded::new(WorkQueue::default())).collect(),
            stats: (0..max_workers).map(|_| CachePadded::new(StealStats::default())).collect(),
            started: AtomicUsize::new(0),
            pending: CachePadded::new(AtomicUsize::new(0)),
            idle: CachePadded::new(AtomicUsize::new(0)),
            stopped: CachePadded::new(AtomicBool::new(false)),
            held: AtomicBool::new(false),
            reserve: AtomicUsize::new(0),
            active: AtomicUsize::new(usize::MAX),
            forward_created: AtomicBool::new(false),
            sleep: Mutex::new(()),
            work_ready: Condvar::new(),
            state_changed: Condvar::new(),
            split,
        }
    }

    pub fn max_workers(&self) -> usize {
        self.stats.len()
    }

    /// Claims the next worker slot; `None` when all are taken.
    pub fn add_worker(&self) -> Option<usize> {
        let mut n = self.started.load(Ordering::SeqCst);
        loop {
            if n >= self.max_workers() {
                return None;
            }
            match self.started.compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => return Some(n),
                Err(now) => n = now,
            }
        }
    }

    /// Gives back slot `index`, the last one claimed, whose thread could not be started. Its queue
    /// is empty: nothing was ever pushed to it.
    pub fn remove_last_worker(&self, index: usize) {
        let _ = self.started.compare_exchange(index + 1, index, Ordering::SeqCst, Ordering::SeqCst);
    }

    pub fn workers(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    pub fn idle_workers(&self) -> usize {
        self.idle.load(Ordering::SeqCst)
    }

    /// Tasks created and not yet finished (queued or running).
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// Tasks waiting in queues (not running).
    pub fn queued(&self) -> usize {
        self.queues.iter().map(|q| q.len()).sum()
    }

    pub fn stats(&self, worker: usize) -> &StealStats {
        &self.stats[worker]
    }

    /// Keeps the pool alive when it runs empty (distributed mode); releasing a drained pool stops it.
    pub fn set_held(&self, held: bool) {
        self.held.store(held, Ordering::SeqCst);
        if !held && self.pending() == 0 {
            self.stop();
        }
    }

    /// Leaves the oldest `tasks` queued tasks to the transport: workers take a task only while more
    /// than that are queued. Whatever is reserved must be taken ([`Scheduler::take_oldest`]) or
    /// released by a lower reserve, or the walk waits for it.
    pub fn set_reserve(&self, tasks: usize) {
        if self.reserve.swap(tasks, Ordering::SeqCst) > tasks {
            self.wake_all();
        }
    }

    /// Lets only the first `workers` workers take tasks (at least one); the others park, and the
    /// tasks in their queues are stolen by the active ones.
    pub fn set_active(&self, workers: usize) {
        if self.active.swap(workers.max(1), Ordering::SeqCst) < workers.max(1) {
            self.wake_all();
        }
    }

    /// With `true`, workers leave every task they create queued for [`Scheduler::take_created`]
    /// and run only injected tasks: each task passes through the transport, one at a time.
    pub fn set_forward_created(&self, forward: bool) {
        self.forward_created.store(forward, Ordering::SeqCst);
        self.wake_all();
    }

    /// Workers that may take tasks, of those started.
    pub fn active_workers(&self) -> usize {
        self.workers().min(self.active.load(Ordering::SeqCst))
    }

    /// Queues a task on `worker`'s own queue.
    pub fn push(&self, worker: usize, task: T) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        self.queues[worker].push(task);
        self.wake_one();
    }

    /// Queues tasks from outside the pool (roots, work received from another rank).
    pub fn inject(&self, tasks: Vec<T>) {
        if tasks.is_empty() {
            return;
        }
        self.pending.fetch_add(tasks.len(), Ordering::SeqCst);
        self.injector().push_all(tasks);
        self.wake_all();
    }

    /// Takes queued tasks for another rank: from one random non-empty queue, split like a local
    /// steal. Their pending counts go with them.
    pub fn steal_for_remote(&self, rng: &mut fastrand::Rng) -> Vec<T> {
        let n = self.workers();
        let start = rng.usize(0..=n);
        let mut taken = Vec::new();
        for k in 0..=n {
            taken = self.queues[self.slot((start + k) % (n + 1), n)].steal(self.split, rng);
            if !taken.is_empty() {
                break;
            }
        }
        self.release(taken.len());
        taken
    }

    /// Takes every task the workers created and have not started (not the injected ones), for the
    /// master of the centralised scheduler. Their pending counts go with them.
    pub fn take_created(&self) -> Vec<T> {
        let taken: Vec<T> = (0..self.workers()).flat_map(|w| self.queues[w].drain()).collect();
        self.release(taken.len());
        taken
    }

    /// Takes up to `count` of the oldest queued tasks for another rank — those found first, whose
    /// subtrees are the biggest: from the front of the injector, then of each worker's queue. Their
    /// pending counts go with them.
    pub fn take_oldest(&self, count: usize) -> Vec<T> {
        let mut taken = Vec::new();
        let n = self.workers();
        for slot in std::iter::once(self.max_workers()).chain(0..n) {
            if taken.len() >= count {
                break;
            }
            taken.extend(self.queues[slot].take_front(count - taken.len()));
        }
        self.release(taken.len());
        taken
    }

    /// Tasks that left the pool (for another rank) no longer count as pending.
    fn release(&self, tasks: usize) {
        self.pending.fetch_sub(tasks, Ordering::SeqCst);
        if self.pending.load(Ordering::SeqCst) == 0 {
            self.notify_controller();
        }
    }

    /// Wakes whoever waits in [`Scheduler::wait_stopped`] (the distributed transport's loop).
    pub fn notify_controller(&self) {
        let _guard = self.lock_sleep();
        self.state_changed.notify_all();
    }

    /// Marks one task finished. The last one stops the pool, or, when held, wakes whoever waits in
    /// [`Scheduler::wait_stopped`] (the distributed transport goes looking for remote work then).
    pub fn task_done(&self) {
        if self.pending.fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        if self.held.load(Ordering::SeqCst) {
            let _guard = self.lock_sleep();
            self.state_changed.notify_all();
        } else {
            self.stop();
        }
    }

    /// The next task for `worker`: its own newest, else a split of a random victim's queue, else it
    /// parks until work appears (beyond the reserve, and for an active worker). `None` once the pool
    /// has stopped.
    pub fn next(&self, worker: usize, rng: &mut fastrand::Rng) -> Option<T> {
        loop {
            if self.is_stopped() {
                return None;
            }
            if self.may_take(worker) {
                if self.forward_created.load(Ordering::SeqCst) {
                    if let Some(task) = self.injector().pop() {
                        return Some(task);
                    }
                } else {
                    if let Some(task) = self.queues[worker].pop() {
                        return Some(task);
                    }
                    if let Some(task) = self.steal_into(worker, rng) {
                        return Some(task);
                    }
                }
            }
            if !self.park(worker) {
                return None;
            }
        }
    }

    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let _guard = self.lock_sleep();
        self.work_ready.notify_all();
        self.state_changed.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Sleeps up to `timeout`, until the pool stops or (when held) until it runs empty; returns whether
    /// it has stopped.
    pub fn wait_stopped(&self, timeout: Duration) -> bool {
        let guard = self.lock_sleep();
        if self.is_stopped() {
            return true;
        }
        let _unused = self.state_changed.wait_timeout(guard, timeout);
        self.is_stopped()
    }

    /// Whether `worker` is active and more than the reserve is queued.
    fn may_take(&self, worker: usize) -> bool {
        if worker >= self.active.load(Ordering::SeqCst) {
            return false;
        }
        let reserve = self.reserve.load(Ordering::SeqCst);
        reserve == 0 || self.queued() > reserve
    }

    fn injector(&self) -> &WorkQueue<T> {
        &self.queues[self.max_workers()]
    }

    /// Maps a candidate index in `0..=workers` to a queue slot: the last candidate is the injector.
    fn slot(&self, candidate: usize, workers: usize) -> usize {
        if candidate == workers { self.max_workers() } else { candidate }
    }

    /// Steals from random victims, drawn afresh for each try (the seed's choice: probing on from a
    /// random start would favour the queue after a run of empty ones). The tries are bounded; a
    /// worker that found nothing parks, and parking returns at once while any queue holds work.
    fn steal_into(&self, worker: usize, rng: &mut fastrand::Rng) -> Option<T> {
        let n = self.workers();
        let stats = &self.stats[worker];
        for _ in 0..=n {
            let victim = self.random_victim(worker, n, rng);
            if self.queues[victim].is_empty() {
                continue;
            }
            stats.requests.fetch_add(1, Ordering::Relaxed);
            let mut stolen = self.queues[victim].steal(self.split, rng);
            let Some(task) = stolen.pop() else { continue };
            stats.fruitful.fetch_add(1, Ordering::Relaxed);
            stats.items_stolen.fetch_add(stolen.len() as u64 + 1, Ordering::Relaxed);
            if !stolen.is_empty() {
                self.queues[worker].push_all(stolen);
                self.wake_one();
            }
            return Some(task);
        }
        None
    }

    /// A queue slot other than `worker`'s, uniformly among the other workers' queues and the
    /// injector (`worker` is one of the `workers` started).
    fn random_victim(&self, worker: usize, workers: usize, rng: &mut fastrand::Rng) -> usize {
        let candidate = rng.usize(0..workers);
        self.slot(if candidate >= worker { candidate + 1 } else { candidate }, workers)
    }

    /// Parks until work may be available (true) or the pool stopped (false).
    fn park(&self, worker: usize) -> bool {
        let since = Instant::now();
        let mut guard = self.lock_sleep();
        self.idle.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if self.is_stopped() {
                break false;
            }
            if self.queues.iter().any(|q| !q.is_empty()) {
                let takeable = !self.forward_created.load(Ordering::SeqCst) || !self.injector().is_empty();
                if takeable && self.may_take(worker) {
                    break true;
                }
                // Work left for the transport to send: tell it at once, not at its next poll.
                self.state_changed.notify_all();
            }
            guard = self.work_ready.wait(guard).unwrap_or_else(|e| e.into_inner());
        };
        self.idle.fetch_sub(1, Ordering::SeqCst);
        let waited = since.elapsed().as_nanos() as u64;
        self.stats[worker].idle_ns.fetch_add(waited, Ordering::Relaxed);
        result
    }

    fn wake_one(&self) {
        if self.idle.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock_sleep();
            self.work_ready.notify_one();
        }
    }

    fn wake_all(&self) {
        let _guard = self.lock_sleep();
        self.work_ready.notify_all();
    }

    fn lock_sleep(&self) -> MutexGuard<'_, ()> {
        self.sleep.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// A synthetic tree: task `n` spawns children until the depth budget runs out. Every task must run
    /// exactly once and the pool must stop by itself.
    #[test]
    fn every_task_runs_once_for_any_thread_count_and_split() {
        for split in [SplitMode::Equal, SplitMode::Random] {
            for threads in [1, 2, 3, 8, 33, 64] {
                let sched = Scheduler::<(u32, u32)>::new(threads, split);
                let ran = AtomicU64::new(0);
                let sum = AtomicU64::new(0);
                sched.inject(vec![(0, 0)]);
                std::thread::scope(|s| {
                    for _ in 0..threads {
                        let w = sched.add_worker().unwrap();
                        let (sched, ran, sum) = (&sched, &ran, &sum);
                        s.spawn(move || {
                            let mut rng = fastrand::Rng::with_seed(w as u64);
                            while let Some((id, depth)) = sched.next(w, &mut rng) {
                                ran.fetch_add(1, Ordering::Relaxed);
                                sum.fetch_add(u64::from(id), Ordering::Relaxed);
                                if depth < 6 {
                                    for c in 0..(1 + id % 4) {
                                        sched.push(w, (id * 4 + c + 1, depth + 1));
                                    }
                                }
                                sched.task_done();
                            }
                        });
                    }
                });
                let (expected_count, expected_sum) = reference_tree();
                assert_eq!(ran.load(Ordering::Relaxed), expected_count, "{split:?} {threads}");
                assert_eq!(sum.load(Ordering::Relaxed), expected_sum, "{split:?} {threads}");
                assert_eq!(sched.pending(), 0);
            }
        }
    }

    /// Victims are drawn uniformly from every queue but the thief's own, the injector included.
    #[test]
    fn victims_are_random_among_the_other_queues() {
        let (max, workers, thief) = (8, 5, 2);
        let sched = Scheduler::<()>::new(max, SplitMode::Equal);
        let mut rng = fastrand::Rng::with_seed(7);
        let mut drawn = vec![0u32; max + 1];
        let draws = 40_000;
        for _ in 0..draws {
            drawn[sched.random_victim(thief, workers, &mut rng)] += 1;
        }
        let expected = draws / workers as u32;
        for (slot, &count) in drawn.iter().enumerate() {
            let candidate = (slot < workers && slot != thief) || slot == max;
            if candidate {
                assert!(
                    count.abs_diff(expected) < expected / 10,
                    "slot {slot} drawn {count} times: {drawn:?}"
                );
            } else {
                assert_eq!(count, 0, "slot {slot} is the thief's own or no started worker's: {drawn:?}");
            }
        }
    }

    fn reference_tree() -> (u64, u64) {
        let mut stack = vec![(0u32, 0u32)];
        let (mut count, mut sum) = (0, 0);
        while let Some((id, depth)) = stack.pop() {
            count += 1;
            sum += u64::from(id);
            if depth < 6 {
                for c in 0..(1 + id % 4) {
                    stack.push((id * 4 + c + 1, depth + 1));
                }
            }
        }
        (count, sum)
    }

    #[test]
    fn reserved_tasks_wait_for_the_transport_and_the_oldest_leave() {
        let sched = Scheduler::<u32>::new(2, SplitMode::Equal);
        sched.set_held(true);
        let w = sched.add_worker().unwrap();
        let mut rng = fastrand::Rng::with_seed(1);
        sched.inject(vec![1]);
        for task in 2..=4 {
            sched.push(w, task);
        }
        sched.set_reserve(3);
        assert_eq!(sched.next(w, &mut rng), Some(4), "more than the reserve queued: the newest runs");
        sched.push(w, 5);
        assert_eq!(sched.queued(), 4);
        assert_eq!(sched.take_oldest(3), vec![1, 2, 3], "the injector's front first, then the queues'");
        assert_eq!(sched.pending(), 2, "the running task and the one left");
        std::thread::scope(|s| {
            let parked = s.spawn(|| {
                let mut rng = fastrand::Rng::with_seed(2);
                sched.next(w, &mut rng)
            });
            sched.set_reserve(0);
            assert_eq!(parked.join().unwrap(), Some(5), "a lower reserve releases the task");
        });
    }

    #[test]
    fn forwarded_tasks_wait_for_the_transport_and_only_injected_ones_run() {
        let sched = Scheduler::<u32>::new(2, SplitMode::Equal);
        sched.set_held(true);
        sched.set_forward_created(true);
        let w = sched.add_worker().unwrap();
        let mut rng = fastrand::Rng::with_seed(1);
        sched.inject(vec![1]);
        assert_eq!(sched.next(w, &mut rng), Some(1));
        sched.push(w, 2);
        sched.push(w, 3);
        sched.task_done();
        std::thread::scope(|s| {
            let parked = s.spawn(|| {
                let mut rng = fastrand::Rng::with_seed(2);
                sched.next(w, &mut rng)
            });
            while sched.idle_workers() == 0 {
                std::thread::yield_now();
            }
            assert_eq!(sched.take_created(), vec![2, 3], "the worker ran none of the tasks it created");
            assert_eq!(sched.pending(), 0);
            sched.inject(vec![4]);
            assert_eq!(parked.join().unwrap(), Some(4), "an injected task runs");
        });
    }

    #[test]
    fn inactive_workers_park_until_let_in() {
        let sched = Scheduler::<u32>::new(4, SplitMode::Equal);
        sched.set_held(true);
        let (first, second) = (sched.add_worker().unwrap(), sched.add_worker().unwrap());
        sched.set_active(1);
        assert_eq!(sched.active_workers(), 1);
        sched.inject(vec![1, 2]);
        std::thread::scope(|s| {
            let parked = s.spawn(|| {
                let mut rng = fastrand::Rng::with_seed(2);
                sched.next(second, &mut rng)
            });
            let mut rng = fastrand::Rng::with_seed(1);
            let taken = sched.next(first, &mut rng).unwrap();
            assert_eq!(sched.queued(), 1, "the inactive worker took nothing");
            sched.set_active(2);
            let other = parked.join().unwrap().unwrap();
            assert_eq!(taken + other, 3);
        });
    }

    #[test]
    fn held_pool_survives_running_empty() {
        let sched = Scheduler::<u32>::new(2, SplitMode::Equal);
        sched.set_held(true);
        sched.inject(vec![1]);
        let w = sched.add_worker().unwrap();
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(sched.next(w, &mut rng), Some(1));
        sched.task_done();
        assert!(!sched.is_stopped());
        sched.set_held(false);
        assert!(sched.is_stopped());
        assert_eq!(sched.next(w, &mut rng), None);
    }
}
