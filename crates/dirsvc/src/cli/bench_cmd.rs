//! `canopy dirsvc bench`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::print_json;
use crate::bench::targets::{DirsvcTarget, PosixTarget, Target, Tree, default_dir_prefix};
use crate::bench::team::ThreadTeam;
use crate::bench::{self, BenchPlan, BenchReport, Layout};
use crate::cluster::{ClusterDir, DEFAULT_SPLIT_THRESHOLD};
use crate::error::{Error, Result};
use crate::launcher::{self, ClusterPlan, ServerCommand, Started};

/// mdtest-style benchmark: P clients create, stat and remove K files each in one shared directory
#[derive(Args, Debug)]
#[command(after_help = "\
Like `mdtest -F -n K` (the seed's modified metarates): phases separated by barriers, a phase's
rate = P x K / the slowest client's time, summarised over iterations as mdtest's SUMMARY rate
table. Clients are threads, each with its own connections. Also prints the probes each operation
needed, the entries per partition after creation, and how many requests each journal sync
committed. --links adds a hard link per file (NAME.link beside it) and its removal between stat
and removal; -u, -z, -b and -L lay the files out as mdtest does (a directory per client, a tree
below it, files only in its leaves).

Examples:
  canopy dirsvc bench --servers 4 --clients 8 --files 1000
  canopy dirsvc bench --servers 4 --partitions 1 --split-threshold 2000   GIGA+ growth from one
  canopy dirsvc bench --servers 1 --partitions 1 --split-threshold 0      one partition (vanilla)
  canopy dirsvc bench --cluster /tmp/ds --clients 16 --posix /var/tmp     plus the local baseline
  canopy dirsvc bench --posix /var/tmp --posix-only --clients 4
  canopy dirsvc bench --posix /mnt/ds --posix-only --clients 8             through a dirsvc mount
  canopy dirsvc bench --posix /mnt/a --posix /mnt/b --posix-only -p 8      two mounts, 4 clients each
  canopy dirsvc bench --cluster /tmp/ds -p 16 -n 62500 --window 8 --create-only --prefix big
                                                     fill /big.0 with a million files and keep it
  canopy dirsvc bench --servers 4 -p 8 --links       link and unlink rates too
  canopy dirsvc bench --servers 4 -p 8 -u -z 2 -b 4 -L   mdtest -u -z 2 -b 4 -L")]
pub struct BenchArgs {
    /// Run against this running cluster
    #[arg(long, value_name = "DIR", conflicts_with = "servers")]
    cluster: Option<PathBuf>,
    /// Start a temporary cluster of N local servers for this run
    #[arg(long, value_name = "N")]
    servers: Option<usize>,
    /// Directory of the temporary cluster (default: under $TMPDIR)
    #[arg(long, value_name = "DIR", requires = "servers")]
    data: Option<PathBuf>,
    /// Leave the temporary cluster running, with its data
    #[arg(long, requires = "servers")]
    keep: bool,
    /// Clients (P)
    #[arg(short = 'p', long, default_value_t = 4)]
    clients: usize,
    /// Files per client (K)
    #[arg(short = 'n', long, default_value_t = 1000)]
    files: usize,
    /// Iterations
    #[arg(short = 'i', long, default_value_t = 3)]
    iterations: usize,
    /// Initially active partitions of the shared directory (0: all N)
    #[arg(long, default_value_t = 0)]
    partitions: u32,
    /// Split threshold of the shared directory (0: never split)
    #[arg(long, default_value_t = DEFAULT_SPLIT_THRESHOLD)]
    split_threshold: u64,
    /// Operations each dirsvc client keeps in flight (1: synchronous, as mdtest)
    #[arg(long, default_value_t = 1)]
    window: usize,
    /// Also run the workload in a new directory under DIR through the file system (local disk or a
    /// mount); given several times (mounts of one file system), client r works through the r-th
    #[arg(long, value_name = "DIR")]
    posix: Vec<PathBuf>,
    /// Run only the file system workload
    #[arg(long, requires = "posix")]
    posix_only: bool,
    /// Only create, and keep the files (mdtest -C): a directory for other tools to run on
    #[arg(long)]
    create_only: bool,
    /// Name the shared directories PREFIX.ITERATION (default: mdtest.PID)
    #[arg(long, value_name = "PREFIX")]
    prefix: Option<String>,
    /// Also time a hard link to each file and its removal
    #[arg(long, conflicts_with = "create_only")]
    links: bool,
    /// A working directory per client (mdtest -u)
    #[arg(short = 'u', long)]
    unique_dir: bool,
    /// Levels of subdirectories below each working directory (mdtest -z)
    #[arg(short = 'z', long, default_value_t = 0, value_name = "DEPTH")]
    depth: u32,
    /// Subdirectories of each directory of the tree (mdtest -b)
    #[arg(short = 'b', long, default_value_t = 1, value_name = "N")]
    branch: u32,
    /// Files only in the tree's leaves (mdtest -L)
    #[arg(short = 'L', long)]
    leaf_only: bool,
    /// Print the reports as JSON
    #[arg(long)]
    json: bool,
}

/// A cluster this command started, stopped (and removed) when the run ends.
struct TemporaryCluster {
    cluster: ClusterDir,
    started: Vec<Started>,
    keep: bool,
}

impl Drop for TemporaryCluster {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("cluster left running in {}", self.cluster.dir.display());
            return;
        }
        if let Err(e) = launcher::stop_cluster(&self.cluster, Duration::from_secs(10)) {
            eprintln!("canopy dirsvc: stopping the temporary cluster: {e}");
        }
        for server in &mut self.started {
            let _ = server.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.cluster.dir);
    }
}

pub fn bench(args: BenchArgs) -> Result<()> {
    if args.clients == 0 || args.files == 0 || args.iterations == 0 {
        return Err(Error::invalid("clients, files and iterations must be at least 1"));
    }
    if args.branch == 0 || args.depth > 8 {
        return Err(Error::invalid("a tree has 1 to 8 levels (-z) of at least 1 subdirectory each (-b)"));
    }
    let layout =
        Layout { unique: args.unique_dir, depth: args.depth, branch: args.branch, leaf_only: args.leaf_only };
    let plan = BenchPlan {
        files_per_client: args.files,
        iterations: args.iterations,
        create_only: args.create_only,
        links: args.links,
        layout,
    };
    let prefix = args.prefix.clone().unwrap_or_else(default_dir_prefix);
    if prefix.is_empty() || prefix.contains('/') {
        return Err(Error::invalid(format!("--prefix {prefix:?} must be a non-empty name without '/'")));
    }
    let tree = Tree { prefix, layout, clients: args.clients };
    let team = ThreadTeam { size: args.clients };
    let mut reports: Vec<BenchReport> = Vec::new();
    let mut temporary = None;
    if !args.posix_only {
        let cluster = match (&args.cluster, args.servers) {
            (Some(dir), _) => ClusterDir::load(dir)?,
            (None, Some(servers)) => {
                let dir = args.data.clone().unwrap_or_else(|| {
                    std::env::temp_dir().join(format!("canopy-dirsvc-bench-{}", std::process::id()))
                });
                let cluster_plan = ClusterPlan {
                    servers,
                    base_port: None,
                    root_partitions: servers as u32,
                    split_threshold: DEFAULT_SPLIT_THRESHOLD,
                };
                let (cluster, started) =
                    launcher::start_cluster(&dir, &cluster_plan, &ServerCommand::current_canopy()?)?;
                let running = TemporaryCluster { cluster: cluster.clone(), started, keep: args.keep };
                temporary = Some(running);
                cluster
            }
            (None, None) => {
                return Err(Error::invalid(
                    "give --cluster DIR (a running cluster) or --servers N (a temporary one)",
                ));
            }
        };
        let partitions = (args.partitions, args.split_threshold);
        let target = DirsvcTarget::new(&cluster, partitions, args.window, tree.clone())?;
        reports.extend(run_and_show(&target, &team, plan, args.json)?);
    }
    if !args.posix.is_empty() {
        let target = PosixTarget { bases: args.posix.clone(), tree };
        reports.extend(run_and_show(&target, &team, plan, args.json)?);
    }
    drop(temporary);
    if args.json {
        print_json(&reports);
    }
    Ok(())
}

fn run_and_show(
    target: &dyn Target,
    team: &ThreadTeam,
    plan: BenchPlan,
    json: bool,
) -> Result<Option<BenchReport>> {
    let report = bench::run(target, team, plan)?;
    if let (Some(report), false) = (&report, json) {
        println!("{}", report.render());
    }
    Ok(report)
}
