//! Delivery of effects and touches to the other servers (see `effects.rs`): one task per
//! destination sends the touches queued for it and the outbox's effects in order, each batch a
//! message on its stream to the destination (`deliver_stream.rs`), retrying until the destination
//! answers; answers that wait for their effects are released as they arrive.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use fjall::Readable;
use tokio::sync::{Notify, watch};

use super::deliver_stream::DeliverStream;
use super::mutation::Mutation;
use super::store::{self, Store, outbox_key, outbox_prefix};
use super::writer::Writer;
use crate::proto::{DeliverRequest, Effect, Touch};

/// Effects sent in one message.
const PAGE: usize = 512;
const MAX_BACKOFF: Duration = Duration::from_secs(2);

#[derive(Default)]
struct PendingTouches {
    /// (object, kind) -> latest time.
    touches: HashMap<(u64, i32), i64>,
    /// How many batches of touches were queued so far.
    queued: u64,
}

/// One destination server.
struct Link {
    pending: Mutex<PendingTouches>,
    wake: Notify,
    /// The queued-batch count the destination has applied.
    touches_arrived: watch::Sender<u64>,
    /// The highest effect sequence number committed to the outbox for it.
    committed: watch::Sender<u64>,
    /// The highest effect sequence number it has applied.
    effects_arrived: watch::Sender<u64>,
}

pub struct Outbound {
    /// Per destination server; `None` for this server itself.
    links: Vec<Option<Link>>,
    /// How long an answer waits for its effects to arrive (a server that is down gets them later).
    wait: Duration,
}

impl Outbound {
    pub fn new(index: u32, servers: u32, wait: Duration) -> Self {
        let links = (0..servers)
            .map(|dest| {
                (dest != index).then(|| Link {
                    pending: Mutex::default(),
                    wake: Notify::new(),
                    touches_arrived: watch::channel(0).0,
                    committed: watch::channel(0).0,
                    effects_arrived: watch::channel(0).0,
                })
            })
            .collect();
        Self { links, wait }
    }

    fn link(&self, dest: u32) -> Option<&Link> {
        self.links.get(dest as usize).and_then(Option::as_ref)
    }

    /// Queues touches for delivery now; returns the marks to wait for, per destination.
    pub fn queue_touches(&self, touches: &BTreeMap<u32, Vec<Touch>>) -> Vec<(u32, u64)> {
        let mut marks = Vec::with_capacity(touches.len());
        for (&dest, list) in touches {
            let Some(link) = self.link(dest) else { continue };
            let mut pending = link.pending.lock().unwrap_or_else(PoisonError::into_inner);
            for touch in list {
                let latest = pending.touches.entry((touch.id, touch.kind)).or_insert(touch.time_ns);
                *latest = (*latest).max(touch.time_ns);
            }
            pending.queued += 1;
            marks.push((dest, pending.queued));
            drop(pending);
            link.wake.notify_one();
        }
        marks
    }

    /// Effects up to these sequence numbers are committed to the outbox.
    pub fn committed(&self, outbox: &BTreeMap<u32, u64>) {
        for (&dest, &seq) in outbox {
            if let Some(link) = self.link(dest) {
                link.committed.send_if_modified(|c| {
                    let newer = seq > *c;
                    *c = (*c).max(seq);
                    newer
                });
                link.wake.notify_one();
            }
        }
    }

    /// Waits (bounded) until these effects and touches arrived at their servers.
    pub async fn arrived(&self, outbox: &BTreeMap<u32, u64>, touches: &[(u32, u64)]) {
        let waits = async {
            for (&dest, &seq) in outbox {
                if let Some(link) = self.link(dest) {
                    let _ = link.effects_arrived.subscribe().wait_for(|&arrived| arrived >= seq).await;
                }
            }
            for &(dest, mark) in touches {
                if let Some(link) = self.link(dest) {
                    let _ = link.touches_arrived.subscribe().wait_for(|&arrived| arrived >= mark).await;
                }
            }
        };
        let _ = tokio::time::timeout(self.wait, waits).await;
    }

    /// Starts a delivery task per destination, beginning with what the outbox holds from before
    /// a restart.
    pub fn start_delivery(
        self: &Arc<Self>,
        from: u32,
        streams: Vec<DeliverStream>,
        store: Store,
        writer: Writer,
        stopped: watch::Receiver<bool>,
    ) -> store::StoreResult<()> {
        let snapshot = store.snapshot();
        for (dest, stream) in streams.into_iter().enumerate() {
            let Some(link) = self.link(dest as u32) else { continue };
            if let Some(item) = snapshot.prefix(&store.pending, outbox_prefix(Some(dest as u32))).next_back()
            {
                let (key, _) = item.into_inner()?;
                let seq = u64::from_be_bytes(key[5..13].try_into().expect("outbox key"));
                link.committed.send_modify(|c| *c = (*c).max(seq));
            }
            let delivery = Delivery {
                outbound: Arc::clone(self),
                from,
                dest: dest as u32,
                stream,
                store: store.clone(),
                writer: writer.clone(),
                stopped: stopped.clone(),
            };
            tokio::spawn(delivery.run());
        }
        Ok(())
    }
}

struct Delivery {
    outbound: Arc<Outbound>,
    from: u32,
    dest: u32,
    stream: DeliverStream,
    store: Store,
    writer: Writer,
    stopped: watch::Receiver<bool>,
}

impl Delivery {
    fn link(&self) -> &Link {
        self.outbound.link(self.dest).expect("a delivery task exists only for other servers")
    }

    async fn run(mut self) {
        let mut stopped = self.stopped.clone();
        let mut sent_through = 0;
        let mut backoff = Duration::from_millis(20);
        loop {
            if *stopped.borrow() {
                return;
            }
            let (touches, queued) = self.take_touches();
            let effects = match self.outbox_after(sent_through) {
                Ok(effects) => effects,
                Err(e) => {
                    super::log::line(self.from, &format!("reading the outbox to server {}: {e}", self.dest));
                    Vec::new()
                }
            };
            if touches.is_empty() && effects.is_empty() {
                tokio::select! {
                    _ = self.link().wake.notified() => {}
                    _ = stopped.changed() => return,
                }
                continue;
            }
            let last = effects.last().map(|e| e.seq);
            let request = DeliverRequest { from: self.from, effects, touches };
            match self.stream.deliver(&request).await {
                Ok(_) => {
                    backoff = Duration::from_millis(20);
                    self.link().touches_arrived.send_modify(|a| *a = (*a).max(queued));
                    if let Some(last) = last {
                        sent_through = last;
                        self.link().effects_arrived.send_modify(|a| *a = (*a).max(last));
                        self.writer.submit_detached(Mutation::Delivered { dest: self.dest, through: last });
                    }
                }
                Err(status) => {
                    self.requeue(&request.touches);
                    if backoff >= MAX_BACKOFF {
                        super::log::line(
                            self.from,
                            &format!(
                                "delivering to server {} keeps failing: {}",
                                self.dest,
                                status.message()
                            ),
                        );
                    }
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        _ = stopped.changed() => return,
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    fn take_touches(&self) -> (Vec<Touch>, u64) {
        let mut pending = self.link().pending.lock().unwrap_or_else(PoisonError::into_inner);
        let touches =
            pending.touches.drain().map(|((id, kind), time_ns)| Touch { id, kind, time_ns }).collect();
        (touches, pending.queued)
    }

    /// Touches that did not arrive go out with the next attempt (later ones for the same object
    /// win, as they would have there).
    fn requeue(&self, touches: &[Touch]) {
        let mut pending = self.link().pending.lock().unwrap_or_else(PoisonError::into_inner);
        for touch in touches {
            let latest = pending.touches.entry((touch.id, touch.kind)).or_insert(touch.time_ns);
            *latest = (*latest).max(touch.time_ns);
        }
    }

    /// Committed effects for the destination after sequence number `after`, in order.
    fn outbox_after(&self, after: u64) -> store::StoreResult<Vec<Effect>> {
        if *self.link().committed.borrow() <= after {
            return Ok(Vec::new());
        }
        let snapshot = self.store.snapshot();
        let range = outbox_key(self.dest, after.saturating_add(1))..=outbox_key(self.dest, u64::MAX);
        let mut effects = Vec::new();
        for item in snapshot.range(&self.store.pending, range).take(PAGE) {
            let (_, value) = item.into_inner()?;
            effects.push(store::decode("effect", &value)?);
        }
        Ok(effects)
    }
}
