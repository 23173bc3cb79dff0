//! `canopy cp`: GNU cp's command line, copying in parallel, and the rerun of an interrupted copy
//! resumes it in place (see `transfer::marker`).

mod preserve;
mod targets;

use crate::common::{WalkArgs, cluster_stdout, print_error, report_write_errors};
use crate::transfer::{
    CopyFlags, Existing, Listing, Reflink, Scope, Style, Transfer, TransferOptions, TransferSummary,
};
use canopy_distwalk::Cluster;
use canopy_engine::Follow;
use canopy_util::path::os_to_bytes;
use clap::Args;
use preserve::Attrs;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use targets::Targets;

const AFTER_HELP: &str = "\
As GNU cp: `canopy cp -a SRC DEST` makes DEST a copy of SRC, or DEST/SRC if DEST is a directory;
`canopy cp -a SRC... DIR` copies each SRC into DIR. Without -r, -R or -a a directory is not copied
(\"-r not specified; omitting directory\"). -a keeps everything cp -a keeps: modes, owners (as
root), nanosecond times, xattrs and ACLs, symlinks as symlinks, hard links, FIFOs and devices,
holes. Without -a or -p new files get the source's mode less the umask, and files written over
keep their mode and owner.

Interrupted? Run the same command again. While a copy of a directory is in progress its top
directory holds a marker naming the source (.canopy-tmp-…, removed when the copy completes
without a failure). A rerun that finds it resumes in that directory — `canopy cp -r SRC NEW`
run again does not nest NEW/SRC — and keeps the files the interrupted run completed (nothing
half-written ever has its final name: each entry is written under a temporary name and renamed
into place). -v says what was resumed and how much was kept. Without an interruption cp's
meaning holds: copying onto an existing copy copies everything again (use -u, or canopy sync).

Differences from GNU cp (see the README's table): entries are copied by many workers at once,
so -v lines come in no fixed order; a file is written beside its destination and renamed over
it, so a destination that was a hard link or a symlink is replaced, never written through; a
FIFO or device given without -r is recreated, not read; --preserve=context is accepted and
ignored; usage errors exit 2 (cp: 1).

Examples:
  canopy cp -a /data/project /archive/            # → /archive/project
  canopy cp -a /data/project /archive/project     # the same; run it again after a kill -9
  canopy cp -rv src/ dst                          # cp -r, listing what it copies
  canopy cp -a -j 64 /lustre/run42 /backup/       # more workers on a parallel file system
  canopy cp -a --verify --fsync /scratch/ckpt /safe/ckpt
  canopy cp -t /data/incoming/ a.h5 b.h5
  mpirun -n 16 canopy cp -a /lustre/run42 /archive/   # every rank copies a share, chunks included

Under mpirun every rank copies part of the tree (and of big files); hard links stay hard links
across ranks (they meet in DEST through temporary names, removed at the end).";

/// Copy files and trees like GNU cp, in parallel; rerun the same command to resume.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
#[command(mut_arg("stats", |a| a.long("walk-stats")))]
pub struct CpArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    #[command(flatten)]
    pub copy: CopyFlags,

    /// Same as -dR --preserve=all
    #[arg(short = 'a', long)]
    pub archive: bool,

    /// Copy directories recursively
    #[arg(short = 'r', short_alias = 'R', long)]
    pub recursive: bool,

    /// Same as --preserve=mode,ownership,timestamps
    #[arg(short = 'p')]
    pub preserve_basic: bool,

    /// Preserve the attributes listed (mode, ownership, timestamps, links, context, xattr, all;
    /// without a list: mode,ownership,timestamps)
    #[arg(
        long,
        value_name = "ATTR_LIST",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "mode,ownership,timestamps",
        value_parser = preserve::parse
    )]
    pub preserve: Vec<Attrs>,

    /// Don't preserve the attributes listed
    #[arg(long, value_name = "ATTR_LIST", value_parser = preserve::parse)]
    pub no_preserve: Vec<Attrs>,

    /// Same as --no-dereference --preserve=links
    #[arg(short = 'd')]
    pub no_deref_links: bool,

    /// Never follow symlinks in SOURCE
    #[arg(short = 'P', long)]
    pub no_dereference: bool,

    /// Always follow symlinks in SOURCE
    #[arg(short = 'L', long)]
    pub dereference: bool,

    /// Follow symlinks given on the command line
    #[arg(short = 'H')]
    pub command_line_symlinks: bool,

    /// Don't overwrite an existing file
    #[arg(short = 'n', long)]
    pub no_clobber: bool,

    /// Copy only when the SOURCE is newer than the destination, or it is missing
    #[arg(short = 'u', long)]
    pub update: bool,

    /// Accepted: a destination file is always replaced, never opened for writing
    #[arg(short = 'f', long)]
    pub force: bool,

    /// Explain what is being done
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// Treat DEST as a normal file (the copy itself, even if it is a directory)
    #[arg(short = 'T', long)]
    pub no_target_directory: bool,

    /// Copy all SOURCE arguments into DIRECTORY
    #[arg(short = 't', long, value_name = "DIRECTORY")]
    pub target_directory: Option<OsString>,

    /// Stay on this file system
    #[arg(short = 'x', long)]
    pub one_file_system: bool,

    /// Share the source's blocks where the file system can (auto), always, or never
    #[arg(long, value_name = "WHEN", num_args = 0..=1, require_equals = true, default_value = "auto", default_missing_value = "always")]
    pub reflink: Reflink,

    /// Print totals at the end (rsync's --stats lines, and what a resumed copy kept)
    #[arg(long = "stats")]
    pub totals: bool,

    /// SOURCE... DEST (or SOURCE... with -t)
    #[arg(required = true, num_args = 1.., value_name = "PATH")]
    pub paths: Vec<OsString>,
}

impl CpArgs {
    fn recursive(&self) -> bool {
        self.recursive || self.archive
    }

    /// How symlinks in the sources are followed: cp's -L/-H/-P, and its defaults (follow unless
    /// copying recursively or with -d).
    fn follow(&self) -> Follow {
        if self.dereference {
            Follow::Always
        } else if self.command_line_symlinks {
            Follow::Roots
        } else if self.no_dereference || self.no_deref_links || self.recursive() {
            Follow::Never
        } else {
            Follow::Roots
        }
    }

    fn attrs(&self) -> Attrs {
        let mut kept = Attrs::default();
        if self.archive {
            kept = kept.union(Attrs::ALL);
        }
        if self.preserve_basic {
            kept = kept.union(Attrs::BASIC);
        }
        if self.no_deref_links || self.archive {
            kept = kept.union(Attrs::LINKS);
        }
        for attrs in &self.preserve {
            kept = kept.union(*attrs);
        }
        for attrs in &self.no_preserve {
            kept = kept.without(*attrs);
        }
        kept
    }
}

pub fn run(args: CpArgs, cluster: &Cluster) -> ExitCode {
    let failed = cp(&args, cluster);
    cluster.finish_output();
    ExitCode::from(cluster.agree_exit(u8::from(failed)))
}

/// Copies; whether anything failed.
fn cp(args: &CpArgs, cluster: &Cluster) -> bool {
    let paths: Vec<Vec<u8>> = args.paths.iter().map(|p| os_to_bytes(p)).collect();
    let target_directory = args.target_directory.as_ref().map(|d| os_to_bytes(d));
    let leader = cluster.is_root();
    let stdout = cluster_stdout(cluster);
    let listing = args.verbose.then(|| Arc::new(Listing::new(Arc::clone(&stdout), Style::Cp)));
    let targets = match Targets::resolve(args, paths, target_directory, leader) {
        Ok(targets) => targets,
        Err(message) => {
            print_error("cp", message);
            return true;
        }
    };
    // Every process has read the markers before the leader writes any.
    cluster.agree_exit(0);
    let mut failed = targets.failed;
    let prepared = if leader { targets.prepare() } else { Ok(()) };
    if cluster.agree_exit(u8::from(prepared.is_err())) != 0 {
        if let Err(message) = prepared {
            print_error("cp", message);
        }
        return true;
    }
    let keep = args.attrs().keep();
    let existing = Existing::Cp { no_clobber: args.no_clobber, update: args.update };
    let mut options = TransferOptions::new(&args.copy, existing, targets.link_area.clone());
    options.keep = keep;
    options.scope = Scope::ALL;
    options.reflink = args.reflink;
    options.cp_rules = true;
    options.listing = listing.clone();
    let mut walk = args.walk.options();
    walk.follow = args.follow();
    walk.same_file_system = args.one_file_system;
    let resumed: Vec<_> =
        targets.pairs.iter().filter(|p| p.resume_since.is_some()).map(|p| p.dest.clone()).collect();
    if let (Some(listing), true) = (&listing, leader) {
        let mut out = listing.buffer();
        for dest in &resumed {
            listing.note(&mut out, "resuming the interrupted copy in ", dest, "");
        }
    }
    let transfer = Transfer::new(options, "cp", targets.pairs, cluster);
    let outcome = transfer.run(walk, cluster, &args.walk.plan());
    failed |= outcome.errors > 0;
    let summary = cluster.reduce(transfer.totals().snapshot(), TransferSummary::sum);
    if let Some(summary) = summary {
        let mut text = Vec::new();
        if args.verbose && summary.resumed > 0 {
            let _ = writeln!(
                text,
                "kept {} files ({} bytes) the interrupted copy had completed",
                summary.resumed, summary.resumed_size
            );
        }
        if args.totals {
            let _ = summary.write_stats(&mut text, crate::transfer::Numbers::Grouped);
        }
        let _ = stdout.write_all(&text);
        if report_write_errors([&*stdout]) {
            failed = true;
        }
    }
    failed
}
