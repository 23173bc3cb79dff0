//! Housekeeping, every few seconds: closes the opens of mount sessions not heard from for
//! `SESSION_LEASE` (their mounts died), and settles link intents nobody settled: a client that died between counting a new name
//! (`AddLink`) and creating its entry, or whose create was lost with a crashed server. Every few
//! seconds, intents older than a grace period are settled by asking the name's partition
//! (`FenceLink`): it answers the entry the intent made, or makes sure the entry will never be
//! made (a late create carrying the intent is refused) — then the name is uncounted. No clock has to
//! agree with another: the fence decides, the grace period only spares links still in progress.
//! A server that was down settles its intents when it is back.

use std::sync::Arc;
use std::time::Duration;

use fjall::Readable;
use tokio::sync::watch;

use super::core::Core;
use super::mutation::Mutation;
use super::store::{self, INTENTS, intent_of};
use crate::client::Client;
use crate::error::{ErrorKind, Result};
use crate::ids::now_ns;
use crate::proto::LinkIntent;

/// How often old intents are looked for.
const PERIOD: Duration = Duration::from_secs(5);
/// How old an intent must be before it is settled (links normally finish in milliseconds).
pub const GRACE: Duration = Duration::from_secs(10);
/// How long a mount session's opens outlive the last word from it (a mount renews it every
/// `crate::mount` keepalive period, a fraction of this).
pub const SESSION_LEASE: Duration = Duration::from_secs(60);

pub fn spawn(core: Arc<Core>, client: Arc<Client>, mut stopped: watch::Receiver<bool>) {
    tokio::spawn(async move {
        loop {
            core.close_lapsed(SESSION_LEASE).await;
            if let Err(e) = settle(&core, &client, GRACE).await {
                super::log::line(core.index, &format!("settling link intents: {e}"));
            }
            tokio::select! {
                () = tokio::time::sleep(PERIOD) => {}
                _ = stopped.changed() => return,
            }
        }
    });
}

/// Settles the intents older than `grace`; returns how many were settled.
pub async fn settle(core: &Core, client: &Client, grace: Duration) -> Result<usize> {
    let cutoff = now_ns() - i64::try_from(grace.as_nanos()).unwrap_or(i64::MAX);
    let snapshot = core.store.snapshot();
    let mut old = Vec::new();
    for item in snapshot.prefix(&core.store.pending, [INTENTS]) {
        let (key, value) = item.into_inner().map_err(|e| crate::error::Error::io(e.to_string()))?;
        let intent: LinkIntent =
            store::decode("link intent", &value).map_err(|e| crate::error::Error::io(e.to_string()))?;
        if intent.created_ns <= cutoff {
            old.push((intent_of(&key), intent));
        }
    }
    drop(snapshot);
    let mut settled = 0;
    for ((id, number), intent) in old {
        let made = match client.fence_link(intent.dir, &intent.name, id, number).await {
            Ok(()) => true,
            Err(e) if e.kind == ErrorKind::NotFound => false,
            // Unreachable partition: try again next time.
            Err(_) => continue,
        };
        if core.writer.submit(Mutation::SettleLink { id, intent: number, made }).await.is_ok() {
            settled += 1;
        }
    }
    Ok(settled)
}
