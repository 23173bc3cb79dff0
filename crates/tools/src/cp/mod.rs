//! `canopy cp`: parallel recursive copy that preserves everything `cp -a` does and can be rerun after
//! an interruption (see the `transfer` module for the guarantee).

use crate::common::guard::is_within;
use crate::common::{Exit, WalkArgs, os_to_bytes, print_error};
use crate::transfer::{CopyFlags, RootPair, Transfer, TransferOptions};
use canopy_dist::Cluster;
use canopy_engine::sys::{open_path, split_parent, stat_path};
use canopy_engine::{Follow, errno_message, join_path};
use clap::Args;
use std::ffi::OsString;

const AFTER_HELP: &str = "\
Like cp -a: directories recursively; mode, owner (when permitted), nanosecond times, extended
attributes and ACLs preserved; symlinks copied as symlinks (never followed, in the source or the
destination), hard links kept as hard links, FIFOs, sockets and devices recreated, sparse files kept
sparse. Walking and copying overlap; files bigger than --chunk-size are copied by all workers at once.

Each entry is written under a temporary name and renamed into place when complete, so nothing
half-written ever appears under its real name. Rerun the same command after an interruption
(Ctrl-C, kill -9, a crash): files already complete — same size and modification time — are not
copied again. Unlike cp, an existing destination file with the source's size and time is therefore
taken as already copied.

With one SOURCE and a DEST that is not an existing directory, DEST becomes the copy; otherwise each
SOURCE is copied into DEST/ under its own name. As with cp, `canopy cp SRC NEW` creates NEW the
first time and would copy into NEW/SRC the second: to resume such a copy, rerun it as
`canopy cp -T SRC NEW` (or copy into an existing directory in the first place).
Exit status: 0 if everything was copied, 1 if anything failed (each failure is reported with its
path and reason), 2 on a usage error.

Examples:
  canopy cp /data/project /archive/              # → /archive/project; rerun to resume
  canopy cp -T /data/project /archive/project    # the same, naming the copy itself
  canopy cp -j 64 /lustre/run42 /backup/run42    # more workers on a parallel file system
  canopy cp --verify --fsync /scratch/ckpt /safe/ckpt
  canopy cp a.h5 b.h5 /data/incoming/
  mpirun -n 16 canopy cp /lustre/run42 /archive/   # every rank copies a share, chunks included

Under mpirun every rank copies part of the tree (and of big files); hard links stay hard links
across ranks (they meet in DEST through temporary names, removed at the end).";

/// Copy trees in parallel, preserving everything `cp -a` does; rerun to resume after an interruption.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct CpArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    #[command(flatten)]
    pub copy: CopyFlags,

    /// DEST is the copy of the single SOURCE even if it exists (never DEST/SOURCE): the form to
    /// rerun after an interruption when DEST did not exist before the first run.
    #[arg(short = 'T', long)]
    pub no_target_directory: bool,

    /// SOURCE... DEST
    #[arg(required = true, num_args = 2.., value_name = "PATH")]
    pub paths: Vec<OsString>,
}

pub fn run(args: CpArgs, cluster: &Cluster) -> Exit {
    let mut paths: Vec<Vec<u8>> = args.paths.iter().map(|p| os_to_bytes(p)).collect();
    let dest = paths.pop().expect("clap requires two paths or more");
    if args.no_target_directory && paths.len() > 1 {
        print_error("cp", "-T takes one SOURCE");
        return Exit::Usage;
    }
    let into_dir = !args.no_target_directory && stat_path(&dest, true).is_ok_and(|m| m.is_dir());
    if paths.len() > 1 && !into_dir {
        print_error("cp", format_args!("target '{}' is not a directory", String::from_utf8_lossy(&dest)));
        return Exit::Usage;
    }
    let mut failed = false;
    let mut roots: Vec<RootPair> = Vec::new();
    for source in paths {
        match root_pair(&source, &dest, into_dir) {
            Ok(pair) if roots.iter().any(|r| r.source == pair.source) => {
                print_error(
                    "cp",
                    format_args!(
                        "warning: source '{}' given more than once",
                        String::from_utf8_lossy(&source)
                    ),
                );
            }
            Ok(pair) => roots.push(pair),
            Err(message) => {
                print_error("cp", message);
                failed = true;
            }
        }
    }
    let mut walk = args.walk.options();
    walk.follow = Follow::Never;
    // Where hard links meet across ranks: the directory copied into, else the copy itself.
    let link_area = match roots.first() {
        Some(pair) if !into_dir => (pair.dest.clone(), pair.follow_dest),
        _ => (dest, true),
    };
    let transfer = Transfer::new(TransferOptions::new(&args.copy, link_area), "cp", roots, cluster);
    let exit = transfer.run(walk, cluster, &args.walk.plan());
    cluster.finish_output();
    let exit = if failed { exit.max(Exit::Errors) } else { exit };
    Exit::from_code(cluster.agree_exit(exit.code()))
}

/// Where `source` is copied to, after checking it exists and is not copied into itself.
fn root_pair(source: &[u8], dest: &[u8], into_dir: bool) -> Result<RootPair, String> {
    let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    let meta = stat_path(source, false)
        .map_err(|e| format!("cannot stat '{}': {}", show(source), errno_message(e)))?;
    let base = basename(source);
    let (dest_path, follow_dest) = match (into_dir, base) {
        (true, b"." | b".." | b"/") => (dest.to_vec(), true),
        (true, base) => (join_path(dest, base), false),
        (false, _) => (dest.to_vec(), false),
    };
    if stat_path(&dest_path, false).is_ok_and(|d| d.file_id() == meta.file_id()) {
        return Err(format!("'{}' and '{}' are the same file", show(source), show(&dest_path)));
    }
    if meta.is_dir() {
        let parent = if follow_dest { dest } else { split_parent(&dest_path).0 };
        if let Ok(parent) = open_path(parent, true)
            && is_within(&parent, meta.file_id()).unwrap_or(false)
        {
            return Err(format!(
                "cannot copy a directory, '{}', into itself, '{}'",
                show(source),
                show(&dest_path)
            ));
        }
    }
    Ok(RootPair { source: source.to_vec(), follow_source: false, dest: dest_path, follow_dest })
}

/// The last component, trailing slashes ignored (`/` for the root).
fn basename(path: &[u8]) -> &[u8] {
    let trimmed = &path[..path.len() - path.iter().rev().take_while(|&&b| b == b'/').count()];
    if trimmed.is_empty() {
        return if path.is_empty() { path } else { b"/" };
    }
    trimmed.rsplit(|&b| b == b'/').next().unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    use super::basename;

    #[test]
    fn basenames() {
        assert_eq!(basename(b"a/b"), b"b");
        assert_eq!(basename(b"a/b//"), b"b");
        assert_eq!(basename(b"b"), b"b");
        assert_eq!(basename(b"/"), b"/");
        assert_eq!(basename(b"."), b".");
        assert_eq!(basename(b"x/.."), b"..");
    }
}
