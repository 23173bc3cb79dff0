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
//! Under `mpirun` the walk is spread over the ranks ([`canopy_dist::Cluster::walk`]), with the same
//! result and the same guarantee:
//!
//! * Work travels as plain data. A directory whose work continues on another rank lends its stand-in
//!   there the destination as the root pair and the path below it ([`DestDir::lend`]), reopened from
//!   the destination root with `O_NOFOLLOW` at every step. A big file's chunk names its file the
//!   same way, with the byte range and the identities (device, inode) of the source and of the
//!   temporary, which the rank that copies it checks before writing a byte.
//! * Post-order work stays exact: a directory's attributes are set once, by the rank holding the
//!   directory, after everything below it is done on every rank (the engine's completions). A big
//!   file is finished — attributes, flush, rename — once, by the rank that opened it, when its last
//!   chunk is done wherever that was: chunks copied elsewhere are reported back with the data of
//!   the directory they count toward ([`crate::common::pieces`]).
//! * Hard links stay hard links across ranks: names of one inode met by different ranks meet in the
//!   destination file system, where `link(2)` elects one copy ([`shared_links`]). The roots' copies
//!   get their attributes last, once every rank has cleaned up there.
//! * Dry-run listings go to rank 0 (the cluster's output forwarding); errors are reported by the
//!   rank that meets them; the exit status is agreed over the ranks.

mod args;
mod attrs;
mod data;
mod dest;
mod files;
mod links;
mod listing;
mod plan;
mod progress;
mod shared_links;
mod special;
pub mod temp;
mod visitor;

pub use args::{CopyFlags, parse_size};
pub use dest::{DestDir, RootPair};
pub use files::FileChunk;
pub use plan::Compare;
pub use progress::Counters;
pub use temp::is_temp_name;

use crate::common::pieces::Pieces;
use crate::common::{Exit, cluster_stdout, report_write_errors, terminal_progress_with};
use attrs::OwnerPolicy;
use canopy_dist::{Cluster, Plan};
use canopy_engine::output::Sink;
use canopy_engine::{DirNode, WalkOptions};
use files::InFlight;
use links::LinkGroups;
use shared_links::SharedLinks;
use std::sync::{Arc, Mutex};

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
    /// Under MPI, the directory where the names of one inode met by different ranks meet (see
    /// [`shared_links`]): the directory copied into, or the copy itself; and whether its last
    /// component may be a symlink.
    pub link_area: (Vec<u8>, bool),
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
    /// Big files being copied in chunks, opened here.
    copies: Pieces<InFlight>,
    /// The walk is spread over several processes.
    distributed: bool,
    /// Under MPI (not in a dry run): where hard links meet across processes.
    shared_links: Option<SharedLinks>,
    /// Under MPI: roots whose copies get their attributes once every process is done.
    deferred_roots: Mutex<Vec<Arc<DirNode<DestDir>>>>,
}

impl TransferOptions {
    pub fn new(flags: &CopyFlags, link_area: (Vec<u8>, bool)) -> Self {
        TransferOptions {
            replace_non_directories: false,
            blocking_directories_pruned: false,
            compare: Compare::SizeAndTime,
            verify: flags.verify,
            fsync: flags.fsync,
            dry_run: false,
            chunk_size: flags.chunk_size,
            link_area,
        }
    }
}

impl Transfer {
    /// A transfer on `cluster`; collective when a dry run lists (rank 0 prints every rank's lines).
    pub fn new(
        options: TransferOptions,
        tool: &'static str,
        roots: Vec<RootPair>,
        cluster: &Cluster,
    ) -> Self {
        let distributed = cluster.size() > 1;
        let listing = options.dry_run.then(|| cluster_stdout(cluster));
        let shared_links = (distributed && !options.dry_run)
            .then(|| SharedLinks::new(options.link_area.0.clone(), options.link_area.1));
        Transfer {
            listing,
            options,
            tool,
            roots: roots.into_iter().map(Arc::new).collect(),
            owner: OwnerPolicy::current(),
            links: LinkGroups::default(),
            counters: Arc::default(),
            euid: rustix::process::geteuid().as_raw(),
            copies: Pieces::new(cluster.rank()),
            distributed,
            shared_links,
            deferred_roots: Mutex::default(),
        }
    }

    /// Where hard links meet across processes, when they do (under MPI, not in a dry run).
    fn shared_links(&self) -> Option<&SharedLinks> {
        self.shared_links.as_ref()
    }

    /// Copies every root to its destination, with every process of `cluster`; returns this
    /// process's exit status. Collective.
    pub fn run(&self, mut walk_options: WalkOptions, cluster: &Cluster, plan: &Plan) -> Exit {
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
        let outcome = cluster.walk(&sources, &walk_options, self, plan);
        if let Some((_, bar)) = progress {
            bar.finish_and_clear();
        }
        let mut failures: u64 = outcome.states.iter().map(|s| s.failures).sum();
        drop(outcome.states);
        if self.distributed && !self.options.dry_run {
            failures += self.finish_on_every_process(cluster);
        }
        let mut exit = Exit::from_errors(outcome.errors + failures);
        if report_write_errors(self.listing.as_deref()) {
            exit = Exit::Errors;
        }
        exit
    }
}
