//! GIGA+ splitting, driven by the server holding the overflowing partition k (level L):
//!
//! 1. SplitBegin (durable): k records `splitting_to = c` (c = k + 2^L). From this commit on, every
//!    request for a name in the moving half (hash mod 2^(L+1) == c) waits; the rest of k serves on.
//! 2. Install: the moving half is copied to c on its server in chunks; the last chunk activates c.
//!    Chunks only land in an inactive c, and the first resets it, so retries after a crash of
//!    either side are safe; an already active c answers "already done".
//! 3. The directory's metadata object ORs c into its bitmap, so any client that is redirected
//!    from now on fetches a bitmap that knows c.
//! 4. SplitFinish (durable): k deletes the moved entries and sets c in its bitmap (level L+1);
//!    waiting requests resume and are answered "wrong partition" with the new bitmap.
//!
//! Between 2 and 4 each name of the moving half is served by exactly one partition: c is active,
//! and k refuses to touch it. A restarted server resumes any split recorded in step 1.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::core::Core;
use super::mutation::{Mutation, Outcome, PartKey, SplitPlan};
use super::store;
use crate::mapping::{name_hash, owns};
use crate::proto::{Entry, FailureKind, InstallSplitRequest, MergeBitmapRequest, PartitionRef};
use crate::transport::RpcClient;

/// Entries per install request.
const CHUNK: usize = 2048;
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long a partition whose split failed waits before another attempt.
const GIVE_UP_PAUSE: Duration = Duration::from_secs(5);

pub struct Splitter {
    core: Arc<Core>,
    peers: Vec<RpcClient>,
    /// Partitions with a split task running; `true` when another split was asked for meanwhile.
    running: Mutex<HashMap<PartKey, bool>>,
    stopped: watch::Receiver<bool>,
}

enum InstallError {
    /// The child partition does not exist: the split cannot happen.
    Permanent(String),
    /// The child's server is unreachable or busy: try again.
    Transient(String),
}

impl Splitter {
    /// Starts splitting partitions reported by the writer, after resuming interrupted splits.
    pub fn spawn(
        core: Arc<Core>,
        peers: Vec<RpcClient>,
        mut candidates: mpsc::UnboundedReceiver<PartKey>,
        interrupted: Vec<SplitPlan>,
        stopped: watch::Receiver<bool>,
    ) {
        let mut stop = stopped.clone();
        let splitter = Arc::new(Self { core, peers, running: Mutex::new(HashMap::new()), stopped });
        for plan in interrupted {
            Arc::clone(&splitter).start(plan.at, Some(plan));
        }
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    candidate = candidates.recv() => match candidate {
                        Some(at) => Arc::clone(&splitter).start(at, None),
                        None => return,
                    },
                    _ = stop.changed() => return,
                }
            }
        });
    }

    fn start(self: Arc<Self>, at: PartKey, resume: Option<SplitPlan>) {
        {
            let mut running = self.running.lock().expect("split registry");
            if let Some(again) = running.get_mut(&at) {
                *again = true;
                return;
            }
            running.insert(at, false);
        }
        tokio::spawn(async move {
            let mut plan = resume;
            loop {
                let next = match plan.take() {
                    Some(plan) => Some(plan),
                    None => self.begin(at).await,
                };
                match next {
                    Some(plan) => {
                        if let Err(message) = self.drive(&plan).await {
                            self.log(&format!("split of {:#x}/{} stopped: {message}", at.0, at.1));
                            // Stay registered for a while so the next creates do not retry a
                            // split that cannot work right away.
                            tokio::time::sleep(GIVE_UP_PAUSE).await;
                            self.running.lock().expect("split registry").remove(&at);
                            return;
                        }
                    }
                    None => {
                        let mut running = self.running.lock().expect("split registry");
                        if running.get(&at) == Some(&true) {
                            running.insert(at, false);
                            continue;
                        }
                        running.remove(&at);
                        return;
                    }
                }
            }
        });
    }

    async fn begin(&self, at: PartKey) -> Option<SplitPlan> {
        match self.core.writer.submit(Mutation::SplitBegin { at }).await {
            Ok(Outcome::Split(plan)) => Some(plan),
            Ok(_) => None,
            Err(refusal) => {
                self.log(&format!("cannot begin split of {:#x}/{}: {refusal:?}", at.0, at.1));
                None
            }
        }
    }

    async fn drive(&self, plan: &SplitPlan) -> Result<(), String> {
        let mut backoff = Duration::from_millis(20);
        loop {
            match self.install(plan).await {
                Ok(()) => break,
                Err(InstallError::Permanent(message)) => {
                    let _ = self.core.writer.submit(Mutation::SplitAbort { at: plan.at }).await;
                    return Err(message);
                }
                Err(InstallError::Transient(message)) => {
                    self.check_running()?;
                    if backoff >= MAX_BACKOFF {
                        self.log(&format!("split install retrying: {message}"));
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
        self.publish_bitmap(plan).await;
        self.check_running()?;
        self.core
            .writer
            .submit(Mutation::SplitFinish { at: plan.at })
            .await
            .map(|_| ())
            .map_err(|refusal| format!("finish: {refusal:?}"))
    }

    async fn install(&self, plan: &SplitPlan) -> Result<(), InstallError> {
        let (dir, index) = plan.at;
        let snapshot = self.core.store.snapshot();
        let moving: Vec<Entry> = store::scan_partition(&snapshot, &self.core.store, dir, index)
            .map_err(|e| InstallError::Permanent(e.to_string()))?
            .into_iter()
            .filter(|(name, _)| owns(plan.child, plan.level + 1, name_hash(name)))
            .map(|(name, record)| Entry {
                name,
                id: record.id,
                kind: record.kind,
                link_intent: record.link_intent,
                ..Entry::default()
            })
            .collect();
        drop(snapshot);
        let chunks: Vec<&[Entry]> =
            if moving.is_empty() { vec![&[]] } else { moving.chunks(CHUNK).collect() };
        let last = chunks.len() - 1;
        let mut peer = self.peers[plan.child_server as usize].clone();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let request = InstallSplitRequest {
                at: Some(PartitionRef { dir, partition: plan.child }),
                reset: i == 0,
                entries: chunk.to_vec(),
                activate: i == last,
                bitmap: plan.bitmap_after.as_bytes().to_vec(),
            };
            let ack = peer
                .install_split(request)
                .await
                .map_err(|status| InstallError::Transient(status.message().to_string()))?
                .into_inner();
            if ack.already_done {
                return Ok(());
            }
            if let Some(failure) = ack.failure {
                return Err(match failure.kind() {
                    FailureKind::Busy => InstallError::Transient(failure.message),
                    _ => InstallError::Permanent(failure.message),
                });
            }
        }
        Ok(())
    }

    /// Tells the metadata object about the new partition; retried until it answers, since a
    /// client redirected after step 4 must find the new bit there.
    async fn publish_bitmap(&self, plan: &SplitPlan) {
        let mut peer = self.peers[plan.meta_server as usize].clone();
        let mut backoff = Duration::from_millis(20);
        loop {
            let request =
                MergeBitmapRequest { dir: plan.at.0, bitmap: plan.bitmap_after.as_bytes().to_vec() };
            match peer.merge_bitmap(request).await {
                Ok(reply) => {
                    if let Some(failure) = reply.into_inner().failure {
                        self.log(&format!("metadata object refused the new bitmap: {}", failure.message));
                    }
                    return;
                }
                Err(status) => {
                    if self.check_running().is_err() {
                        return;
                    }
                    if backoff >= MAX_BACKOFF {
                        self.log(&format!("bitmap update retrying: {}", status.message()));
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// A stopping server leaves splits half done: the durable `splitting_to` resumes them.
    fn check_running(&self) -> Result<(), String> {
        if *self.stopped.borrow() {
            Err("server is stopping; the split resumes at the next start".into())
        } else {
            Ok(())
        }
    }

    fn log(&self, message: &str) {
        super::log::line(self.core.index, message);
    }
}
