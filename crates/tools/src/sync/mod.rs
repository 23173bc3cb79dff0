//! `canopy sync`: make a destination tree identical to a source tree, like `rsync -a -H --delete`.

mod prune;

use crate::common::guard::{Protected, file_id, is_within};
use crate::common::{Exit, WalkArgs, cluster_stdout, os_to_bytes, print_error};
use crate::remove::Remover;
use crate::transfer::{Compare, CopyFlags, RootPair, Transfer, TransferOptions};
use canopy_dist::Cluster;
use canopy_engine::sys::{open_path, stat_path};
use canopy_engine::{Follow, errno_message};
use clap::Args;
use prune::Extraneous;
use std::ffi::OsString;

const AFTER_HELP: &str = "\
Makes DEST identical to SOURCE, like `rsync -a -H --delete SOURCE/ DEST/`: the contents of SOURCE go
into DEST (created if missing), with everything cp -a preserves — modes, owners when permitted,
nanosecond times, xattrs, symlinks, hard links, FIFOs and devices, holes.

A file is copied when its size or modification time differs (with --checksum: its size or content);
one whose data is right but whose owner, permissions or times are not is corrected in place.
Entries DEST has and SOURCE does not are DELETED, by default — sync makes DEST identical; keep them
with --no-delete, and preview everything with --dry-run. Deletion runs first, so the space of removed
files is free for the new ones. Copies are made under temporary names and renamed into place when
complete; an interrupted sync is resumed by running it again.

Refused: a DEST that is '/', the current directory or one of its ancestors, and a SOURCE and DEST
that lie inside one another.
Exit status: 0 if DEST is now identical, 1 if anything failed (each failure is reported with its
path and reason), 2 on a usage error.

Examples:
  canopy sync /data/project /backup/project
  canopy sync -n /data/project /backup/project    # show what would change
  canopy sync --checksum /scratch/run /archive/run
  canopy sync --no-delete /incoming /archive       # add and update, remove nothing";

/// Make DEST identical to SOURCE (like rsync -a -H --delete), in parallel; resumable.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct SyncArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    #[command(flatten)]
    pub copy: CopyFlags,

    /// Compare files by content (xxh3) instead of modification time; times that differ on files
    /// with the same content are corrected.
    #[arg(short = 'c', long)]
    pub checksum: bool,

    /// List what would change (`delete`, `mkdir`, `create`, `replace`, `attrs`, `link … => …`, one
    /// per line with the destination path) and change nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Keep entries DEST has and SOURCE does not.
    #[arg(long)]
    pub no_delete: bool,

    /// The tree to copy from (its contents, as with a trailing slash in rsync).
    pub source: OsString,

    /// The tree to make identical to SOURCE.
    pub dest: OsString,
}

pub fn run(args: SyncArgs, cluster: &Cluster) -> Exit {
    let source = os_to_bytes(&args.source);
    let dest = trim_slashes(os_to_bytes(&args.dest));
    if let Err(message) = check(&source, &dest) {
        print_error("sync", message);
        return Exit::Usage;
    }
    let mut exit = Exit::Ok;
    if !args.no_delete && stat_path(&dest, true).is_ok() {
        exit = prune(&args, &source, &dest, cluster);
    }
    let mut options = TransferOptions::new(&args.copy, (dest.clone(), true));
    options.replace_non_directories = true;
    options.blocking_directories_pruned = !args.no_delete;
    options.dry_run = args.dry_run;
    if args.checksum {
        options.compare = Compare::Checksum;
    }
    let mut walk = args.walk.options();
    walk.follow = Follow::Roots;
    let pair = RootPair { source, follow_source: true, dest, follow_dest: true };
    let transfer = Transfer::new(options, "sync", vec![pair], cluster);
    let exit = exit.max(transfer.run(walk, cluster, &args.walk.plan()));
    cluster.finish_output();
    Exit::from_code(cluster.agree_exit(exit.code()))
}

/// Removes what DEST has and SOURCE does not, with every process of `cluster`. Collective.
fn prune(args: &SyncArgs, source: &[u8], dest: &[u8], cluster: &Cluster) -> Exit {
    let protected = Protected::current().map_err(|errno| {
        print_error("sync", format_args!("cannot identify the current directory: {}", errno_message(errno)));
    });
    // Every process takes part in the walk or none.
    let setup = if protected.is_ok() { Exit::Ok } else { Exit::Errors };
    let (Ok(protected), Exit::Ok) = (protected, Exit::from_code(cluster.agree_exit(setup.code()))) else {
        return Exit::Errors;
    };
    let listing = args.dry_run.then(|| (cluster_stdout(cluster), &b"delete "[..]));
    let selector = Extraneous { source: source.to_vec(), dest: dest.to_vec() };
    let remover = Remover::new(selector, "sync", listing, protected);
    let mut options = args.walk.options();
    options.follow = Follow::Roots;
    let outcome = cluster.walk(&[dest.to_vec()], &options, &remover, &args.walk.plan());
    let refused: u64 = outcome.states.iter().map(|s| s.refused).sum();
    Exit::from_errors(outcome.errors + refused)
}

/// SOURCE must be a directory; DEST must not be protected; neither may lie inside the other.
fn check(source: &[u8], dest: &[u8]) -> Result<(), String> {
    let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    let source_dir =
        open_path(source, true).map_err(|e| format!("'{}': {}", show(source), errno_message(e)))?;
    let source_id = file_id(&source_dir).map_err(|e| format!("'{}': {}", show(source), errno_message(e)))?;
    let Ok(dest_dir) = open_path(dest, true) else {
        // A destination that does not exist yet is created by the copy (inside its parent, which
        // must then not lie inside the source either).
        let parent = canopy_engine::sys::split_parent(dest).0;
        return match open_path(parent, true) {
            Ok(parent) if is_within(&parent, source_id).unwrap_or(false) => {
                Err(format!("'{}' lies inside '{}'", show(dest), show(source)))
            }
            _ => Ok(()),
        };
    };
    let dest_id = file_id(&dest_dir).map_err(|e| format!("'{}': {}", show(dest), errno_message(e)))?;
    let protected = Protected::current()
        .map_err(|e| format!("cannot identify the current directory: {}", errno_message(e)))?;
    if protected.contains(dest_id) {
        return Err(format!(
            "refusing to sync into '{}': it is '/' or holds the current directory",
            show(dest)
        ));
    }
    if is_within(&dest_dir, source_id).unwrap_or(false) || is_within(&source_dir, dest_id).unwrap_or(false) {
        return Err(format!("'{}' and '{}' lie inside one another", show(source), show(dest)));
    }
    Ok(())
}

/// `dst/` and `dst` are the same destination (but `/` stays `/`).
fn trim_slashes(mut path: Vec<u8>) -> Vec<u8> {
    while path.len() > 1 && path.ends_with(b"/") {
        path.pop();
    }
    path
}
