//! Group commit: one thread applies every mutation. It takes whatever requests have queued up while
//! the previous commit was syncing, applies them in one transaction, syncs the journal once, and
//! only then answers them all. Under load a single fsync acknowledges hundreds of creates; an
//! acknowledged request is always on disk.

use std::thread;

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use tokio::sync::{mpsc, oneshot, watch};

use super::apply::Batch;
use super::mutation::{Mutation, Outcome, PartKey, Refusal};
use super::store::{self, Store};

/// The most mutations one commit takes (bounds reply latency under a flood).
const MAX_BATCH: usize = 2048;

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
        answer
            .await
            .map_err(|_| Refusal::Internal("server is shutting down".into()))?
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
    while let Ok(first) = queue.recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => jobs.push(job),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        let mut batch = Batch::new(store, index, &mut next_seq);
        let mut replies = Vec::with_capacity(jobs.len());
        for job in jobs {
            let outcome = batch.apply(job.mutation);
            replies.push((job.reply, outcome));
        }
        let splits_finished = batch.splits_finished;
        match batch.commit() {
            Ok(candidates) => {
                stats.send_modify(|s| {
                    s.commits += 1;
                    s.mutations += replies.len() as u64;
                });
                for (reply, outcome) in replies {
                    let _ = reply.send(outcome);
                }
                for key in candidates {
                    let _ = events.split_candidates.send(key);
                }
                if splits_finished > 0 {
                    events
                        .splits_finished
                        .send_modify(|n| *n += splits_finished as u64);
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
