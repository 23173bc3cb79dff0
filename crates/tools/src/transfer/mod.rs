//! Copying trees: the engine under `canopy cp` and `canopy sync`.
//!
//! One walk of the source does everything — there is no listing phase. Each worker, as it visits an
//! entry, creates the destination directory, or copies the file, symlink or special file; big files
//! are split into chunks ([`FileChunk`]) that any worker copies, scheduled as engine jobs attached to
//! the file's directory. A directory gets its owner, permissions, xattrs and times in the engine's
//! post-order hook, once everything inside it is done.
//!
//! # Restart guarantee
//!
//! Interrupt a copy any way — Ctrl-C, `kill -9`, a crash of canopy — and run the same command again:
//! it finishes the job, copying only what is not complete, and trusts nothing incomplete.
//!
//! * **No half-made entry ever has a final name.** Files, symlinks, FIFOs, sockets and devices are
//!   built under a temporary name in their destination directory (`.canopy-tmp-` and 16 hex digits,
//!   derived from the final name) and renamed over the final name only after their data, owner,
//!   permissions, xattrs and times are all set. A reader sees the old entry or the complete new
//!   one; a rerun never sees a partial file under a final name.
//! * **What the rerun skips.** A destination regular file is complete when its size and
//!   modification time (to the nanosecond) equal the source's — the time is set last, just before
//!   the rename, so only complete copies carry it. Those files are not copied again (owner,
//!   permissions and times are corrected if they differ). Symlinks, special files and hard links
//!   are checked the same way (target, device number, link identity). Everything else is copied.
//! * **Leftovers.** The temporary of a file interrupted mid-copy is replaced when the rerun copies
//!   that file again (same temporary name), so it cannot accumulate; `canopy sync` also removes
//!   those whose source is gone. Big files are copied again from their start. A hard-linked file
//!   whose names were only partly created may be copied once more (the first name met is copied, the
//!   others linked to it).
//! * **Directories** are created under their final name at once (mode 0700 while being filled) and
//!   receive their mode, owner and times when everything below them is done; after an interruption
//!   they are right once the rerun has finished.
//! * **A source that changes during the copy** is reported (exit status 1); its copy keeps the
//!   modification time read before copying, so the next run copies it again.
//! * **The same command** must name the same copy: `cp SRC NEW` creates NEW the first time and would
//!   copy into NEW/SRC the second (as cp does), so such a copy is resumed with `cp -T SRC NEW`.
//! * **Power loss or an operating-system crash** is covered only with `--fsync`: each file's data is
//!   flushed before its rename and each directory after its entries. Without it, the kernel may
//!   lose the data of a file renamed just before the crash while its size and time survive, and a
//!   rerun would trust it; after such a crash use `canopy sync --checksum`.
//!
//! # Distribution
//!
//! Work items are plain data meant to travel to other MPI ranks: a chunk names its file by the
//! path relative to the roots and a byte range. The local runner keeps the open descriptors of the
//! file being copied next to it.

mod args;
mod attrs;
mod data;
mod dest;
mod files;
mod links;
mod listing;
mod plan;
mod progress;
mod special;
pub mod temp;
mod visitor;

pub use args::{CopyFlags, parse_size};
pub use dest::RootPair;
pub use files::FileChunk;
pub use plan::Compare;
pub use progress::Counters;
pub use temp::is_temp_name;

use crate::common::{Exit, print_error, terminal_progress_with};
use attrs::OwnerPolicy;
use canopy_engine::output::Sink;
use canopy_engine::{WalkOptions, walk};
use links::LinkGroups;
use std::sync::Arc;

/// How a transfer behaves.
#[derive(Clone, Debug)]
pub struct TransferOptions {
    /// `sync`: replace a destination entry of another type where a directory goes (cp refuses).
    pub replace_non_directories: bool,
    /// `sync` with deletion: a directory where a non-directory goes was removed by the prune pass
    /// — in a dry run, where it was not, list it as replaced.
    pub blocking_directories_pruned: bool,
    pub compare: Compare,
    /// Hash source and destination of every copied byte range (`--verify`).
    pub verify: bool,
    /// Flush each file before its rename and each directory after its entries (`--fsync`).
    pub fsync: bool,
    /// List what would change, change nothing.
    pub dry_run: bool,
    /// Files bigger than this are split into chunks of this size.
    pub chunk_size: u64,
}

/// The copy visitor: see the module documentation.
pub struct Transfer {
    options: TransferOptions,
    tool: &'static str,
    roots: Vec<Arc<RootPair>>,
    owner: OwnerPolicy,
    links: LinkGroups,
    counters: Arc<Counters>,
    listing: Option<Arc<Sink>>,
    euid: u32,
}

impl TransferOptions {
    pub fn new(flags: &CopyFlags) -> Self {
        TransferOptions {
            replace_non_directories: false,
            blocking_directories_pruned: false,
            compare: Compare::SizeAndTime,
            verify: flags.verify,
            fsync: flags.fsync,
            dry_run: false,
            chunk_size: flags.chunk_size,
        }
    }
}

impl Transfer {
    pub fn new(options: TransferOptions, tool: &'static str, roots: Vec<RootPair>) -> Self {
        Transfer {
            listing: options.dry_run.then(Sink::stdout),
            options,
            tool,
            roots: roots.into_iter().map(Arc::new).collect(),
            owner: OwnerPolicy::current(),
            links: LinkGroups::default(),
            counters: Arc::default(),
            euid: rustix::process::geteuid().as_raw(),
        }
    }

    /// Copies every root to its destination; returns the exit status.
    pub fn run(&self, mut walk_options: WalkOptions) -> Exit {
        let counters = Arc::clone(&self.counters);
        let tool = self.tool;
        let progress = if self.options.dry_run {
            None
        } else {
            terminal_progress_with(move |p| counters.describe(tool, p))
        };
        if let Some((callback, _)) = &progress {
            walk_options.progress = Some(callback.clone());
        }
        let sources: Vec<Vec<u8>> = self.roots.iter().map(|r| r.source.clone()).collect();
        let outcome = walk(&sources, &walk_options, self);
        if let Some((_, bar)) = progress {
            bar.finish_and_clear();
        }
        let failures: u64 = outcome.states.iter().map(|s| s.failures).sum();
        drop(outcome.states);
        let mut exit = Exit::from_errors(outcome.errors + failures);
        if let Some(sink) = &self.listing
            && (sink.flush().is_err() || sink.failed())
        {
            print_error(self.tool, "write error");
            exit = Exit::Errors;
        }
        exit
    }
}
