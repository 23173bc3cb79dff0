//! Group commit: one thread applies every mutation. It takes whatever requests have queued up while
//! the previous commit was syncing, applies them in one transaction, syncs the journal once, and
//! only then answers them all. Under load a single fsync acknowledges many creates; an
//! acknowledged request is always on disk.
//!
//! Synchronous clients all get their answers at the end of one sync and send their next requests
//! together a moment later. Committing the first of those alone would split them over two syncs,
//! so when the last batch showed concurrency the writer lingers for the rest — at most half a
//! sync's duration, and never when requests arrive one at a time.

use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use tokio::sync::{mpsc, oneshot, watch};

use super::apply::Batch;
use super::mutation::{Mutation, Outcome, PartKey, Refusal};
use super::store::{self, Store};

/// The most mutations one commit takes (bounds reply latency under a flood).
const MAX_BATCH: usize = 2048;
/// The longest the writer waits for stragglers of a concurrent group.
const MAX_LINGER: Duration = Duration::from_millis(2);

struct Job {
    mutation: Mutation,
    reply: oneshot::Sender<Result<Outcome, Refusal>>,
}

/// What the writer tells the rest of the server after each commit.
pub struct WriterEvents {
    /// Partitions over their split threshold.
    pub split_candidates: mpsc::UnboundedSender<PartKey>,
    /// Bumped whenever a split finishes (or is abandoned): requests frozen by it may retry.
    pub splits_finished: watch::Sender<u64>,
}

#[derive(Clone)]
pub struct Writer {
    jobs: Sender<Job>,
}

/// Counters of the writer's work, for `canopy dirsvc` diagnostics and the benchmark.
#[derive(Clone, Copy, Debug, Default)]
pub struct CommitStats {
    pub commits: u64,
    pub mutations: u64,
    /// Time spent in commits (almost all of it the journal fsync).
    pub sync_time: Duration,
}

impl Writer {
    pub fn spawn(
        store: Store,
        index: u32,
        events: WriterEvents,
        stats: watch::Sender<CommitStats>,
    ) -> Result<(Self, thread::JoinHandle<()>), store::StoreError> {
        let next_seq = store::get_next_seq(&store.snapshot(), &store)?.unwrap_or(1);
        let (jobs, queue) = crossbeam_channel::unbounded();
        let handle = thread::Builder::new()
            .name(format!("dirsvc-writer-{index}"))
            .spawn(move || run(&store, index, next_seq, &queue, &events, &stats))
            .map_err(|e| store::StoreError(format!("cannot start writer thread: {e}")))?;
        Ok((Self { jobs }, handle))
    }

    pub async fn submit(&self, mutation: Mutation) -> Result<Outcome, Refusal> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job { mutation, reply })
            .map_err(|_| Refusal::Internal("server is shutting down".into()))?;
        answer.await.map_err(|_| Refusal::Internal("server is shutting down".into()))?
    }
}

fn run(
    store: &Store,
    index: u32,
    mut next_seq: u64,
    queue: &Receiver<Job>,
    events: &WriterEvents,
    stats: &watch::Sender<CommitStats>,
) {
    let mut expected = 1;
    let mut last_sync = Duration::ZERO;
    while let Ok(first) = queue.recv() {
        let mut jobs = vec![first];
        drain(queue, &mut jobs);
        if jobs.len() < expected {
            let deadline = Instant::now() + (last_sync / 2).min(MAX_LINGER);
            while jobs.len() < expected {
                match queue.recv_deadline(deadline) {
                    Ok(job) => {
                        jobs.push(job);
                        drain(queue, &mut jobs);
                    }
                    Err(_) => break,
                }
            }
        }
        expected = jobs.len().min(MAX_BATCH);
        let mut batch = Batch::new(store, index, &mut next_seq);
        let mut replies = Vec::with_capacity(jobs.len());
        for job in jobs {
            let outcome = batch.apply(job.mutation);
            replies.push((job.reply, outcome));
        }
        let splits_finished = batch.splits_finished;
        let syncing = Instant::now();
        let committed = batch.commit();
        last_sync = syncing.elapsed();
        match committed {
            Ok(candidates) => {
                stats.send_modify(|s| {
                    s.commits += 1;
                    s.mutations += replies.len() as u64;
                    s.sync_time += last_sync;
                });
                for (reply, outcome) in replies {
                    let _ = reply.send(outcome);
                }
                for key in candidates {
                    let _ = events.split_candidates.send(key);
                }
                if splits_finished > 0 {
                    events.splits_finished.send_modify(|n| *n += splits_finished as u64);
                }
            }
            Err(e) => {
                // Nothing of this batch is durable: refuse it all, and stop, since the journal can
                // no longer be trusted; a restart recovers from what was synced.
                eprintln!("dirsvc server {index}: commit failed, stopping: {e}");
                for (reply, _) in replies {
                    let _ = reply.send(Err(Refusal::Internal(format!("commit failed: {e}"))));
                }
                std::process::exit(70);
            }
        }
    }
}

/// Takes every job already queued, up to the batch limit.
fn drain(queue: &Receiver<Job>, jobs: &mut Vec<Job>) {
    while jobs.len() < MAX_BATCH {
        match queue.try_recv() {
            Ok(job) => jobs.push(job),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
        }
    }
}
