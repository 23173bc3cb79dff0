//! serve, start, stop, status.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use canopy_fusekit::duration::{format_duration, parse_duration};

use super::{ClusterArg, block_on, print_json};
use crate::client::Client;
use crate::cluster::{CLUSTER_FILE, ClusterConfig, ClusterDir, DEFAULT_SPLIT_THRESHOLD};
use crate::error::Result;
use crate::launcher::{self, ClusterPlan, ServerCommand};
use crate::server::{ServerOptions, serve_blocking};

/// Run one metadata server in the foreground until SIGTERM or Ctrl-C
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc serve --cluster /tmp/ds --index 2     server 2 of the cluster in /tmp/ds
  canopy dirsvc serve --cluster /tmp/one              a one-server cluster (created if new)
  canopy dirsvc serve --cluster /tmp/one --listen 0.0.0.0:7411")]
pub struct ServeArgs {
    /// ClusterDir directory; created as a one-server cluster if it holds none
    #[arg(long, visible_alias = "data", env = "CANOPY_DIRSVC_CLUSTER", value_name = "DIR")]
    cluster: PathBuf,
    /// Which server of the cluster this is
    #[arg(long, default_value_t = 0)]
    index: u32,
    /// Store directory (default: DIR/server-INDEX/store)
    #[arg(long, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Address of a new one-server cluster
    #[arg(long, default_value = "127.0.0.1:7411")]
    listen: SocketAddr,
}

pub fn serve(args: ServeArgs) -> Result<()> {
    let cluster = if args.cluster.join(CLUSTER_FILE).exists() || args.cluster.is_file() {
        ClusterDir::load(&args.cluster)?
    } else {
        let config = ClusterConfig {
            servers: vec![args.listen],
            root_partitions: 1,
            split_threshold: DEFAULT_SPLIT_THRESHOLD,
        };
        ClusterDir::create(&args.cluster, config)?
    };
    let mut options = ServerOptions::new(cluster, args.index);
    if let Some(store) = args.store {
        options.store_dir = store;
    }
    serve_blocking(&options)
}

/// Start a local cluster: N server processes on loopback, each with its own store
#[derive(Args, Debug)]
#[command(after_help = "\
Creates DIR/cluster.json, a fresh secret in DIR/secret (mode 0600) and DIR/server-I/ (store, pid,
log) on first use; later runs restart the servers that are not running.

Examples:
  canopy dirsvc start --servers 4 --data /tmp/ds
  canopy dirsvc start --servers 2 --data /tmp/ds --base-port 7411 --split-threshold 5000
  canopy dirsvc start --data /tmp/ds                  restart stopped servers")]
pub struct StartArgs {
    /// Number of servers (required for a new cluster)
    #[arg(long)]
    servers: Option<usize>,
    /// ClusterDir directory
    #[arg(long, visible_alias = "cluster", value_name = "DIR")]
    data: PathBuf,
    /// Server I listens on 127.0.0.1:PORT+I (default: free ports)
    #[arg(long, value_name = "PORT")]
    base_port: Option<u16>,
    /// Active partitions of the root directory (default: all)
    #[arg(long)]
    root_partitions: Option<u32>,
    /// Default split threshold of new directories (0: never split)
    #[arg(long, default_value_t = DEFAULT_SPLIT_THRESHOLD)]
    split_threshold: u64,
    /// Print the servers as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct ServerRow {
    index: u32,
    address: String,
    pid: Option<i32>,
    state: &'static str,
}

pub fn start(args: StartArgs) -> Result<()> {
    let existing = args.data.join(CLUSTER_FILE).exists();
    let servers = match (args.servers, existing) {
        (Some(n), _) => n,
        (None, true) => ClusterDir::load(&args.data)?.config.servers.len(),
        (None, false) => {
            return Err(crate::error::Error::invalid("a new cluster needs --servers N"));
        }
    };
    let plan = ClusterPlan {
        servers,
        base_port: args.base_port,
        root_partitions: args.root_partitions.unwrap_or(servers as u32),
        split_threshold: args.split_threshold,
    };
    let (cluster, started) = launcher::start_cluster(&args.data, &plan, &ServerCommand::current_canopy()?)?;
    let rows: Vec<ServerRow> = (0..cluster.config.server_count())
        .map(|index| ServerRow {
            index,
            address: cluster.config.servers[index as usize].to_string(),
            pid: launcher::running_pid(&cluster, index),
            state: if started.iter().any(|s| s.index == index) { "started" } else { "already running" },
        })
        .collect();
    if args.json {
        print_json(&rows);
    } else {
        for row in &rows {
            println!(
                "server {:<3} {:<21} pid {:<8} {}",
                row.index,
                row.address,
                row.pid.map_or("-".to_string(), |p| p.to_string()),
                row.state
            );
        }
        println!(
            "cluster {} ready; for the other commands: export CANOPY_DIRSVC_CLUSTER={}",
            cluster.dir.display(),
            cluster.dir.display()
        );
    }
    Ok(())
}

/// Stop the servers of a local cluster (SIGTERM, then SIGKILL after a grace period)
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc stop --data /tmp/ds
  canopy dirsvc stop --data /tmp/ds --grace 2")]
pub struct StopArgs {
    /// ClusterDir directory
    #[arg(long, visible_alias = "cluster", value_name = "DIR")]
    data: PathBuf,
    /// Seconds to wait for a clean exit before SIGKILL
    #[arg(long, default_value_t = 10)]
    grace: u64,
}

pub fn stop(args: StopArgs) -> Result<()> {
    let cluster = ClusterDir::load(&args.data)?;
    let stopped = launcher::stop_cluster(&cluster, Duration::from_secs(args.grace))?;
    if stopped.is_empty() {
        println!("no server of {} was running", cluster.dir.display());
    }
    for (index, pid, killed) in stopped {
        let how = if killed { "killed (SIGKILL)" } else { "stopped" };
        println!("server {index} (pid {pid}) {how}");
    }
    Ok(())
}

/// Show each server's address, process and commit counters
#[derive(Args, Debug)]
#[command(after_help = "\
Every server is asked at once; one that does not answer within --timeout (a stopped or hung
process, an unreachable host) is reported DOWN. Exit status 1 when any server is down.

Examples:
  canopy dirsvc status --cluster /tmp/ds
  canopy dirsvc status --timeout 500ms
  canopy dirsvc status --json")]
pub struct StatusArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// How long to wait for each server's answer
    #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DURATION")]
    timeout: Duration,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct StatusRow {
    index: u32,
    address: String,
    up: bool,
    pid: Option<u32>,
    commits: Option<u64>,
    requests_committed: Option<u64>,
    error: Option<String>,
}

pub fn status(args: StatusArgs) -> Result<()> {
    let cluster = ClusterDir::load(&args.cluster.cluster)?;
    let rows = block_on(async {
        // The transport's own limit stays out of the way of the one reported.
        let client = Client::connect_with_timeout(&cluster, args.timeout + Duration::from_secs(1));
        let pings = (0..client.server_count()).map(|index| {
            let client = &client;
            async move { (index, tokio::time::timeout(args.timeout, client.ping(index)).await) }
        });
        let mut rows = Vec::new();
        for (index, ping) in futures_util::future::join_all(pings).await {
            let ping = ping.unwrap_or_else(|_| {
                Err(crate::error::Error::new(
                    crate::error::ErrorKind::Unavailable,
                    format!("no answer within {}", format_duration(args.timeout)),
                ))
            });
            rows.push(StatusRow {
                index,
                address: cluster.config.servers[index as usize].to_string(),
                up: ping.is_ok(),
                pid: ping.as_ref().ok().map(|p| p.pid),
                commits: ping.as_ref().ok().map(|p| p.commits),
                requests_committed: ping.as_ref().ok().map(|p| p.mutations),
                error: ping.err().map(|e| e.to_string()),
            });
        }
        rows
    })?;
    let down = rows.iter().filter(|r| !r.up).count();
    if args.json {
        print_json(&rows);
    } else {
        for row in &rows {
            match &row.error {
                None => println!(
                    "server {:<3} {:<21} up    pid {:<8} {} requests in {} commits",
                    row.index,
                    row.address,
                    row.pid.unwrap_or(0),
                    row.requests_committed.unwrap_or(0),
                    row.commits.unwrap_or(0)
                ),
                Some(e) => println!("server {:<3} {:<21} DOWN  {e}", row.index, row.address),
            }
        }
    }
    if down > 0 {
        return Err(crate::error::Error::new(
            crate::error::ErrorKind::Unavailable,
            format!("{down} of {} servers are down", rows.len()),
        ));
    }
    Ok(())
}
