//! How much of its work a rank keeps and how much it offers, and when its pool may grow — the
//! export policy of the balancing scheduler.
//!
//! Why H-DRQS loses its balance on a slow file system: a rank's pool grows while its calls are slow
//! and work is queued, up to 128 workers, and every directory it finds is taken by an idle worker
//! the moment it is queued. Its queue is empty whenever a peer asks, so it refuses; the peers retry
//! every millisecond while one rank walks the tree; and ranks whose pools grew at different times
//! visit entries at different rates. The policy balances *load* — tasks queued plus running, the
//! directories a rank is reading at once — rather than only feeding ranks that ran dry:
//!
//! * **Ask while underused.** A rank asks for work as soon as it has idle workers and nothing
//!   queued ([`Load::wants_work`]), and its request carries its load.
//! * **Halve the difference.** A rank answers with half the difference between its load and the
//!   asker's, from the front of its queue — the oldest, shallowest directories, whose subtrees are
//!   the biggest — and at most `max_batch` tasks, so that a few large subtrees travel rather than
//!   many small ones. No difference worth halving, no work: a hot potato never travels.
//! * **Owed work, offered unasked.** A refused peer is remembered with its load; as soon as this
//!   rank has work to spare for it, it sends a share without waiting to be asked again (a push — the
//!   lifelines of lifeline-based load balancing), so refused peers can back off long without idling.
//! * **A backlog for the owed.** Idle workers leave the next offer's tasks in the queue
//!   ([`ExportPolicy::reserve`]) instead of swallowing each directory the moment it appears.
//! * **Grow with a backlog, and grow together.** The pool doubles (the engine's adaptive policy) only
//!   when this rank's queue could feed the new workers ([`ExportPolicy::thread_target`]), and no
//!   further than its node's mount serves ([`crate::governor`]). Work carries its sender's pool
//!   size, and a rank that receives work grows its pool to the sender's
//!   ([`ExportPolicy::pool_for_import`]): the sender found the file system slow and had work to
//!   spare, and the ranks share the file system. Ranks that visit entries at the same rate get the
//!   same share of them.
//!
//! Pure: the caller reports loads and sends what the policy decides.

use std::collections::VecDeque;
use std::time::Duration;

/// A rank's work at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// Tasks waiting in the pool's queues.
    pub queued: usize,
    /// Tasks being run by workers.
    pub running: usize,
    /// Workers started.
    pub threads: usize,
}

impl Load {
    /// Tasks queued or running.
    pub fn pending(&self) -> usize {
        self.queued + self.running
    }

    /// Whether the rank should ask for work: workers idle and nothing queued for them.
    pub fn wants_work(&self) -> bool {
        self.queued == 0 && self.running < self.threads
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportConfig {
    /// Most tasks one message carries.
    pub max_batch: usize,
    /// Most peers remembered as owed work (the oldest is forgotten first).
    pub max_owed: usize,
    /// How long a refused peer stays owed: after that it has likely found work elsewhere (or asks
    /// again), and an offer would only move work to a rank that no longer needs it. The askers'
    /// longest back-off pause is the natural choice ([`crate::backoff::cap_for`]).
    pub owed_for: Duration,
}

impl ExportConfig {
    /// The settings for a job of `ranks` ranks. Batches of 8 keep the bytes of small jobs low; in
    /// big jobs a loaded rank has hundreds of idle peers to feed, and batches grow with the job (P/32,
    /// at most 256). A refused peer stays owed as long as its back-off may make it wait.
    pub fn for_ranks(ranks: u32) -> Self {
        ExportConfig {
            max_batch: (ranks as usize / 32).clamp(8, 256),
            max_owed: 64,
            owed_for: crate::backoff::cap_for(ranks),
        }
    }
}

/// A peer owed work, with its load when it asked, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Owed {
    peer: u32,
    pending: usize,
    since: Duration,
}

#[derive(Clone, Debug)]
pub struct ExportPolicy {
    config: ExportConfig,
    /// Peers refused work, oldest first.
    owed: VecDeque<Owed>,
}

impl ExportPolicy {
    pub fn new(config: ExportConfig) -> Self {
        ExportPolicy { config, owed: VecDeque::new() }
    }

    /// `peer`, with `peer_pending` tasks queued or running, asks for work at `now` (any clock that
    /// only goes forward): how many queued tasks to send it, from the front of the queue. Zero means
    /// a refusal, and the peer is then owed work for a while.
    pub fn on_request(&mut self, peer: u32, peer_pending: usize, load: Load, now: Duration) -> usize {
        self.owed.retain(|o| o.peer != peer);
        let share = self.share(load, peer_pending);
        if share == 0 {
            if self.owed.len() >= self.config.max_owed {
                self.owed.pop_front();
            }
            self.owed.push_back(Owed { peer, pending: peer_pending, since: now });
        }
        share
    }

    /// Work to send unasked: a share for the least loaded peer owed work (the longest owed of
    /// equals), if this rank can spare one.
    pub fn offer(&mut self, load: Load, now: Duration) -> Option<(u32, usize)> {
        let owed_for = self.config.owed_for;
        self.owed.retain(|o| now.saturating_sub(o.since) < owed_for);
        let (index, owed) = self.neediest(now)?;
        let share = self.share(load, owed.pending);
        if share == 0 {
            return None;
        }
        self.owed.remove(index);
        Some((owed.peer, share))
    }

    /// Queued tasks the pool's idle workers should leave alone: what [`ExportPolicy::offer`] would
    /// send now, so that work found between two polls of the communication thread waits for the
    /// neediest peer instead of being swallowed. Whatever is kept is offered at the next poll, so
    /// nothing is kept for good.
    pub fn reserve(&self, load: Load, now: Duration) -> usize {
        self.neediest(now).map_or(0, |(_, owed)| self.share(load, owed.pending))
    }

    /// The pool size to have: `wanted` is what the engine's thread policy asks for; growth only
    /// while the queue could feed the new workers.
    pub fn thread_target(&self, load: Load, wanted: usize) -> usize {
        if load.queued >= load.threads { wanted } else { wanted.min(load.threads) }
    }

    /// The pool size to have on receiving work from a peer whose pool has `sender_threads` workers.
    pub fn pool_for_import(&self, load: Load, sender_threads: usize) -> usize {
        load.threads.max(sender_threads)
    }

    /// Peers owed work now.
    pub fn owed(&self) -> usize {
        self.owed.len()
    }

    /// The least loaded peer still owed work at `now`.
    fn neediest(&self, now: Duration) -> Option<(usize, Owed)> {
        let owed_for = self.config.owed_for;
        self.owed
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, o)| now.saturating_sub(o.since) < owed_for)
            .min_by_key(|(_, o)| o.pending)
    }

    /// Tasks for a peer with `peer_pending` tasks: half the difference, from what is queued, at most
    /// a batch.
    fn share(&self, load: Load, peer_pending: usize) -> usize {
        let half_difference = load.pending().saturating_sub(peer_pending) / 2;
        half_difference.min(load.queued).min(self.config.max_batch.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Duration = Duration::from_millis(1);

    fn load(queued: usize, running: usize) -> Load {
        Load { queued, running, threads: 16 }
    }

    fn policy(max_batch: usize) -> ExportPolicy {
        ExportPolicy::new(ExportConfig { max_batch, max_owed: 3, owed_for: Duration::from_millis(5) })
    }

    #[test]
    fn wants_work_with_idle_workers_and_an_empty_queue() {
        assert!(load(0, 15).wants_work());
        assert!(!load(0, 16).wants_work(), "every worker busy");
        assert!(!load(1, 3).wants_work(), "work queued for the idle workers");
        assert!(Load { queued: 0, running: 0, threads: 1 }.wants_work());
    }

    #[test]
    fn shares_halve_the_difference_from_the_queue_at_most_a_batch() {
        let mut p = policy(4);
        assert_eq!(p.on_request(1, 0, load(3, 3), NOW), 3, "half of 6");
        assert_eq!(p.on_request(1, 2, load(3, 3), NOW), 2, "half of 4");
        assert_eq!(p.on_request(1, 0, load(1, 15), NOW), 1, "only what is queued travels");
        assert_eq!(p.on_request(1, 0, load(40, 16), NOW), 4, "a batch at most");
        assert_eq!(p.owed(), 0, "served peers are not owed");
    }

    #[test]
    fn no_hot_potato_between_equals() {
        let mut p = policy(4);
        assert_eq!(
            p.on_request(1, 1, load(1, 1), NOW),
            0,
            "two tasks stay here rather than go to a rank with one"
        );
        assert_eq!(p.on_request(2, 5, load(4, 2), NOW), 0);
        assert_eq!(p.owed(), 2);
    }

    #[test]
    fn refused_peers_are_owed_and_offered_work_once_it_can_be_spared() {
        let mut p = policy(4);
        assert_eq!(p.on_request(7, 0, load(0, 4), NOW), 0);
        assert_eq!(p.on_request(9, 3, load(0, 4), NOW), 0);
        assert_eq!(p.on_request(7, 0, load(0, 4), NOW), 0, "asking twice is owed once");
        assert_eq!(p.owed(), 2);
        assert_eq!(p.offer(load(0, 16), NOW), None, "nothing queued to offer");
        assert_eq!(p.offer(load(2, 16), NOW), Some((7, 2)), "the least loaded first");
        assert_eq!(p.offer(load(1, 3), NOW), None, "9 has 3 tasks, this rank 4: nothing worth halving");
        assert_eq!(p.offer(load(2, 6), NOW), Some((9, 2)));
        assert_eq!(p.offer(load(9, 16), NOW), None, "nobody owed any more");
    }

    #[test]
    fn debts_expire_and_the_oldest_is_forgotten_first() {
        let mut p = policy(4);
        for peer in 0..5 {
            p.on_request(peer, 0, load(0, 1), NOW);
        }
        assert_eq!(p.owed(), 3, "at most max_owed");
        assert_eq!(p.offer(load(100, 16), NOW).map(|o| o.0), Some(2), "equals: the longest owed");
        let later = NOW + Duration::from_millis(5);
        assert_eq!(p.reserve(load(100, 16), later), 0, "owed for 5 ms only");
        assert_eq!(p.offer(load(100, 16), later), None);
        assert_eq!(p.owed(), 0, "expired debts are dropped");
    }

    #[test]
    fn settings_grow_with_the_job() {
        assert_eq!(ExportConfig::for_ranks(16).max_batch, 8);
        assert_eq!(ExportConfig::for_ranks(1000).max_batch, 31);
        assert_eq!(ExportConfig::for_ranks(100_000).max_batch, 256);
        assert_eq!(ExportConfig::for_ranks(10_000).owed_for, Duration::from_millis(100));
    }

    #[test]
    fn growth_needs_a_backlog_to_feed_the_new_workers() {
        let p = policy(4);
        assert_eq!(p.thread_target(load(16, 16), 32), 32);
        assert_eq!(p.thread_target(load(3, 16), 32), 16, "too little queued to feed them");
        assert_eq!(p.thread_target(load(3, 16), 16), 16);
    }

    #[test]
    fn pools_grow_to_the_size_of_those_that_send_work() {
        let p = policy(4);
        assert_eq!(p.pool_for_import(load(0, 0), 64), 64);
        assert_eq!(p.pool_for_import(Load { queued: 0, running: 0, threads: 128 }, 64), 128, "never shrinks");
    }

    #[test]
    fn the_reserve_is_the_next_offer_and_never_strands_work() {
        let mut p = policy(4);
        assert_eq!(p.reserve(load(5, 5), NOW), 0, "nobody owed");
        p.on_request(3, 0, load(0, 16), NOW);
        p.on_request(4, 6, load(0, 16), NOW);
        assert_eq!(p.reserve(load(1, 16), NOW), 1, "a task found now waits for peer 3");
        assert_eq!(p.reserve(load(3, 16), NOW), 3);
        assert_eq!(p.reserve(load(1, 0), NOW), 0, "one task alone is run here, not held");
        // Whatever is reserved is offered at the next poll, whatever the loads: nothing waits for good.
        for queued in 0..20 {
            for running in 0..20 {
                let l = load(queued, running);
                let kept = p.reserve(l, NOW);
                let offered = p.clone().offer(l, NOW).map_or(0, |o| o.1);
                assert_eq!(kept, offered, "{l:?}");
            }
        }
    }
}
