//! `canopy sync`: rsync's command line for local copies, in parallel — `SRC` into `DEST/SRC`,
//! `SRC/` into `DEST`, rsync's flags with rsync's meanings, its itemized output, its `--stats` and
//! its exit statuses — and nothing deleted without `--delete`.

mod filter_args;
mod prune;
mod roots;

use crate::common::guard::{Protected, file_id, is_within};
use crate::common::{WalkArgs, cluster_stdout, print_error, report_write_errors};
use crate::remove::Remover;
use crate::transfer::{
    CopyFlags, Existing, Filter, Keep, Listing, Numbers, RootPair, Scope, Style, Totals, Transfer,
    TransferOptions, TransferSummary,
};
use canopy_distwalk::Cluster;
use canopy_engine::sys::{open_path, stat_path};
use canopy_engine::{Follow, errno_message};
use canopy_util::path::os_to_bytes;
use clap::{ArgAction, Args};
use filter_args::FilterArgs;
use prune::{Budget, Extraneous};
use roots::{Refusal, Roots};
use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

const AFTER_HELP: &str = "\
As rsync: `canopy sync -a SRC DEST` copies the directory SRC into DEST/SRC; `canopy sync -a SRC/
DEST` copies what SRC contains into DEST (made if missing); several SOURCEs go into DEST side by
side. Nothing in DEST is deleted without --delete (or --mirror), and then only inside the
directories copied: `canopy sync -a --delete proj backup/` never touches backup/otherproject.

Without -r (or -a) directories are skipped; without -l symlinks, without -D devices and special
files are skipped (\"skipping non-regular file\"), as rsync does. A file is copied when its size or
modification time (whole seconds) differs — with -c, its size or content; -u leaves files that are
newer in DEST. Copies are made under temporary names and renamed into place when complete, so an
interrupted sync is finished by running it again.

Differences from rsync (see the README's table): files are copied by many workers at once, so
listed lines come in no fixed order; -z is accepted and ignored (a local copy has nothing to
compress); --progress shows a live total on stderr (on a terminal) and lists names like -v, rather
than a line per file; -P is --progress (temporaries of interrupted copies are always kept and
replaced); -h is --human-readable (help is --help); with -t access times are kept too. Remote
paths (HOST:PATH) are refused. Exit status as rsync's: 0 done, 3 a DEST that cannot be used,
11 DEST could not be made, 23 something failed (each failure is reported with its path and
reason), 24 only source files vanished meanwhile, 25 --max-delete stopped deletions; 2 on a usage
error (rsync: 1).

Examples:
  canopy sync -a /data/project /backup/            # → /backup/project
  canopy sync -av --delete /data/project/ /backup/project/
  canopy sync -ani --delete src/ dst/              # what would change, in rsync's %i format
  canopy sync -aHAX --mirror /data/ /mirror/       # --mirror = -aHAX --delete
  canopy sync -a --exclude='*.tmp' --exclude=/cache/ proj/ /backup/proj/
  canopy sync -ac --stats /scratch/run/ /archive/run/
  mpirun -n 16 canopy sync -a /lustre/run42 /archive/";

/// rsync's command line for local trees, in parallel; deletes nothing without --delete.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP, disable_help_flag = true)]
#[command(mut_arg("stats", |a| a.long("walk-stats")))]
pub struct SyncArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    #[command(flatten)]
    pub copy: CopyFlags,

    /// Archive mode: -rlptgoD (no -H, -A, -X)
    #[arg(short = 'a', long)]
    pub archive: bool,

    /// Recurse into directories
    #[arg(short = 'r', long)]
    pub recursive: bool,

    /// Copy symlinks as symlinks
    #[arg(short = 'l', long)]
    pub links: bool,

    /// Preserve permissions
    #[arg(short = 'p', long)]
    pub perms: bool,

    /// Preserve modification times
    #[arg(short = 't', long)]
    pub times: bool,

    /// Preserve the group
    #[arg(short = 'g', long)]
    pub group: bool,

    /// Preserve the owner (root only)
    #[arg(short = 'o', long)]
    pub owner: bool,

    /// Same as --devices --specials
    #[arg(short = 'D')]
    pub devices_specials: bool,

    /// Preserve device files (root only)
    #[arg(long)]
    pub devices: bool,

    /// Preserve special files (FIFOs, sockets)
    #[arg(long)]
    pub specials: bool,

    /// Preserve hard links
    #[arg(short = 'H', long)]
    pub hard_links: bool,

    /// Preserve ACLs (implies -p)
    #[arg(short = 'A', long)]
    pub acls: bool,

    /// Preserve extended attributes
    #[arg(short = 'X', long)]
    pub xattrs: bool,

    /// Turn off -p (after -a)
    #[arg(long)]
    pub no_perms: bool,

    /// Turn off -t
    #[arg(long)]
    pub no_times: bool,

    /// Turn off -g
    #[arg(long, visible_alias = "no-g")]
    pub no_group: bool,

    /// Turn off -o
    #[arg(long, visible_alias = "no-o")]
    pub no_owner: bool,

    /// List the names of what is transferred, created and deleted
    #[arg(short = 'v', long, action = ArgAction::Count)]
    pub verbose: u8,

    /// Output a change summary for every update (rsync's %i)
    #[arg(short = 'i', long, action = ArgAction::Count)]
    pub itemize_changes: u8,

    /// Perform a trial run with no changes made
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Skip based on checksum (xxh3 of the content), not modification time and size
    #[arg(short = 'c', long)]
    pub checksum: bool,

    /// Skip files that are newer in DEST
    #[arg(short = 'u', long)]
    pub update: bool,

    /// Don't cross file system boundaries
    #[arg(short = 'x', long)]
    pub one_file_system: bool,

    /// Accepted and ignored: a local copy has nothing to compress
    #[arg(short = 'z', long)]
    pub compress: bool,

    /// Numbers in units of 1000 (K, M, G) in --stats and -v's totals
    #[arg(short = 'h', long, action = ArgAction::Count)]
    pub human_readable: u8,

    /// A live total on stderr (on a terminal), and the names listed as with -v
    #[arg(long)]
    pub progress: bool,

    /// Same as --partial --progress
    #[arg(short = 'P')]
    pub partial_progress: bool,

    /// Accepted: temporaries of interrupted copies are always kept (and replaced by a rerun)
    #[arg(long)]
    pub partial: bool,

    /// Accepted: local copies are always of whole files
    #[arg(short = 'W', long)]
    pub whole_file: bool,

    /// Print rsync's totals at the end
    #[arg(long = "stats")]
    pub totals: bool,

    /// Delete what DEST has and SRC does not, in the directories copied
    #[arg(long, visible_aliases = ["delete-before", "delete-during"])]
    pub delete: bool,

    /// Delete after copying (implies --delete)
    #[arg(long)]
    pub delete_after: bool,

    /// Don't delete more than NUM files (0: warn about extraneous files, delete none)
    #[arg(long, value_name = "NUM")]
    pub max_delete: Option<u64>,

    /// Make DEST a mirror of SRC: -aHAX --delete
    #[arg(long)]
    pub mirror: bool,

    #[command(flatten)]
    pub filters: FilterArgs,

    /// Print help
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,

    /// SRC... DEST
    #[arg(required = true, num_args = 2.., value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// rsync's exit statuses, in order of importance (a more important one wins across processes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Ok,
    DeleteLimit,
    Vanished,
    Partial,
    FileIo,
    Selection,
    Usage,
}

impl Status {
    const ALL: [Status; 7] = [
        Status::Ok,
        Status::DeleteLimit,
        Status::Vanished,
        Status::Partial,
        Status::FileIo,
        Status::Selection,
        Status::Usage,
    ];

    fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Usage => 2,
            Status::Selection => 3,
            Status::FileIo => 11,
            Status::Partial => 23,
            Status::Vanished => 24,
            Status::DeleteLimit => 25,
        }
    }

    /// The status every process agrees on: the most important one.
    fn agreed(self, cluster: &Cluster) -> Status {
        Status::from_code(cluster.agree_exit(self as u8))
    }

    /// The status of an importance agreed over the processes.
    fn from_code(importance: u8) -> Status {
        Status::ALL[usize::from(importance).min(Status::ALL.len() - 1)]
    }

    /// rsync's closing line for a failed run.
    fn summary(self) -> Option<&'static str> {
        match self {
            Status::Partial => Some("some files/attrs were not transferred (see previous errors) (code 23)"),
            Status::Vanished => Some("some files vanished before they could be transferred (code 24)"),
            Status::DeleteLimit => Some("the --max-delete limit stopped deletions (code 25)"),
            _ => None,
        }
    }
}

/// What the flags mean for the copy.
struct Meaning {
    recursive: bool,
    keep: Keep,
    scope: Scope,
    delete: bool,
    style: Style,
}

impl SyncArgs {
    fn meaning(&self) -> Meaning {
        let archive = self.archive || self.mirror;
        let root = rustix::process::geteuid().is_root();
        let keep = Keep {
            perms: (self.perms || archive || self.acls) && !self.no_perms,
            owner: (self.owner || archive) && !self.no_owner,
            group: (self.group || archive) && !self.no_group,
            times: (self.times || archive) && !self.no_times,
            xattrs: self.xattrs || self.mirror,
            acls: self.acls || self.mirror,
            hard_links: self.hard_links || self.mirror,
        };
        let scope = Scope {
            symlinks: self.links || archive,
            devices: (self.devices || self.devices_specials || archive) && root,
            specials: self.specials || self.devices_specials || archive,
        };
        let names = self.verbose > 0 || self.progress || self.partial_progress;
        Meaning {
            recursive: self.recursive || archive,
            keep,
            scope,
            delete: self.delete || self.delete_after || self.mirror,
            style: Style::Rsync { itemize: self.itemize_changes > 0, names },
        }
    }

    fn numbers(&self) -> Numbers {
        if self.human_readable > 0 { Numbers::Human } else { Numbers::Grouped }
    }
}

pub fn run(args: SyncArgs, cluster: &Cluster) -> ExitCode {
    let started = Instant::now();
    let status = sync(&args, cluster, started).agreed(cluster);
    cluster.finish_output();
    if let Some(summary) = status.summary()
        && cluster.is_root()
    {
        print_error("sync", summary);
    }
    ExitCode::from(status.code())
}

fn sync(args: &SyncArgs, cluster: &Cluster, started: Instant) -> Status {
    let mut paths: Vec<Vec<u8>> = args.paths.iter().map(|p| os_to_bytes(p)).collect();
    let dest = paths.pop().expect("clap requires two paths or more");
    if let Some(remote) = paths.iter().chain([&dest]).find(|p| is_remote(p)) {
        let remote = String::from_utf8_lossy(remote);
        print_error(
            "sync",
            format_args!(
                "'{remote}' is a remote path: canopy sync copies local trees (a local name with a colon: ./{remote})"
            ),
        );
        return Status::Usage;
    }
    let filter = match args.filters.filter() {
        Ok(filter) => (!filter.is_empty()).then(|| Arc::new(filter)),
        Err(message) => {
            print_error("sync", message);
            return Status::FileIo;
        }
    };
    let meaning = args.meaning();
    let leader = cluster.is_root();
    if args.compress && args.verbose > 0 && leader {
        print_error("sync", "-z ignored: a local copy has nothing to compress");
    }
    let stdout = cluster_stdout(cluster);
    let listing = Arc::new(Listing::new(Arc::clone(&stdout), meaning.style));
    let Style::Rsync { names, itemize } = meaning.style else { unreachable!("sync lists like rsync") };
    let mut notes = listing.buffer();
    if names && leader {
        notes.buf().extend_from_slice(b"sending incremental file list\n");
        notes.end_record();
    }
    let roots = match roots::resolve(&paths, &dest, meaning.recursive, leader) {
        Ok(roots) => roots,
        Err(refusal) => return refused(refusal),
    };
    if let Err(message) = check_nesting(&roots.pairs, meaning.delete) {
        print_error("sync", message);
        return Status::Selection;
    }
    let made = if leader && !args.dry_run { roots.make_dest() } else { Ok(()) };
    // Every process goes on once the leader made DEST.
    if cluster.agree_exit(u8::from(made.is_err())) != 0 {
        return made.err().map_or(Status::FileIo, refused);
    }
    let Roots { pairs, created, missing, skipped } = roots;
    if leader {
        for name in &skipped {
            listing.note(&mut notes, "skipping directory ", name, "");
        }
        if let Some(created) = created.filter(|_| names || itemize) {
            listing.note(&mut notes, "created directory ", &created, "");
        }
    }
    drop(notes);
    let mut status = if missing > 0 { Status::Partial } else { Status::Ok };
    let totals = Arc::new(Totals::default());
    let budget = args.max_delete.map(|max| Arc::new(Budget::new(max)));
    let deletion = Deletion {
        args,
        cluster,
        pairs: &pairs,
        filter: &filter,
        listing: &listing,
        totals: &totals,
        budget: &budget,
        keep_times: meaning.keep.times,
    };
    if meaning.delete && !args.delete_after {
        status = status.max(deletion.run());
    }
    let existing = Existing::Rsync { checksum: args.checksum, update: args.update };
    let mut options = TransferOptions::new(&args.copy, existing, (dest.clone(), true));
    options.keep = meaning.keep;
    options.scope = meaning.scope;
    options.replace_non_directories = true;
    options.dry_run = args.dry_run;
    options.filter = filter.clone();
    options.listing = Some(Arc::clone(&listing));
    // `SRC/` names a symlink's target by its trailing slash; `SRC` a symlink itself, as in rsync.
    let mut walk = args.walk.options();
    walk.follow = Follow::Never;
    walk.same_file_system = args.one_file_system;
    let transfer = Transfer::new(options, "sync", pairs.clone(), cluster);
    let outcome = transfer.run(walk, cluster, &args.walk.plan());
    if outcome.errors > 0 {
        status =
            status.max(if outcome.errors == outcome.vanished { Status::Vanished } else { Status::Partial });
    }
    if meaning.delete && args.delete_after {
        status = status.max(deletion.run());
    }
    if let Some(budget) = &budget {
        let skipped = budget.skipped.load(Ordering::Relaxed);
        if let Some(total) = cluster.reduce(skipped, |a, b| a + b).filter(|&total| total > 0) {
            print_error(
                "sync",
                format_args!("deletions stopped due to --max-delete limit ({total} skipped)"),
            );
        }
        if skipped > 0 {
            status = status.max(Status::DeleteLimit);
        }
    }
    let summary = cluster.reduce(totals.snapshot().sum(transfer.totals().snapshot()), TransferSummary::sum);
    if let Some(summary) = summary {
        let mut text = Vec::new();
        if args.totals {
            let _ = summary.write_stats(&mut text, args.numbers());
        }
        if args.totals || args.verbose > 0 {
            let _ = summary.write_trailer(&mut text, args.numbers(), started.elapsed(), args.dry_run);
        }
        let _ = stdout.write_all(&text);
    }
    if report_write_errors([&*stdout]) {
        status = status.max(Status::Partial);
    }
    status
}

/// Reports why nothing can be copied.
fn refused(refusal: Refusal) -> Status {
    match refusal {
        Refusal::Selection(message) => {
            print_error("sync", message);
            Status::Selection
        }
        Refusal::FileIo(message) => {
            print_error("sync", message);
            Status::FileIo
        }
    }
}

/// A copy may not go into its own source; with `--delete`, a source may not lie inside the
/// directory that is pruned (rsync would delete the source itself).
fn check_nesting(pairs: &[RootPair], delete: bool) -> Result<(), String> {
    let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    for pair in pairs {
        let Ok(source) = open_path(&pair.source, pair.follow_source) else { continue };
        let Ok(source_id) = file_id(&source) else { continue };
        // A copy still to be made goes into its parent; only one that exists can be pruned.
        let existing = open_path(&pair.dest, pair.follow_dest).ok();
        let existing_copy = existing.is_some();
        let copy = existing.or_else(|| open_path(canopy_util::path::split_parent(&pair.dest).0, true).ok());
        let Some(copy) = copy else { continue };
        if is_within(&copy, source_id).unwrap_or(false) {
            return Err(format!("cannot copy '{}' into itself, '{}'", show(&pair.source), show(&pair.dest)));
        }
        if delete
            && existing_copy
            && let Ok(copy_id) = file_id(&copy)
            && is_within(&source, copy_id).unwrap_or(false)
        {
            return Err(format!(
                "'{}' lies inside '{}': --delete would remove it",
                show(&pair.source),
                show(&pair.dest)
            ));
        }
    }
    Ok(())
}

/// `--delete` over every transfer whose source is a directory (see `prune`).
struct Deletion<'a> {
    args: &'a SyncArgs,
    cluster: &'a Cluster,
    pairs: &'a [RootPair],
    filter: &'a Option<Arc<Filter>>,
    listing: &'a Arc<Listing>,
    totals: &'a Arc<Totals>,
    budget: &'a Option<Arc<Budget>>,
    keep_times: bool,
}

impl Deletion<'_> {
    /// Collective.
    fn run(&self) -> Status {
        let mut status = Status::Ok;
        for pair in self.pairs {
            let source_is_dir = stat_path(&pair.source, pair.follow_source).is_ok_and(|m| m.is_dir());
            let dest = stat_path(&pair.dest, pair.follow_dest);
            if !source_is_dir || !dest.is_ok_and(|m| m.is_dir()) {
                continue;
            }
            let protected = match Protected::current() {
                Ok(protected) => protected,
                Err(errno) => {
                    print_error(
                        "sync",
                        format_args!("cannot identify the current directory: {}", errno_message(errno)),
                    );
                    status = Status::Partial;
                    continue;
                }
            };
            if dest.is_ok_and(|m| protected.contains(m.file_id())) {
                let dest = String::from_utf8_lossy(&pair.dest);
                print_error(
                    "sync",
                    format_args!("refusing to delete in '{dest}': it is '/' or holds the current directory"),
                );
                status = Status::Partial;
                continue;
            }
            let selector = Extraneous {
                source: pair.source.clone(),
                dest: pair.dest.clone(),
                list_name: pair.list_name.clone(),
                filter: self.filter.clone(),
                listing: Some(Arc::clone(self.listing)),
                out: Mutex::new(None),
                totals: Arc::clone(self.totals),
                budget: self.budget.clone(),
                dry_run: self.args.dry_run,
                keep_dir_times: self.args.delete_after && self.keep_times && !self.args.dry_run,
            };
            let remover = Remover::new(selector, "sync", None, protected);
            let mut options = self.args.walk.options();
            // DEST as named may be a symlink to a directory; DEST/SRC is used as it is.
            options.follow = if pair.follow_dest { Follow::Roots } else { Follow::Never };
            options.same_file_system = self.args.one_file_system;
            let outcome = self.cluster.walk(
                std::slice::from_ref(&pair.dest),
                &options,
                &remover,
                &self.args.walk.plan(),
            );
            remover.selector.finish();
            let refused: u64 = outcome.states.iter().map(|s| s.refused).sum();
            if outcome.errors + refused > 0 {
                status = Status::Partial;
            }
        }
        status
    }
}

/// `HOST:PATH` or `HOST::MODULE`: a colon before any slash.
fn is_remote(path: &[u8]) -> bool {
    let colon = path.iter().position(|&b| b == b':');
    let slash = path.iter().position(|&b| b == b'/').unwrap_or(path.len());
    colon.is_some_and(|c| c > 0 && c < slash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_paths_are_told_apart() {
        assert!(is_remote(b"host:path") && is_remote(b"user@host:/p") && is_remote(b"host::module"));
        assert!(!is_remote(b"./a:b") && !is_remote(b"dir/a:b") && !is_remote(b"plain") && !is_remote(b":x"));
    }

    #[test]
    fn statuses_agree_by_importance() {
        assert!(Status::Partial > Status::Vanished && Status::Vanished > Status::DeleteLimit);
        for status in Status::ALL {
            assert_eq!(Status::ALL[status as usize], status);
        }
    }
}
