//! Group commit: one thread applies every mutation. It takes whatever requests have queued up while
//! the previous commit was syncing, applies them in one transaction, syncs the journal once, and
//! only then answers them all. Under load a single fsync acknowledges many creates; an
//! acknowledged request is always on disk.
//!
//! Synchronous clients all get their answers at the end of one sync and send their next requests
//! together a moment later. Committing the first of those alone would split them over two syncs,
//! so when the last batch showed concurrency the writer lingers for the rest — at most half a
//! sync's duration, and never when requests arrive one at a time.
//!
//! A mutation that changed objects on other servers (`effects.rs`) is answered once those changes
//! arrived there: its touches go out before the commit, its effects right after, and a task waits
//! for both (bounded) while the writer goes on with the next batch.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TryRecvError};
use tokio::sync::{mpsc, oneshot, watch};

use super::apply::{Batch, Counters, Shared};
use super::deliver::Outbound;
use super::effects::JobEffects;
use super::inline::InlineIndex;
use super::mutation::{Mutation, Outcome, PartKey, Refusal};
use super::open_refs::OpenRefs;
use super::store::{self, Store};
use super::touches::Touches;

/// The most mutations one commit takes (bounds reply latency under a flood).
const MAX_BATCH: usize = 2048;
/// The longest the writer waits for stragglers of a concurrent group.
const MAX_LINGER: Duration = Duration::from_millis(2);

type Reply = oneshot::Sender<Result<Outcome, Refusal>>;

struct Pending {
    mutation: Mutation,
    /// `None`: nobody waits for the answer.
    reply: Option<Reply>,
}

/// What the writer tells the rest of the server after each commit.
pub struct WriterEvents {
    /// Partitions over their split threshold.
    pub split_candidates: mpsc::UnboundedSender<PartKey>,
    /// Bumped whenever a split finishes (or is abandoned): requests frozen by it may retry.
    pub splits_finished: watch::Sender<u64>,
}

/// The server state the writer shares with the request handlers.
#[derive(Clone)]
pub struct WriterShared {
    pub opens: Arc<OpenRefs>,
    pub touches: Arc<Touches>,
    pub inline: Arc<InlineIndex>,
    pub outbound: Arc<Outbound>,
    /// Where answers that wait for other servers are sent from.
    pub runtime: tokio::runtime::Handle,
}

#[derive(Clone)]
pub struct Writer {
    jobs: Sender<Pending>,
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
        shared: WriterShared,
    ) -> Result<(Self, thread::JoinHandle<()>), store::StoreError> {
        let snapshot = store.snapshot();
        let counter = |key| store::get_number(&snapshot, &store, key).map(|n| n.unwrap_or(1));
        let counters = Counters {
            seq: counter(store::NEXT_SEQ_KEY)?,
            intent: counter(store::NEXT_INTENT_KEY)?,
            effect: counter(store::NEXT_EFFECT_KEY)?,
        };
        drop(snapshot);
        let (jobs, queue) = crossbeam_channel::unbounded();
        let handle = thread::Builder::new()
            .name(format!("dirsvc-writer-{index}"))
            .spawn(move || run(&store, index, counters, &queue, &events, &stats, &shared))
            .map_err(|e| store::StoreError(format!("cannot start writer thread: {e}")))?;
        Ok((Self { jobs }, handle))
    }

    pub async fn submit(&self, mutation: Mutation) -> Result<Outcome, Refusal> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Pending { mutation, reply: Some(reply) })
            .map_err(|_| Refusal::Internal("server is shutting down".into()))?;
        answer.await.map_err(|_| Refusal::Internal("server is shutting down".into()))?
    }

    /// Queues a mutation whose answer nobody waits for.
    pub fn submit_detached(&self, mutation: Mutation) {
        let _ = self.jobs.send(Pending { mutation, reply: None });
    }
}

fn run(
    store: &Store,
    index: u32,
    mut counters: Counters,
    queue: &Receiver<Pending>,
    events: &WriterEvents,
    stats: &watch::Sender<CommitStats>,
    shared: &WriterShared,
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
        let batch_shared = Shared { opens: &shared.opens, touches: &shared.touches, inline: &shared.inline };
        let mut batch = Batch::new(store, index, &mut counters, batch_shared);
        let folded = shared.touches.snapshot();
        let fold = batch.fold(&folded);
        let mut replies = Vec::with_capacity(jobs.len());
        for job in jobs {
            let outcome = match &fold {
                Ok(()) => batch.apply(job.mutation),
                Err(refusal) => Err(Refusal::Internal(format!("folding touches: {refusal:?}"))),
            };
            replies.push((job.reply, outcome, batch.take_job_effects()));
        }
        // Touches are idempotent: they travel while the journal syncs.
        let mut touch_marks = Vec::with_capacity(replies.len());
        for (_, _, effects) in &replies {
            touch_marks.push(shared.outbound.queue_touches(&effects.touches));
        }
        let splits_finished = batch.splits_finished;
        let reaped = std::mem::take(&mut batch.reaped);
        let syncing = Instant::now();
        let committed = batch.commit();
        last_sync = syncing.elapsed();
        shared.opens.reaped_committed(&reaped);
        match committed {
            Ok(candidates) => {
                shared.touches.folded(&folded);
                stats.send_modify(|s| {
                    s.commits += 1;
                    s.mutations += replies.len() as u64;
                    s.sync_time += last_sync;
                });
                for ((reply, outcome, effects), touch_marks) in replies.into_iter().zip(touch_marks) {
                    shared.outbound.committed(&effects.outbox);
                    answer(shared, reply, outcome, effects, touch_marks);
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
                super::log::line(index, &format!("commit failed, stopping: {e}"));
                for (reply, _, _) in replies {
                    if let Some(reply) = reply {
                        let _ = reply.send(Err(Refusal::Internal(format!("commit failed: {e}"))));
                    }
                }
                std::process::exit(70);
            }
        }
    }
}

/// Answers a committed mutation: at once, or once its effects reached their servers.
fn answer(
    shared: &WriterShared,
    reply: Option<Reply>,
    outcome: Result<Outcome, Refusal>,
    effects: JobEffects,
    touch_marks: Vec<(u32, u64)>,
) {
    let Some(reply) = reply else {
        return;
    };
    if effects.is_empty() {
        let _ = reply.send(outcome);
        return;
    }
    let outbound = Arc::clone(&shared.outbound);
    shared.runtime.spawn(async move {
        outbound.arrived(&effects.outbox, &touch_marks).await;
        let _ = reply.send(outcome);
    });
}

/// Takes every job already queued, up to the batch limit.
fn drain(queue: &Receiver<Pending>, jobs: &mut Vec<Pending>) {
    while jobs.len() < MAX_BATCH {
        match queue.try_recv() {
            Ok(job) => jobs.push(job),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
        }
    }
}
