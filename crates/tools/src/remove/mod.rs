//! Parallel removal, shared by `canopy rm` and the prune pass of `canopy sync`.
//!
//! Files are unlinked as they are visited, by whichever worker meets them; a directory is removed by
//! the engine's post-order hook as soon as everything below it is gone — bottom-up and in parallel,
//! not by one thread at the end. Every unlink is relative to the fd of the directory holding the
//! entry, which the engine opened with `O_NOFOLLOW` (and reopens only after checking it is still the
//! same directory): a directory swapped for a symlink during the run is refused where it is met, so
//! nothing outside the tree is ever removed.

mod unlink;
mod visitor;

pub use visitor::Remover;

use canopy_engine::{Cx, Entry};
use std::sync::atomic::AtomicBool;

/// What decides which entries go: everything (`rm` without a filter), a find expression, or "no
/// counterpart in the source" (sync).
pub trait Selector: Sync + Sized {
    /// Data of a kept directory (a sync keeps the directory's counterpart in the source here).
    type Data: Default + Send + Sync;

    /// Decides for an entry whose directory is kept.
    fn select(
        &self,
        cx: &mut Cx<'_, Remover<Self>>,
        entry: &Entry<'_, RemoveDir<Self::Data>>,
    ) -> Selection<Self::Data>;

    /// The walk is done with a kept directory: release what its data holds.
    fn leave(&self, _data: &Self::Data) {}
}

pub enum Selection<D> {
    /// Remove the entry and, for a directory, everything below it.
    Remove,
    /// Keep it; a directory is entered with this data.
    Keep(D),
    /// Keep it and do not look inside.
    Skip,
}

/// Per-directory state of a removal.
#[derive(Default)]
pub struct RemoveDir<D> {
    /// The directory goes, with everything in it.
    doomed: bool,
    /// Something inside could not be removed (already reported): the directory stays, quietly.
    failed: AtomicBool,
    pub data: D,
}
