//! Copying trees: the engine under `canopy cp` and `canopy sync`.
//!
//! One walk of the source does everything — there is no listing phase. Each worker, as it visits an
//! entry, creates the destination directory, or copies the file, symlink or special file; big files
//! are split into chunks ([`FileChunk`]) that any worker copies, scheduled as engine jobs attached to
//! the file's directory and generated lazily, one after the other, so that a file of any size costs
//! the same memory. A directory gets its owner, permissions, xattrs and times in the engine's
//! post-order hook, once everything inside it is done. What is copied, what is kept and what is done
//! with what the destination already has follows rsync's or cp's rules ([`policy`]); what was done is
//! told as those tools tell it ([`listing`], [`itemize`], [`totals`]).
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
//! * **What the rerun skips.** `sync` skips, as rsync does, a file whose size and modification
//!   time (whole seconds) are the source's. `cp` copies everything again, as cp does, except on the
//!   rerun of an interrupted copy: the copy's top directory carries a marker naming the source while
//!   the copy is in progress ([`marker`]), and a rerun that finds it resumes into that directory
//!   (never nesting `DEST/SRC`) and keeps each file that was renamed into place after the marker
//!   was made, has the source's size and — times kept — its modification time (otherwise it is not
//!   older than the source's last change). Owner, permissions and times are corrected if they
//!   differ. Symlinks, special files and hard links are checked the same way (target, device
//!   number, link identity). Everything else is copied.
//! * **Leftovers.** The temporary of a file interrupted mid-copy is replaced when the rerun copies
//!   that file again (same temporary name), so it cannot accumulate; `canopy sync --delete` also
//!   removes those whose source is gone. Big files are copied again from their start. A
//!   hard-linked file whose names were only partly created may be copied once more (the first name
//!   met is copied, the others linked to it).
//! * **Directories** are created under their final name at once (mode 0700 while being filled) and
//!   receive their mode, owner and times when everything below them is done; after an interruption
//!   they are right once the rerun has finished.
//! * **A source that changes during the copy** is reported (exit status 1); its copy keeps the
//!   modification time read before copying, so the next run copies it again.
//! * **Power loss or an operating-system crash** is covered only with `--fsync`: each file's data is
//!   flushed before its rename and each directory after its entries. Without it, the kernel may
//!   lose the data of a file renamed just before the crash while its size and time survive, and a
//!   rerun would trust it; after such a crash use `canopy sync -a --checksum`.
//!
//! # Distribution
//!
//! Under `mpirun` the walk is spread over the ranks ([`canopy_distwalk::Cluster::walk`]), with the same
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
//! * Listings go to rank 0 (the cluster's output forwarding); errors are reported by the rank that
//!   meets them; totals are summed and the exit status is agreed over the ranks.

mod args;
mod attrs;
mod chunks;
mod data;
mod dest;
mod destination;
mod entries;
mod files;
pub mod filter;
mod itemize;
mod links;
pub mod listing;
pub mod marker;
mod plan;
pub mod policy;
mod quote;
mod shared_links;
mod special;
pub mod temp;
mod totals;
mod visitor;

pub use args::{CopyFlags, MIN_CHUNK_SIZE, Reflink, parse_chunk_size};
pub use dest::{DestDir, RootPair};
pub use files::FileChunk;
pub use filter::Filter;
pub use itemize::push_name as push_list_name;
pub use listing::{Listing, Style};
pub use policy::{Existing, Keep, Scope};
pub use totals::{Numbers, Totals, TransferSummary};

use crate::common::pieces::Pieces;
use crate::common::{Progress, report_write_errors};
use attrs::OwnerPolicy;
use canopy_distwalk::{Cluster, Plan};
use canopy_engine::{DirNode, WalkOptions};
use files::InFlight;
use links::LinkGroups;
use shared_links::SharedLinks;
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How a transfer behaves.
#[derive(Clone, Debug)]
pub struct TransferOptions {
    pub keep: Keep,
    pub scope: Scope,
    pub existing: Existing,
    /// `sync`: a non-directory where a directory goes is replaced, an empty directory where a
    /// non-directory goes is removed (cp refuses both).
    pub replace_non_directories: bool,
    /// Hash source and destination of every copied byte range (`--verify`).
    pub verify: bool,
    /// Flush each file before its rename and each directory after its entries (`--fsync`).
    pub fsync: bool,
    /// Tell what would change, change nothing.
    pub dry_run: bool,
    /// Files bigger than this are split into chunks of this size.
    pub chunk_size: u64,
    pub reflink: Reflink,
    /// Under MPI, the directory where the names of one inode met by different ranks meet (see
    /// [`shared_links`]): the directory copied into, or the copy itself; and whether its last
    /// component may be a symlink.
    pub link_area: (Vec<u8>, bool),
    /// The file creation mask, for the modes of new entries whose source's are not kept.
    pub umask: u32,
    /// cp's rules where modes and owners are not kept: a new directory keeps its sticky bit, a
    /// file written over keeps its owner (rsync's: neither).
    pub cp_rules: bool,
    /// rsync's include/exclude rules.
    pub filter: Option<Arc<Filter>>,
    /// What is told on stdout about each entry, and where.
    pub listing: Option<Arc<Listing>>,
}

impl TransferOptions {
    /// Options of a copy that keeps everything and lists nothing; the tools adjust them.
    pub fn new(flags: &CopyFlags, existing: Existing, link_area: (Vec<u8>, bool)) -> Self {
        TransferOptions {
            keep: Keep::ALL,
            scope: Scope::ALL,
            existing,
            replace_non_directories: false,
            verify: flags.verify,
            fsync: flags.fsync,
            dry_run: false,
            chunk_size: flags.chunk_size,
            reflink: Reflink::Auto,
            link_area,
            umask: policy::current_umask(),
            cp_rules: false,
            filter: None,
            listing: None,
        }
    }
}

/// The copy visitor: see the module documentation.
pub struct Transfer {
    options: TransferOptions,
    tool: &'static str,
    roots: Vec<Arc<RootPair>>,
    owner: OwnerPolicy,
    links: LinkGroups,
    totals: Arc<Totals>,
    listing: Option<Arc<Listing>>,
    euid: u32,
    /// Big files being copied in chunks, opened here.
    copies: Pieces<InFlight>,
    /// Chunk jobs scheduled and not yet started, and the most there ever were.
    /// Counted as jobs queued here less those run here: under MPI a job queued on one process may
    /// run on another, so a process's count can go below zero (the sum over processes cannot).
    chunks_queued: AtomicI64,
    chunks_queued_peak: AtomicI64,
    /// Big files whose failure this process has reported (once per file, not per chunk).
    failed_copies: Mutex<HashSet<u64>>,
    /// Problems reported so far (a copy with any keeps cp's marker), and those that were sources
    /// vanishing during the run (rsync's exit status 24).
    problems: AtomicU64,
    vanished: AtomicU64,
    /// The walk is spread over several processes.
    distributed: bool,
    /// Under MPI (not in a dry run): where hard links meet across processes.
    shared_links: Option<SharedLinks>,
    /// Under MPI: roots whose copies get their attributes once every process is done.
    deferred_roots: Mutex<Vec<Arc<DirNode<DestDir>>>>,
}

/// How a transfer ended on this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Failures reported (each with its path and reason).
    pub errors: u64,
    /// Of those, sources that vanished while the transfer ran.
    pub vanished: u64,
}

impl Transfer {
    /// A transfer on `cluster`; collective when it lists (rank 0 prints every rank's lines).
    pub fn new(
        options: TransferOptions,
        tool: &'static str,
        roots: Vec<RootPair>,
        cluster: &Cluster,
    ) -> Self {
        let distributed = cluster.size() > 1;
        let listing = options.listing.clone();
        let shared_links = (distributed && !options.dry_run && options.keep.hard_links)
            .then(|| SharedLinks::new(options.link_area.0.clone(), options.link_area.1));
        Transfer {
            listing,
            options,
            tool,
            roots: roots.into_iter().map(Arc::new).collect(),
            owner: OwnerPolicy::current(),
            links: LinkGroups::default(),
            totals: Arc::default(),
            euid: rustix::process::geteuid().as_raw(),
            copies: Pieces::new(cluster.rank()),
            chunks_queued: AtomicI64::new(0),
            chunks_queued_peak: AtomicI64::new(0),
            failed_copies: Mutex::default(),
            problems: AtomicU64::new(0),
            vanished: AtomicU64::new(0),
            distributed,
            shared_links,
            deferred_roots: Mutex::default(),
        }
    }

    /// Where hard links meet across processes, when they do (under MPI, not in a dry run).
    fn shared_links(&self) -> Option<&SharedLinks> {
        self.shared_links.as_ref()
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Copies every root to its destination, with every process of `cluster`. Collective.
    pub fn run(&self, mut walk_options: WalkOptions, cluster: &Cluster, plan: &Plan) -> Outcome {
        let totals = Arc::clone(&self.totals);
        let tool = self.tool;
        let progress =
            Progress::start_with(!self.options.dry_run, &mut walk_options, move |p| totals.describe(tool, p));
        let sources: Vec<Vec<u8>> = self.roots.iter().map(|r| r.source.clone()).collect();
        let outcome = cluster.walk(&sources, &walk_options, self, plan);
        progress.finish();
        let failures: u64 = outcome.states.iter().map(|s| s.failures).sum();
        drop(outcome.states);
        let mut errors = outcome.errors + failures;
        if self.distributed && !self.options.dry_run {
            errors += self.finish_on_every_process(cluster);
        }
        if report_write_errors(self.listing.as_ref().map(|listing| &**listing.sink())) {
            errors += 1;
        }
        Outcome { errors, vanished: self.vanished.load(Ordering::Relaxed) }
    }

    /// The most chunk jobs that were ever scheduled and not yet started at once.
    pub fn chunks_queued_peak(&self) -> i64 {
        self.chunks_queued_peak.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests;
