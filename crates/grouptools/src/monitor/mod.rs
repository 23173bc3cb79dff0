//! `canopy monitor --listen ADDR`: the TBON-FS paper's Ganglia integration done the modern way (§4.2), as
//! a node_exporter for a whole cluster. Every interval, one group read of each of node_exporter's `/proc`
//! files on all hosts, aggregated in the tree (each host's samples, or over a large cluster per series
//! the sum and extremes with the hosts that hold them); served as one Prometheus exposition (`/metrics`,
//! node_exporter's names, types and labels), as JSON (`/api/cluster`, `/api/host/NAME`), and as pages with
//! charts (`/`, `/host/NAME`).

mod aggregation;
mod collection;
pub mod collectors;
pub mod exposition;
mod page;
mod vitals;

use crate::hosts::{HostsArgs, with_runtime};
use crate::interrupt;
use canopy_group::{Registry, Runtime, Transport};
use canopy_nodeset::RangeSet;
use canopy_transport::World;
use clap::Args;
use collection::{Collection, Data, Mode, collect};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use vitals::{History, View, vitals};

const EXAMPLES: &str = "\
Examples:
  canopy monitor --listen 127.0.0.1:9100              # then open http://127.0.0.1:9100/
  canopy monitor --listen 0.0.0.0:9100 --interval 15  # for a Prometheus scrape job
  canopy monitor --once                               # one exposition on stdout
  canopy monitor --once --hosts 'node[01-08]' --host-root /srv/sim/{host}
  mpirun -n 512 canopy monitor --listen 0.0.0.0:9100   # one host per rank

Served: /metrics, the Prometheus exposition. Up to --instances hosts (and without --aggregate)
it is node_exporter's: the same names, types and labels for cpu, meminfo, loadavg, stat, netdev,
diskstats, filesystem, uname and time, with an instance label per host (scrape with
honor_labels: true) and canopy_host_up{instance}. Above that, or with --aggregate, each series is
summed in the tree: canopy_cluster_NAME{agg=\"sum|min|max|avg\"} (info series: agg=\"sum\", the
number of hosts of each kind), and canopy_cluster_extreme_hosts_info{metric,agg,hosts} names the
hosts holding a minimum or maximum. Both have canopy_cluster_hosts_up and _down.
Also: / (a page with charts of the last --history minutes, a table of hosts, drill-down per
host at /host/NAME), /api/cluster and /api/host/NAME (the exposition's series as JSON).
Ctrl-C stops the server.
Exit status: 0; 1 when no host had a readable metric file, a host did not answer (--once) or
the server failed; 2 on usage errors.";

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

    /// Per-host series (node_exporter's, with an instance label) for up to this many hosts; above it
    /// the cluster's aggregates
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub instances: usize,

    /// The cluster's aggregates whatever the number of hosts
    #[arg(long)]
    pub aggregate: bool,

    /// Minutes of history the page's charts show
    #[arg(long, value_name = "MINUTES", default_value_t = 15.0)]
    pub history: f64,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// The aggregations the monitor needs on every host.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    aggregation::register(&mut registry);
    registry
}

/// Runs `canopy monitor`.
pub fn run(args: MonitorArgs, cluster: &World) -> ExitCode {
    let mut err = std::io::stderr().lock();
    for (flag, value) in [("--interval", args.interval), ("--history", args.history)] {
        if !(value > 0.0 && value.is_finite()) {
            let _ = writeln!(err, "canopy monitor: invalid {flag} {value}");
            return ExitCode::from(2);
        }
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
    let outcome = with_runtime(&args.hosts, cluster, registry(), |runtime| {
        let mode =
            if args.aggregate || runtime.hosts() > args.instances { Mode::Cluster } else { Mode::PerHost };
        let first = collect(runtime, mode, None)?;
        if first.is_empty() {
            return Err(format!(
                "no host had a readable metric file ({}) under its root; hosts down: {}",
                collectors::Source::ALL.map(collectors::Source::path).join(", "),
                if first.down.is_empty() { "none".to_owned() } else { first.down.to_string() }
            ));
        }
        match &server {
            Some(server) => Monitor::new(runtime, mode, &args, first).serve(server),
            None => {
                let text = exposition::render(&exposition::families(&first));
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(|e| format!("cannot write: {e}"))?;
                Ok(first.down.is_empty())
            }
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

/// The serving monitor: its runtime, the history of collections, and drill-downs' last samples.
struct Monitor<'rt, T: Transport> {
    runtime: &'rt Runtime<T>,
    mode: Mode,
    interval: Duration,
    history: History,
    /// Ranks by host name, for drill-downs.
    ranks: HashMap<String, usize>,
    /// Over a large cluster, the last drill-down collection of each host visited (for its rates).
    visited: HashMap<String, Collection>,
}

/// One host's latest collection and its vitals over time.
type Drilled = (Collection, Vec<(f64, vitals::Vitals)>);

const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
const JSON: &str = "application/json";
const HTML: &str = "text/html; charset=utf-8";

impl<'rt, T: Transport> Monitor<'rt, T> {
    fn new(runtime: &'rt Runtime<T>, mode: Mode, args: &MonitorArgs, first: Collection) -> Self {
        let mut history = History::new(args.history * 60.0);
        history.push(first);
        let mut monitor = Monitor {
            runtime,
            mode,
            interval: Duration::from_secs_f64(args.interval),
            history,
            ranks: HashMap::new(),
            visited: HashMap::new(),
        };
        monitor.ranks = monitor.host_ranks();
        monitor
    }

    /// Every host's rank, from a group open (its hosts answer with their names).
    fn host_ranks(&self) -> HashMap<String, usize> {
        let flags = canopy_group::OpenFlags::RDONLY | canopy_group::OpenFlags::BESTEFFORT;
        match self.runtime.gopen(collectors::Source::Loadavg.path(), flags) {
            Ok(group) => group.host_ranks().into_iter().map(|(name, rank)| (name.to_owned(), rank)).collect(),
            Err(_) => HashMap::new(),
        }
    }

    /// Serves until Ctrl-C, collecting every interval between requests (the runtime lives on this thread;
    /// responses are written by their own threads, so a slow or vanished client holds nothing up).
    fn serve(mut self, server: &tiny_http::Server) -> Result<bool, String> {
        interrupt::install();
        if let Some(address) = server.server_addr().to_ip() {
            let _ = writeln!(
                std::io::stderr(),
                "canopy monitor: serving http://{address}/ (metrics at /metrics)"
            );
        }
        let mut next = Instant::now() + self.interval;
        while !interrupt::requested() {
            let now = Instant::now();
            if now >= next {
                let collection = collect(self.runtime, self.mode, None)?;
                self.history.push(collection);
                next = now + self.interval;
                continue;
            }
            let wait = (next - now).min(Duration::from_millis(200));
            let request = match server.recv_timeout(wait) {
                Ok(Some(request)) => request,
                Ok(None) => continue,
                // One connection's trouble is not the server's.
                Err(_) => continue,
            };
            let (status, kind, body) = self.respond(request.url());
            let header = tiny_http::Header::from_bytes("Content-Type", kind).expect("a valid header");
            let response =
                tiny_http::Response::from_string(body).with_status_code(status).with_header(header);
            // A client that went away (EPIPE, reset) is its own problem.
            std::thread::spawn(move || {
                let _ = request.respond(response);
            });
        }
        Ok(true)
    }

    fn respond(&mut self, url: &str) -> (u16, &'static str, String) {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let latest = self.history.latest().expect("a first collection").clone();
        let refresh = self.interval.as_secs_f64();
        match path {
            "/" | "/index.html" => {
                let points = page::series_of(self.history.points(), None);
                let hosts = self.history.points().back().filter(|p| !p.hosts.is_empty()).map(|p| &p.hosts);
                let page = page::render(
                    &page::Subject::Cluster,
                    &latest,
                    &points,
                    self.history.window(),
                    refresh,
                    hosts,
                );
                (200, HTML, page)
            }
            "/metrics" => (200, TEXT, exposition::render(&exposition::families(&latest))),
            "/api/cluster" => {
                (200, JSON, exposition::json(&latest, &exposition::families(&latest)).to_string())
            }
            "/host" => match query.split('&').find_map(|kv| kv.strip_prefix("name=")) {
                Some(name) => self.host_page(&decode(name), refresh),
                None => (404, TEXT, "no host name given\n".into()),
            },
            _ => {
                if let Some(name) = path.strip_prefix("/host/") {
                    return self.host_page(&decode(name), refresh);
                }
                if let Some(name) = path.strip_prefix("/api/host/") {
                    return match self.host(&decode(name)) {
                        Ok(Some((collection, _))) => (
                            200,
                            JSON,
                            exposition::json(&collection, &exposition::families(&collection)).to_string(),
                        ),
                        Ok(None) => (404, TEXT, format!("no host {}\n", decode(name))),
                        Err(e) => (500, TEXT, format!("{e}\n")),
                    };
                }
                (404, TEXT, format!("not found: {path}\n"))
            }
        }
    }

    /// One host's latest collection and vitals history: from the cluster's collections when hosts keep
    /// their series, else collected from that host now (with rates against its previous visit).
    fn host(&mut self, name: &str) -> Result<Option<Drilled>, String> {
        let latest = self.history.latest().expect("a first collection");
        if let Data::PerHost(hosts) = &latest.data {
            let Some(samples) = hosts.get(name) else { return Ok(None) };
            let collection = Collection {
                at: latest.at,
                up: canopy_nodeset::NodeSet::from_names([name]),
                down: canopy_nodeset::NodeSet::new(),
                data: Data::PerHost(BTreeMap::from([(name.to_owned(), samples.clone())])),
            };
            return Ok(Some((collection, page::series_of(self.history.points(), Some(name)))));
        }
        let Some(&rank) = self.ranks.get(name) else { return Ok(None) };
        let collection = collect(self.runtime, Mode::PerHost, Some(&RangeSet::from_values([rank as u64])))?;
        let mut points = Vec::new();
        if let (Some(before), Data::PerHost(now)) = (self.visited.get(name), &collection.data)
            && let (Data::PerHost(then), Some(samples)) = (&before.data, now.get(name))
        {
            let previous = then.get(name).map(|s| View::Host(s));
            let seconds = collection.at - before.at;
            points.push((collection.at, vitals(&View::Host(samples), previous.as_ref(), seconds)));
        } else if let Data::PerHost(now) = &collection.data
            && let Some(samples) = now.get(name)
        {
            points.push((collection.at, vitals(&View::Host(samples), None, 0.0)));
        }
        if self.visited.len() >= 64 {
            self.visited.clear();
        }
        self.visited.insert(name.to_owned(), collection.clone());
        Ok(Some((collection, points)))
    }

    fn host_page(&mut self, name: &str, refresh: f64) -> (u16, &'static str, String) {
        match self.host(name) {
            Ok(Some((collection, points))) => {
                let samples = match &collection.data {
                    Data::PerHost(hosts) => hosts.get(name).cloned().unwrap_or_default(),
                    Data::Cluster(_) => Vec::new(),
                };
                let subject = page::Subject::Host(name, &samples);
                (
                    200,
                    HTML,
                    page::render(&subject, &collection, &points, self.history.window(), refresh, None),
                )
            }
            Ok(None) => (404, TEXT, format!("no host {name}\n")),
            Err(e) => (500, TEXT, format!("{e}\n")),
        }
    }
}

/// `%XX` and `+` decoded, as browsers encode a form's field and a link's path.
fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " ")).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_form_fields_decode_to_the_host_name() {
        assert_eq!(decode("node%5B1-2%5D"), "node[1-2]");
        assert_eq!(decode("a+b%2Bc"), "a b+c");
        assert_eq!(decode("caf%C3%A9"), "café");
        assert_eq!(decode("100%"), "100%");
        let odd = "n 1/é+x~y";
        assert_eq!(decode(&page::url(odd)), odd);
    }
}
