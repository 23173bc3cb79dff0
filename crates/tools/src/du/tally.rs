//! What the walk keeps for each directory while it is below it (the engine's `DirData`): the
//! running sums, the hard links still open, the kept nodes of its children and, for
//! `--ncdu-json`, its part of the export. Workers add to it concurrently (a big directory's chunks
//! run on several); under MPI a directory's part walked by another rank comes back as a `Tally`
//! and is folded in with [`Tally::absorb`].

use super::export::DirExport;
use super::tree::Node;
use super::usage::SharedUsage;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tally {
    /// The directory itself and everything below it counted so far (with `-S`, everything but
    /// its subdirectories).
    pub usage: SharedUsage,
    /// With `-S`: its subdirectories, whole.
    pub below: SharedUsage,
    /// Names of hard-linked files met here whose inode is not counted yet (see `links`). Adds and
    /// takes back may cross between workers, so the count wraps through zero at times; only its
    /// value once the directory is finished matters.
    pub pending_links: AtomicU64,
    /// A subdirectory finished with its sizes still open.
    pub open_below: AtomicBool,
    kept: Mutex<Vec<Node>>,
    export: Mutex<DirExport>,
}

impl Tally {
    /// Whether the directory's sizes may still grow at the end of the walk.
    pub fn is_open(&self) -> bool {
        self.pending_links.load(Ordering::SeqCst) != 0 || self.open_below.load(Ordering::SeqCst)
    }

    pub fn add_pending_link(&self) {
        self.pending_links.fetch_add(1, Ordering::SeqCst);
    }

    pub fn take_back_pending_links(&self, n: u64) {
        self.pending_links.fetch_sub(n, Ordering::SeqCst);
    }

    pub fn mark_open_below(&self) {
        self.open_below.store(true, Ordering::SeqCst);
    }

    pub fn kept(&self) -> MutexGuard<'_, Vec<Node>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn export(&self) -> MutexGuard<'_, DirExport> {
        self.export.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Folds in what another rank collected for the same directory.
    pub fn absorb(&self, from: Tally) {
        self.usage.add(from.usage.load());
        self.below.add(from.below.load());
        self.pending_links.fetch_add(from.pending_links.into_inner(), Ordering::SeqCst);
        if from.open_below.into_inner() {
            self.mark_open_below();
        }
        self.kept().extend(from.kept.into_inner().unwrap_or_else(|e| e.into_inner()));
        self.export().absorb(from.export.into_inner().unwrap_or_else(|e| e.into_inner()));
    }
}
