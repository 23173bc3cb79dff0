//! The monitor's aggregation: each host parses its `/proc` metric files into node_exporter-style series,
//! and the tree keeps per series the sum, the count, and the minimum and maximum with the members that
//! hit them. Values are exact fixed-point decimals, so results do not depend on the tree's shape.

use canopy_group::aggr::decimal::Decimal;
use canopy_group::{Aggregation, RangeSet, Registry, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Registry name of [`MetricSummary`].
pub const AGGREGATION: &str = "monitor-metrics";

/// The files read on every host.
pub const FILES: [&str; 4] = ["/proc/loadavg", "/proc/meminfo", "/proc/stat", "/proc/net/dev"];

/// A series: metric name and its labels (`mode="user"`), as Prometheus prints them.
pub type Series = (String, String);

/// A series across members.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    /// Sum of the members' values.
    pub sum: Decimal,
    /// Members with the series.
    pub count: u64,
    /// Smallest value and the members with it.
    pub min: (Decimal, RangeSet),
    /// Largest value and the members with it.
    pub max: (Decimal, RangeSet),
}

impl Stat {
    fn of(value: Decimal, member: u64) -> Stat {
        let members = RangeSet::from_values([member]);
        Stat { sum: value, count: 1, min: (value, members.clone()), max: (value, members) }
    }

    fn merge(self, other: Stat) -> Stat {
        let pick = |a: (Decimal, RangeSet), b: (Decimal, RangeSet), keep_less: bool| match a.0.cmp(&b.0) {
            std::cmp::Ordering::Equal => (a.0, a.1.union(&b.1)),
            std::cmp::Ordering::Less if keep_less => a,
            std::cmp::Ordering::Greater if !keep_less => a,
            _ => b,
        };
        Stat {
            sum: self.sum.saturating_add(other.sum),
            count: self.count + other.count,
            min: pick(self.min, other.min, true),
            max: pick(self.max, other.max, false),
        }
    }
}

/// Every series of a subtree.
pub type Summary = BTreeMap<Series, Stat>;

/// The series one metric file holds. `ticks` is the host's clock tick (USER_HZ) for `/proc/stat`.
pub fn parse(text: &str, ticks: u64) -> Vec<(Series, Decimal)> {
    let series = |name: &str, labels: String, value: Decimal| ((name.to_owned(), labels), value);
    let mut out = Vec::new();
    if text.starts_with("MemTotal:") {
        for line in text.lines() {
            let Some((key, rest)) = line.split_once(':') else { continue };
            let mut words = rest.split_whitespace();
            let (Some(number), unit) = (words.next().and_then(|n| n.parse::<u64>().ok()), words.next())
            else {
                continue;
            };
            let bytes = if unit == Some("kB") { number.saturating_mul(1024) } else { number };
            let name = format!("node_memory_{}_bytes", snake_case(key));
            out.push(series(&name, String::new(), Decimal::from_u64(bytes)));
        }
    } else if text.starts_with("cpu ") {
        const MODES: [&str; 8] = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"];
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let key = words.next().unwrap_or("");
            let numbers: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
            match key {
                "cpu" => {
                    for (mode, t) in MODES.iter().zip(&numbers) {
                        let seconds = Decimal::from_u64(*t).div_count(ticks.max(1));
                        out.push(series("node_cpu_seconds_total", format!("mode=\"{mode}\""), seconds));
                    }
                }
                "ctxt" => out.extend(
                    numbers
                        .first()
                        .map(|n| series("node_context_switches_total", String::new(), Decimal::from_u64(*n))),
                ),
                "processes" => out.extend(
                    numbers.first().map(|n| series("node_forks_total", String::new(), Decimal::from_u64(*n))),
                ),
                "procs_running" => out.extend(
                    numbers
                        .first()
                        .map(|n| series("node_procs_running", String::new(), Decimal::from_u64(*n))),
                ),
                "procs_blocked" => out.extend(
                    numbers
                        .first()
                        .map(|n| series("node_procs_blocked", String::new(), Decimal::from_u64(*n))),
                ),
                "btime" => out.extend(
                    numbers
                        .first()
                        .map(|n| series("node_boot_time_seconds", String::new(), Decimal::from_u64(*n))),
                ),
                _ => {}
            }
        }
    } else if text.starts_with("Inter-") {
        const COLUMNS: [(usize, &str); 4] = [
            (0, "node_network_receive_bytes_total"),
            (1, "node_network_receive_packets_total"),
            (8, "node_network_transmit_bytes_total"),
            (9, "node_network_transmit_packets_total"),
        ];
        for line in text.lines().skip(2) {
            let Some((device, rest)) = line.split_once(':') else { continue };
            let numbers: Vec<u64> = rest.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            for (column, name) in COLUMNS {
                if let Some(n) = numbers.get(column) {
                    out.push(series(name, format!("device=\"{}\"", device.trim()), Decimal::from_u64(*n)));
                }
            }
        }
    } else {
        // /proc/loadavg: "0.52 0.58 0.59 2/1234 5678"
        let words: Vec<&str> = text.split_whitespace().collect();
        for (i, name) in ["node_load1", "node_load5", "node_load15"].into_iter().enumerate() {
            if let Some(value) = words.get(i).and_then(|w| Decimal::parse(w)) {
                out.push(series(name, String::new(), value));
            }
        }
    }
    out
}

/// `MemTotal` → `mem_total`, `Active(anon)` → `active_anon`, `HugePages_Total` → `huge_pages_total`: the
/// meminfo keys in Prometheus's snake case.
fn snake_case(key: &str) -> String {
    // promtool reads "sec" as an abbreviated unit.
    let key = if key == "SecPageTables" { "SecondaryPageTables" } else { key };
    let mut out = String::new();
    let mut previous: Option<char> = None;
    for c in key.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if c.is_ascii_uppercase() && previous.is_some_and(|p| p.is_ascii_lowercase()) {
            out.push('_');
        }
        if c != '_' || !out.ends_with('_') {
            out.push(c.to_ascii_lowercase());
        }
        previous = Some(c);
    }
    out.trim_matches('_').to_owned()
}

/// The aggregation.
pub struct MetricSummary {
    ticks: u64,
}

impl MetricSummary {
    /// With this machine's clock tick.
    pub fn new() -> MetricSummary {
        // SAFETY: sysconf has no preconditions.
        MetricSummary { ticks: unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64 }
    }
}

impl Default for MetricSummary {
    fn default() -> Self {
        Self::new()
    }
}

impl Aggregation for MetricSummary {
    type Partial = Summary;

    fn leaf(&self, member: u64, value: &Value) -> Summary {
        let Value::Bytes(data) = value else { return Summary::new() };
        parse(&String::from_utf8_lossy(data), self.ticks)
            .into_iter()
            .map(|(s, v)| (s, Stat::of(v, member)))
            .collect()
    }

    fn merge(&self, mut left: Summary, right: Summary) -> Summary {
        for (series, stat) in right {
            let merged = match left.remove(&series) {
                Some(existing) => existing.merge(stat),
                None => stat,
            };
            left.insert(series, merged);
        }
        left
    }
}

/// Registers [`MetricSummary`] (every host must).
pub fn register(registry: &mut Registry) {
    registry.register(AGGREGATION, |_: &str| Ok(MetricSummary::new()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_four_files_into_node_exporter_series() {
        let load = parse("0.50 1.25 2.00 3/456 789\n", 100);
        assert_eq!(load[1], (("node_load5".into(), String::new()), Decimal::parse("1.25").unwrap()));
        let mem = parse("MemTotal:       1000 kB\nActive(anon):      2 kB\nHugePages_Total:   0\n", 100);
        let names: Vec<&str> = mem.iter().map(|((n, _), _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "node_memory_mem_total_bytes",
                "node_memory_active_anon_bytes",
                "node_memory_huge_pages_total_bytes"
            ]
        );
        assert_eq!(snake_case("DirectMap4k"), "direct_map4k");
        assert_eq!(snake_case("DirectMap2M"), "direct_map2m");
        assert_eq!(snake_case("NFS_Unstable"), "nfs_unstable");
        assert_eq!(mem[0].1, Decimal::from_u64(1_024_000));
        let stat = parse(
            "cpu  150 0 50 1000 0 0 0 0 0 0\ncpu0 150 0 50 1000 0 0 0 0\nctxt 77\nbtime 1700000000\n",
            100,
        );
        assert_eq!(
            stat[0],
            (("node_cpu_seconds_total".into(), "mode=\"user\"".into()), Decimal::parse("1.5").unwrap())
        );
        assert!(
            stat.contains(&(("node_context_switches_total".into(), String::new()), Decimal::from_u64(77)))
        );
        let net =
            parse("Inter-|   Receive\n face |bytes packets\n  lo: 10 2 0 0 0 0 0 0 30 4 0 0 0 0 0 0\n", 100);
        assert_eq!(
            net[2],
            (("node_network_transmit_bytes_total".into(), "device=\"lo\"".into()), Decimal::from_u64(30))
        );
    }
}
