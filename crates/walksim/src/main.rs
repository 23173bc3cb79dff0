//! `walksim`: runs simulated distributed walks and prints the seed's figures as a table.

use canopy_distwalk::termination::DetectorKind;
use canopy_walksim::model::parse_time;
use canopy_walksim::{Config, Model, Sched, Tree, run, table};
use clap::Parser;
use std::process::ExitCode;

/// Simulates Canopy's distributed walk on thousands of virtual ranks: the real scheduling and
/// termination state machines, modelled file-system and network latency. Prints a Markdown table:
/// time, messages, bytes, work requests, balance (max/min entries per rank and the histogram of
/// entries per rank against the mean: <50 %·50–80·80–95·95–105·105–120·120–200·≥200 %), the time
/// from the last task to the last rank stopping, the busiest rank's share of messages received.
///
/// Examples:
///   walksim                                        # issue 17's setting: deep:5x5x4, N = 4, 8, 16
///   walksim --ranks 16,256,10000 --tree powerlaw:1000000
///   walksim --sched h-drqs+ --ranks 10000 --detector ring
#[derive(Parser)]
#[command(name = "walksim", version, verbatim_doc_comment)]
struct Args {
    /// Schedulers to run (cp, drqs, deqs, pa-drqs, h-drqs, h-drqs+), comma-separated
    #[arg(long, value_delimiter = ',', default_value = "cp,drqs,deqs,pa-drqs,h-drqs,h-drqs+")]
    sched: Vec<Sched>,
    /// Rank counts, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "4,8,16")]
    ranks: Vec<u32>,
    /// Tree: wide:DxF, deep:FxDxK, flat:N or powerlaw:N[xA]
    #[arg(long, default_value = "deep:5x5x4")]
    tree: Tree,
    /// Service time of one file-system request
    #[arg(long, default_value = "500us", value_parser = parse_time)]
    latency: u64,
    /// Request slots of each node's mount
    #[arg(long, default_value_t = 64)]
    slots: u32,
    /// Ranks per node (they share the node's mount)
    #[arg(long, default_value_t = 1)]
    ranks_per_node: u32,
    /// Termination detector for every scheduler: ring or tree (default: the scheduler's own)
    #[arg(long)]
    detector: Option<String>,
    /// Seed of the run's random choices
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Balancing scheduler: most tasks per message
    #[arg(long)]
    max_batch: Option<usize>,
    /// Balancing scheduler: first and longest pause after refusals
    #[arg(long, value_parser = parse_time)]
    backoff_base: Option<u64>,
    #[arg(long, value_parser = parse_time)]
    backoff_cap: Option<u64>,
    /// Balancing scheduler: how long a refused peer stays owed work
    #[arg(long, value_parser = parse_time)]
    owed_for: Option<u64>,
    /// Worker threads per rank for every scheduler (default: the seed's single thread, the engine's
    /// adaptive pool for the hybrid schedulers)
    #[arg(long)]
    threads: Option<usize>,
    /// Write every outcome as JSON here
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let detector = match args.detector.as_deref() {
        None => None,
        Some("ring") => Some(DetectorKind::Ring),
        Some("tree") => Some(DetectorKind::Tree { fanout: canopy_distwalk::kary::FANOUT }),
        Some(other) => {
            eprintln!("walksim: unknown detector {other:?} (ring or tree)");
            return ExitCode::from(2);
        }
    };
    let model = Model {
        fs_latency: args.latency,
        mount_slots: args.slots,
        ranks_per_node: args.ranks_per_node,
        ..Model::default()
    };
    let mut outcomes = Vec::new();
    let mut failed = false;
    for &ranks in &args.ranks {
        for &sched in &args.sched {
            let mut config = Config::new(sched, ranks);
            config.model = model.clone();
            config.detector = detector;
            config.seed = args.seed;
            config.threads = args.threads;
            if let Some(b) = args.max_batch {
                config.balancing.export.max_batch = b;
            }
            if let Some(t) = args.backoff_base {
                config.balancing.backoff_base = t;
            }
            if let Some(t) = args.backoff_cap {
                config.balancing.backoff_cap = t;
            }
            if let Some(t) = args.owed_for {
                config.balancing.export.owed_for = std::time::Duration::from_nanos(t);
            }
            let outcome = run(&args.tree, &config);
            if outcome.flooded {
                eprintln!(
                    "walksim: {} at N = {ranks}: stopped after {} messages",
                    sched.name(),
                    outcome.messages
                );
            } else if !outcome.checks.ok(&args.tree) {
                eprintln!("walksim: {} at N = {ranks}: a check failed: {:?}", sched.name(), outcome.checks);
                failed = true;
            }
            eprintln!(
                "walksim: {} N={ranks}: {} events in {:.2} s",
                sched.name(),
                outcome.events,
                outcome.wall
            );
            outcomes.push(outcome);
        }
    }
    println!(
        "tree {}: {} directories, {} entries; {} per request, {} slots per mount, {} rank(s) per node\n",
        args.tree.spec(),
        table::thousands(u64::from(args.tree.dirs())),
        table::thousands(args.tree.entries()),
        table::seconds(args.latency as f64 * 1e-9),
        args.slots,
        args.ranks_per_node
    );
    print!("{}", table::markdown(&outcomes));
    if let Some(path) = &args.json {
        let json = serde_json::to_vec_pretty(&outcomes).expect("outcomes serialise");
        if let Err(e) = std::fs::write(path, json) {
            eprintln!("walksim: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
