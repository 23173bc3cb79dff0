//! What the page shows: a few vital signs of a host or of the whole cluster per collection — CPU busy
//! share, load, memory, network and disk throughput (rates from node_exporter's counters between two
//! collections), file-system use, uptime — and their history over the last minutes.

use super::collection::{Collection, Data, HostStat};
use super::collectors::{Sample, Series};
use std::collections::{BTreeMap, VecDeque};

/// A host's or the cluster's vital signs at one collection (`None`: not known, e.g. no rate yet).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Vitals {
    /// Share of CPU time not idle since the previous collection, 0 to 1.
    pub cpu_busy: Option<f64>,
    /// 1-minute load average (over a cluster: the mean per host).
    pub load1: Option<f64>,
    /// Memory in use (total less available), bytes.
    pub mem_used: Option<f64>,
    /// Memory, bytes.
    pub mem_total: Option<f64>,
    /// Bytes per second received and sent (all devices but loopback).
    pub net: Option<(f64, f64)>,
    /// Bytes per second read from and written to disks.
    pub disk: Option<(f64, f64)>,
    /// File systems: bytes in use and size.
    pub fs: Option<(f64, f64)>,
    /// Seconds since boot (over a cluster: the youngest host's).
    pub uptime: Option<f64>,
    /// Boot time, seconds since the epoch (over a cluster: the latest).
    pub boot_time: Option<f64>,
}

/// Sums of series over what a view covers: one host's samples, all hosts' samples, or cluster summaries.
pub enum View<'a> {
    /// One host.
    Host(&'a [Sample]),
    /// Every host of a per-host collection.
    Hosts(&'a BTreeMap<String, Vec<Sample>>),
    /// A cluster collection.
    Cluster(&'a BTreeMap<Series, HostStat>),
}

impl<'a> View<'a> {
    /// The view of a whole collection.
    pub fn of(collection: &'a Collection) -> View<'a> {
        match &collection.data {
            Data::PerHost(hosts) => View::Hosts(hosts),
            Data::Cluster(series) => View::Cluster(series),
        }
    }

    /// Sum of the series named `name` that `keep` keeps, and the number of hosts that have one.
    fn sum(&self, name: &str, keep: &dyn Fn(&Series) -> bool) -> Option<(f64, u64)> {
        let matching = |s: &Series| s.name == name && keep(s);
        let (sum, count) = match self {
            View::Host(samples) => {
                let values: Vec<f64> =
                    samples.iter().filter(|(s, _)| matching(s)).map(|(_, v)| v.to_f64()).collect();
                (values.iter().sum(), u64::from(!values.is_empty()))
            }
            View::Hosts(hosts) => hosts.values().fold((0.0, 0), |(sum, count), samples| {
                match View::Host(samples).sum(name, keep) {
                    Some((s, c)) => (sum + s, count + c),
                    None => (sum, count),
                }
            }),
            View::Cluster(series) => series
                .iter()
                .filter(|(s, _)| matching(s))
                .fold((0.0, 0), |(sum, count), (_, stat)| (sum + stat.sum.to_f64(), count.max(stat.count))),
        };
        (count > 0).then_some((sum, count))
    }

    fn total(&self, name: &str) -> Option<f64> {
        self.sum(name, &|_| true).map(|(sum, _)| sum)
    }

    /// The largest value of a series over the hosts.
    fn max(&self, name: &str) -> Option<f64> {
        match self {
            View::Host(_) => self.total(name),
            View::Hosts(hosts) => {
                hosts.values().filter_map(|samples| View::Host(samples).total(name)).reduce(f64::max)
            }
            View::Cluster(series) => series
                .iter()
                .filter(|(s, _)| s.name == name)
                .map(|(_, stat)| stat.max.0.to_f64())
                .reduce(f64::max),
        }
    }
}

fn not_loopback(series: &Series) -> bool {
    series.label("device") != Some("lo")
}

fn healthy(series: &Series) -> bool {
    series.label("mountpoint").is_some()
}

/// `(now - before) / seconds`, when the counter did not go back (a reboot, a host that left).
fn rate(now: Option<f64>, before: Option<f64>, seconds: f64) -> Option<f64> {
    let delta = now? - before?;
    (delta >= 0.0 && seconds > 0.0).then(|| delta / seconds)
}

/// The vital signs of `now`, with rates against `before` taken `seconds` earlier.
pub fn vitals(now: &View<'_>, before: Option<&View<'_>>, seconds: f64) -> Vitals {
    let counter =
        |view: &View<'_>, name: &str, keep: &dyn Fn(&Series) -> bool| view.sum(name, keep).map(|(s, _)| s);
    let rate_of = |name: &str, keep: &dyn Fn(&Series) -> bool| {
        before.and_then(|b| rate(counter(now, name, keep), counter(b, name, keep), seconds))
    };
    let cpu = "node_cpu_seconds_total";
    let idle = |s: &Series| s.label("mode") == Some("idle");
    let cpu_busy = match (rate_of(cpu, &idle), rate_of(cpu, &|_| true)) {
        (Some(idle), Some(all)) if all > 0.0 => Some((1.0 - idle / all).clamp(0.0, 1.0)),
        _ => None,
    };
    let both = |a: Option<f64>, b: Option<f64>| a.zip(b);
    let mem_total = now.total("node_memory_MemTotal_bytes");
    let mem_available = now.total("node_memory_MemAvailable_bytes");
    let fs_size = now.sum("node_filesystem_size_bytes", &healthy).map(|(s, _)| s);
    let fs_avail = now.sum("node_filesystem_avail_bytes", &healthy).map(|(s, _)| s);
    let boot_time = now.max("node_boot_time_seconds");
    let clock = now.sum("node_time_seconds", &|_| true).map(|(sum, count)| sum / count as f64);
    Vitals {
        cpu_busy,
        load1: now.sum("node_load1", &|_| true).map(|(sum, count)| sum / count as f64),
        mem_used: both(mem_total, mem_available).map(|(t, a)| t - a),
        mem_total,
        net: both(
            rate_of("node_network_receive_bytes_total", &not_loopback),
            rate_of("node_network_transmit_bytes_total", &not_loopback),
        ),
        disk: both(
            rate_of("node_disk_read_bytes_total", &|_| true),
            rate_of("node_disk_written_bytes_total", &|_| true),
        ),
        fs: both(fs_size, fs_avail).map(|(size, avail)| (size - avail, size)),
        uptime: both(clock, boot_time).map(|(clock, boot)| (clock - boot).max(0.0)),
        boot_time,
    }
}

/// The vital signs of one collection point: the cluster's, and each host's when hosts keep their series.
#[derive(Clone, Debug)]
pub struct Point {
    /// When, in seconds since the epoch.
    pub at: f64,
    /// The cluster's.
    pub cluster: Vitals,
    /// Each host's (per-host collections only).
    pub hosts: BTreeMap<String, Vitals>,
}

/// The last minutes of vital signs, and the latest collection (for rates and the exposition).
pub struct History {
    window: f64,
    points: VecDeque<Point>,
    latest: Option<Collection>,
}

impl History {
    /// Keeps `window` seconds of points.
    pub fn new(window: f64) -> History {
        History { window, points: VecDeque::new(), latest: None }
    }

    /// Adds a collection.
    pub fn push(&mut self, collection: Collection) {
        let point = {
            let before = self.latest.as_ref();
            let seconds = before.map_or(0.0, |b| collection.at - b.at);
            let hosts = match (&collection.data, before.map(|b| &b.data)) {
                (Data::PerHost(now), before) => now
                    .iter()
                    .map(|(host, samples)| {
                        let previous = match before {
                            Some(Data::PerHost(hosts)) => hosts.get(host).map(|s| View::Host(s)),
                            _ => None,
                        };
                        (host.clone(), vitals(&View::Host(samples), previous.as_ref(), seconds))
                    })
                    .collect(),
                _ => BTreeMap::new(),
            };
            let cluster = vitals(&View::of(&collection), before.map(View::of).as_ref(), seconds);
            Point { at: collection.at, cluster, hosts }
        };
        self.points.push_back(point);
        while self.points.front().is_some_and(|p| p.at < collection.at - self.window) {
            self.points.pop_front();
        }
        self.latest = Some(collection);
    }

    /// The latest collection.
    pub fn latest(&self) -> Option<&Collection> {
        self.latest.as_ref()
    }

    /// The points, oldest first.
    pub fn points(&self) -> &VecDeque<Point> {
        &self.points
    }

    /// Seconds of history kept.
    pub fn window(&self) -> f64 {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_group::aggr::decimal::Decimal;

    fn sample(name: &str, labels: &[(&str, &str)], value: f64) -> Sample {
        let labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        (Series { name: name.into(), labels }, Decimal::parse(&format!("{value}")).unwrap())
    }

    #[test]
    fn rates_come_from_counters_between_collections() {
        let at = |idle: f64, user: f64, rx: f64| {
            vec![
                sample("node_cpu_seconds_total", &[("cpu", "0"), ("mode", "idle")], idle),
                sample("node_cpu_seconds_total", &[("cpu", "0"), ("mode", "user")], user),
                sample("node_network_receive_bytes_total", &[("device", "eth0")], rx),
                sample("node_network_receive_bytes_total", &[("device", "lo")], rx * 10.0),
                sample("node_network_transmit_bytes_total", &[("device", "eth0")], 0.0),
                sample("node_memory_MemTotal_bytes", &[], 1000.0),
                sample("node_memory_MemAvailable_bytes", &[], 250.0),
                sample("node_boot_time_seconds", &[], 100.0),
                sample("node_time_seconds", &[], 3700.0),
            ]
        };
        let (before, now) = (at(10.0, 10.0, 1000.0), at(13.0, 19.0, 3000.0));
        let v = vitals(&View::Host(&now), Some(&View::Host(&before)), 2.0);
        assert_eq!(v.cpu_busy, Some(0.75));
        assert_eq!(v.net, Some((1000.0, 0.0)));
        assert_eq!((v.mem_used, v.mem_total), (Some(750.0), Some(1000.0)));
        assert_eq!(v.uptime, Some(3600.0));
        assert_eq!(vitals(&View::Host(&now), None, 0.0).cpu_busy, None, "a rate needs two collections");
        let reset = vitals(&View::Host(&before), Some(&View::Host(&now)), 2.0);
        assert_eq!(reset.net, None, "a counter that went back is no rate");
    }
}
