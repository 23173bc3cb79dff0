//! The subcommands: each is a thin wrapper over a tool module in `canopy-tools`.

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// Walk, search, measure, copy, sync and remove huge file trees in parallel.
#[derive(Parser)]
#[command(name = "canopy", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Only the subcommand being run has its arguments built: building all of them touched megabytes
// of code at every start (the peak RSS that `canopy du` is measured by).
#[derive(Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Search a tree in parallel with GNU find's expressions (-name, -size, -exec, -printf…).
    Find(canopy_tools::find::FindArgs),
    /// Distributed directory service: servers, namespace operations, mdtest-style benchmark.
    #[cfg(feature = "dirsvc")]
    Dirsvc(canopy_dirsvc::cli::DirsvcArgs),
    /// Search file contents in parallel like grep -r; --group folds identical lines across files.
    Grep(canopy_tools::grep::GrepArgs),
    /// Apply one file operation to a group of files across hosts and print the aggregated result.
    #[cfg(feature = "group")]
    Group(canopy_group::cli::GroupArgs),
    /// Copy one file to every host: read once, streamed down the tree, verified, renamed into place.
    #[cfg(feature = "group")]
    Pcp(canopy_grouptools::pcp::PcpArgs),
    /// Grep the same file on every host; hosts with identical results print once, like clush -b.
    #[cfg(feature = "group")]
    Pgrep(canopy_grouptools::pgrep::PgrepArgs),
    /// Update a file on every host with rsync's algorithm, once per sub-group of identical copies.
    #[cfg(feature = "group")]
    Psync(canopy_grouptools::psync::PsyncArgs),
    /// Tail (and follow) a log on every host; equal lines are merged with the set of hosts.
    #[cfg(feature = "group")]
    Ptail(canopy_grouptools::ptail::PtailArgs),
    /// Top across hosts: busiest processes and per-command totals, aggregated in the tree.
    #[cfg(feature = "group")]
    Ptop(canopy_grouptools::ptop::PtopArgs),
    /// Serve the cluster's /proc metrics, aggregated in the tree, to Prometheus and a browser.
    #[cfg(feature = "monitor")]
    Monitor(canopy_grouptools::monitor::MonitorArgs),
    /// Mirror a directory through FUSE with a fixed latency per request (emulates a parallel file
    /// system, to evaluate concurrency settings on any machine).
    #[cfg(feature = "latfs")]
    Latfs(canopy_latfs::Args),
    /// Gather metadata: counts, bytes, size/age histograms, top owners; optionally one record per entry.
    Walk(canopy_tools::walk::WalkCmdArgs),
    /// Disk usage: a chart of the largest directories, or GNU du's lines; hard links counted once.
    Du(canopy_tools::du::DuArgs),
    /// Compare two trees: missing, extra, type, size, mtime, content; --json for programs.
    Cmp(canopy_tools::cmp::CmpArgs),
    /// Copy trees in parallel like cp -a (hard links, xattrs, sparse files); rerun to resume.
    Cp(canopy_tools::cp::CpArgs),
    /// Make DEST identical to SOURCE like rsync -a -H --delete, in parallel; resumable.
    Sync(canopy_tools::sync::SyncArgs),
    /// Remove trees in parallel (like rm -rf), optionally filtered by find's tests; symlink-race safe.
    Rm(canopy_tools::rm::RmArgs),
    /// Summarise and draw the per-rank statistics of a distributed walk (heat map, work balance).
    #[cfg(feature = "report")]
    Report(canopy_tools::report::ReportArgs),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) to stdout.
    #[command(after_help = "Example:\n  canopy completions bash > /etc/bash_completion.d/canopy")]
    Completions { shell: clap_complete::Shell },
}

impl Command {
    pub fn run(self, cluster: &canopy_distwalk::Cluster) -> ExitCode {
        if let Some(walk) = self.walk_args() {
            // Before the tool's first collective: a rank stopped at any point of the job is found.
            cluster.watch(walk.plan().timeout);
        }
        match self {
            Command::Find(args) => canopy_tools::find::run(args, cluster).into(),
            #[cfg(feature = "dirsvc")]
            Command::Dirsvc(args) => canopy_dirsvc::cli::run(args),
            Command::Grep(args) => canopy_tools::grep::run(args, cluster).into(),
            #[cfg(feature = "group")]
            Command::Group(args) => canopy_group::cli::run(args, cluster),
            #[cfg(feature = "latfs")]
            Command::Latfs(args) => canopy_latfs::run(args),
            #[cfg(feature = "group")]
            Command::Pcp(args) => canopy_grouptools::pcp::run(args, cluster),
            #[cfg(feature = "group")]
            Command::Pgrep(args) => canopy_grouptools::pgrep::run(args, cluster),
            #[cfg(feature = "group")]
            Command::Psync(args) => canopy_grouptools::psync::run(args, cluster),
            #[cfg(feature = "group")]
            Command::Ptail(args) => canopy_grouptools::ptail::run(args, cluster),
            #[cfg(feature = "group")]
            Command::Ptop(args) => canopy_grouptools::ptop::run(args, cluster),
            #[cfg(feature = "monitor")]
            Command::Monitor(args) => canopy_grouptools::monitor::run(args, cluster),
            Command::Walk(args) => canopy_tools::walk::run(&args, cluster).into(),
            Command::Du(args) => canopy_tools::du::run(args, cluster).into(),
            Command::Cmp(args) => canopy_tools::cmp::run(args, cluster).into(),
            Command::Cp(args) => canopy_tools::cp::run(args, cluster),
            Command::Sync(args) => canopy_tools::sync::run(args, cluster),
            Command::Rm(args) => canopy_tools::rm::run(args, cluster).into(),
            #[cfg(feature = "report")]
            Command::Report(args) => canopy_tools::report::run(&args).into(),
            Command::Completions { shell } => {
                let mut script = Vec::new();
                clap_complete::generate(shell, &mut every_command_built(), "canopy", &mut script);
                let lost = canopy_tools::common::print_stdout(&script);
                if lost { ExitCode::FAILURE } else { ExitCode::SUCCESS }
            }
        }
    }
}

impl Command {
    /// The tree tools' shared walk options.
    fn walk_args(&self) -> Option<&canopy_tools::common::WalkArgs> {
        match self {
            Command::Find(args) => Some(&args.walk),
            Command::Grep(args) => Some(&args.options.walk),
            Command::Walk(args) => Some(&args.walk),
            Command::Du(args) => Some(&args.walk),
            Command::Cmp(args) => Some(&args.walk),
            Command::Cp(args) => Some(&args.walk),
            Command::Sync(args) => Some(&args.walk),
            Command::Rm(args) => Some(&args.walk),
            _ => None,
        }
    }
}

/// The whole command tree with every deferred subcommand built, so that completions (and the
/// `help` subcommand they describe) see the nested subcommands of dirsvc and group.
fn every_command_built() -> clap::Command {
    let mut cli = Cli::command();
    let names: Vec<String> = cli.get_subcommands().map(|sub| sub.get_name().to_owned()).collect();
    for name in names {
        let bin_name = format!("canopy {name}");
        cli = cli.mut_subcommand(name, |sub| {
            // What building the root would have propagated before running the deferred part.
            let mut sub = sub.bin_name(bin_name).version(env!("CARGO_PKG_VERSION")).propagate_version(true);
            sub.build();
            sub
        });
    }
    cli
}
