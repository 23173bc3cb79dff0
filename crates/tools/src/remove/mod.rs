//! Parallel removal, shared by `canopy rm` and the prune pass of `canopy sync`.
//!
//! Files are unlinked as they are visited, by whichever worker meets them; a directory is removed by
//! the engine's post-order hook as soon as everything below it is gone — bottom-up and in parallel,
//! not by one thread at the end. Every unlink is relative to the fd of the directory holding the
//! entry, which the engine opened with `O_NOFOLLOW` (and reopens only after checking it is still the
//! same directory): a directory swapped for a symlink during the run is refused where it is met, so
//! nothing outside the tree is ever removed.
//!
//! Under MPI the same holds on every rank: a directory whose work continues elsewhere lends its
//! stand-in whether everything in it goes ([`Selector::lend`] adds what the selector needs), the
//! stand-in reopens it from its root with `O_NOFOLLOW` at every step, and what could not be removed
//! there comes back with its data, so the directory is removed once, by the rank holding it, after
//! everything below it is gone on every rank.

mod conduct;
mod prompt;
mod unlink;
mod visitor;

pub use conduct::Conduct;
pub use prompt::Prompter;
pub use unlink::is_empty_dir;
pub use visitor::Remover;

use canopy_engine::{Cx, DirNode, Entry, FileKind};
use serde::{Deserialize, Serialize};
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

    /// What a stand-in of the kept directory `dir` on another process starts with (MPI).
    fn lend(&self, _dir: &DirNode<RemoveDir<Self::Data>>) -> Self::Data {
        Self::Data::default()
    }

    /// An entry inside a directory that goes is kept after all, and with it that directory (sync:
    /// what an exclude rule protects). Not asked by default.
    fn spare(&self, _entry: &Entry<'_, RemoveDir<Self::Data>>) -> bool {
        false
    }

    /// Asked right before an entry goes (or, in a dry run, would): `false` keeps it, and with it
    /// its directory (sync's `--max-delete`).
    fn admit(&self, _path: &[u8], _kind: FileKind) -> bool {
        true
    }

    /// An entry went (or, in a dry run, would have).
    fn removed(&self, _path: &[u8], _kind: FileKind) {}

    /// Change nothing, without the remover's own listing (the selector tells what would go).
    fn dry_run(&self) -> bool {
        false
    }
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
#[derive(Default, Serialize, Deserialize)]
pub struct RemoveDir<D> {
    /// The directory goes, with everything in it.
    doomed: bool,
    /// `rm -i` already asked (and was told yes) to remove this empty directory.
    confirmed: bool,
    /// Something inside could not be removed (already reported): the directory stays, quietly.
    failed: AtomicBool,
    pub data: D,
}
