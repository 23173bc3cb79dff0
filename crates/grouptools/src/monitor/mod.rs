//! `canopy monitor --listen ADDR`: the TBON-FS paper's Ganglia integration done the modern way (§4.2). Every
//! interval, one group read of each of `/proc/loadavg`, `/proc/meminfo`, `/proc/stat` and `/proc/net/dev`
//! on all hosts, aggregated in the tree (sum, count, min and max with the hosts that hit them); served as
//! one Prometheus text exposition for the whole cluster (`/metrics`), as JSON (`/api/cluster`, and
//! `/api/host/NAME` read from that host alone), and as a self-contained HTML page (`/`).

pub mod exposition;
pub mod metrics;

use crate::hosts::{HostsArgs, with_runtime};
use crate::interrupt;
use canopy_dist::Cluster;
use canopy_group::{
    AggrSpec, AggrType, FileOp, GroupError, OpKind, OpenFlags, RangeSet, Registry, Runtime, Transport,
};
use clap::Args;
use exposition::{Collection, HostStat};
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const EXAMPLES: &str = "\
Examples:
  canopy monitor --listen 127.0.0.1:9100              # then open http://127.0.0.1:9100/
  canopy monitor --listen 0.0.0.0:9100 --interval 15  # for a Prometheus scrape job
  canopy monitor --once                               # one exposition on stdout
  canopy monitor --once --hosts 8 --host-root /srv/sim/{rank}

Served: /metrics (Prometheus text format: per node_exporter series NAME_sum and NAME_count over
the hosts, NAME_min and NAME_max with a host label naming the hosts that hit them, and
canopy_hosts_up / canopy_hosts_down), / (a page with the cluster view and a drill-down per
host), /api/cluster and /api/host/NAME (JSON). Ctrl-C stops the server.
Exit status: 0, or 1 when a host did not answer (--once) or the server failed; 2 on usage errors.";

/// Serve the cluster's /proc metrics, aggregated in the tree, to Prometheus and a browser.
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct MonitorArgs {
    /// Address to serve on (port 0 picks a free port; the address is printed on stderr)
    #[arg(long, value_name = "ADDR:PORT", required_unless_present = "once")]
    pub listen: Option<String>,

    /// Seconds between collections
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub interval: f64,

    /// Collect once, print the exposition on stdout and exit
    #[arg(long, conflicts_with = "listen")]
    pub once: bool,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// The aggregation the monitor needs on every host.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    metrics::register(&mut registry);
    registry
}

const PAGE: &str = include_str!("page.html");

/// Runs `canopy monitor`.
pub fn run(args: MonitorArgs, cluster: &Cluster) -> ExitCode {
    let mut err = std::io::stderr().lock();
    if !(args.interval > 0.0 && args.interval.is_finite()) {
        let _ = writeln!(err, "canopy monitor: invalid --interval {}", args.interval);
        return ExitCode::from(2);
    }
    let server = match &args.listen {
        Some(address) => match tiny_http::Server::http(address.as_str()) {
            Ok(server) => Some(server),
            Err(e) => {
                let _ = writeln!(err, "canopy monitor: cannot listen on {address}: {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    drop(err);
    let outcome = with_runtime(&args.hosts, cluster, registry(), |runtime| match &server {
        Some(server) => serve(runtime, server, Duration::from_secs_f64(args.interval)),
        None => {
            let collection = collect(runtime, None)?;
            print!("{}", exposition::render(&collection.0));
            Ok(collection.0.down.is_empty())
        }
    });
    match outcome {
        // Another MPI rank: it served its host; rank 0 reports for the job.
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(Ok(clean))) => ExitCode::from(if clean { 0 } else { 1 }),
        Ok(Some(Err(message))) => {
            let _ = writeln!(std::io::stderr(), "canopy monitor: {message}");
            ExitCode::from(1)
        }
        Err(usage) => {
            let _ = writeln!(std::io::stderr(), "canopy monitor: {usage}");
            ExitCode::from(2)
        }
    }
}

/// Ranks by host name, from the last collection (for drill-downs).
type Ranks = HashMap<String, usize>;

/// One collection: every metric file read on the hosts of `only` (all when `None`), summaries merged.
fn collect<T: Transport>(
    runtime: &Runtime<T>,
    only: Option<&RangeSet>,
) -> Result<(Collection, Ranks), String> {
    let mut collection = Collection::default();
    let mut ranks = Ranks::new();
    let spec = AggrSpec::Registered { name: metrics::AGGREGATION.into(), params: String::new() };
    for file in metrics::FILES {
        let flags = OpenFlags::RDONLY | OpenFlags::BESTEFFORT;
        let opened = match only {
            Some(ranks) => runtime.gopen_on(file, flags, 0, ranks),
            None => runtime.gopen(file, flags),
        };
        let mut group = match opened {
            Ok(group) => group,
            Err(GroupError::Open(report)) => {
                collection.down = collection.down.union(&report.missing);
                continue;
            }
            Err(other) => return Err(other.to_string()),
        };
        collection.down = collection.down.union(&group.open_report().missing);
        let holding = group.ranks_of(&group.all_members());
        for (name, rank) in group.host_ranks().into_iter().filter(|(_, r)| holding.contains_value(*r as u64))
        {
            collection.up.insert(name);
            ranks.insert(name.to_owned(), rank);
        }
        group.gbindaggr(OpKind::Pread, AggrType::Data, spec.clone()).map_err(|e| e.to_string())?;
        let outcome = match group.run(FileOp::Pread { len: 1 << 20, offset: 0 }) {
            Ok(outcome) => outcome,
            Err(GroupError::Members(outcome)) => *outcome,
            Err(other) => return Err(other.to_string()),
        };
        collection.down = collection.down.union(outcome.missing());
        let summary =
            outcome.data().map(|d| d.decode::<metrics::Summary>()).transpose().map_err(|e| e.to_string())?;
        for (series, stat) in summary.flatten().unwrap_or_default() {
            let host_stat = HostStat {
                sum: stat.sum,
                count: stat.count,
                min: (stat.min.0, group.hosts_of(&stat.min.1)),
                max: (stat.max.0, group.hosts_of(&stat.max.1)),
            };
            collection.summary.insert(series, host_stat);
        }
    }
    collection.up = collection.up.difference(&collection.down);
    Ok((collection, ranks))
}

/// Serves until Ctrl-C, collecting every `interval` between requests (the runtime lives on this thread).
fn serve<T: Transport>(
    runtime: &Runtime<T>,
    server: &tiny_http::Server,
    interval: Duration,
) -> Result<bool, String> {
    interrupt::install();
    if let Some(address) = server.server_addr().to_ip() {
        let _ =
            writeln!(std::io::stderr(), "canopy monitor: serving http://{address}/ (metrics at /metrics)");
    }
    let (mut latest, mut ranks) = collect(runtime, None)?;
    let mut next = Instant::now() + interval;
    while !interrupt::requested() {
        let now = Instant::now();
        if now >= next {
            (latest, ranks) = collect(runtime, None)?;
            next = now + interval;
            continue;
        }
        let wait = (next - now).min(Duration::from_millis(200));
        let request = match server.recv_timeout(wait) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(e) => return Err(format!("cannot accept connections: {e}")),
        };
        let (status, kind, body) = respond(runtime, request.url(), &latest, &ranks);
        let header = tiny_http::Header::from_bytes("Content-Type", kind).expect("a valid header");
        let response = tiny_http::Response::from_string(body).with_status_code(status).with_header(header);
        // A client that went away is its own problem.
        let _ = request.respond(response);
    }
    Ok(true)
}

const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
const JSON: &str = "application/json";

fn respond<T: Transport>(
    runtime: &Runtime<T>,
    url: &str,
    latest: &Collection,
    ranks: &Ranks,
) -> (u16, &'static str, String) {
    let path = url.split('?').next().unwrap_or(url);
    match path {
        "/" | "/index.html" => (200, "text/html; charset=utf-8", PAGE.to_owned()),
        "/metrics" => (200, TEXT, exposition::render(latest)),
        "/api/cluster" => (200, JSON, exposition::json(latest).to_string()),
        _ => match path.strip_prefix("/api/host/") {
            Some(name) => match ranks.get(name) {
                Some(&rank) => match collect(runtime, Some(&RangeSet::from_values([rank as u64]))) {
                    Ok((host, _)) => (200, JSON, exposition::json(&host).to_string()),
                    Err(e) => (500, TEXT, e),
                },
                None => (404, TEXT, format!("no host {name}\n")),
            },
            None => (404, TEXT, format!("not found: {path}\n")),
        },
    }
}
