//! The Prometheus text exposition of a collection: per node_exporter series a summary family (`_sum` over
//! the hosts that have it and `_count` of them) and gauges `_min` and `_max` labelled with the hosts that
//! hit them, plus `canopy_hosts_up` and `canopy_hosts_down`. A counter's family drops its `_total` (only
//! counters may end so): `node_cpu_seconds_total` becomes `node_cpu_seconds_sum`, `_count`, `_min`,
//! `_max`. `promtool check metrics` accepts the result.

use super::metrics::Series;
use canopy_group::NodeSet;
use canopy_group::aggr::decimal::Decimal;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A series across hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostStat {
    /// Sum over the hosts that have the series.
    pub sum: Decimal,
    /// How many hosts have it.
    pub count: u64,
    /// Smallest value and the hosts with it.
    pub min: (Decimal, NodeSet),
    /// Largest value and the hosts with it.
    pub max: (Decimal, NodeSet),
}

/// A collection: every series with its hosts, and which hosts answered.
#[derive(Clone, Debug, Default)]
pub struct Collection {
    /// Every series.
    pub summary: BTreeMap<Series, HostStat>,
    /// Hosts that answered.
    pub up: NodeSet,
    /// Hosts that did not.
    pub down: NodeSet,
}

fn with_label(labels: &str, extra: &str) -> String {
    match (labels.is_empty(), extra.is_empty()) {
        (true, true) => String::new(),
        (true, false) => format!("{{{extra}}}"),
        (false, true) => format!("{{{labels}}}"),
        (false, false) => format!("{{{labels},{extra}}}"),
    }
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The exposition text.
pub fn render(collection: &Collection) -> String {
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str, value: u64| {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n");
    };
    gauge(&mut out, "canopy_hosts_up", "Hosts that answered the last collection.", collection.up.len());
    gauge(
        &mut out,
        "canopy_hosts_down",
        "Hosts that did not answer the last collection.",
        collection.down.len(),
    );
    let mut names: Vec<&str> = collection.summary.keys().map(|(name, _)| name.as_str()).collect();
    names.dedup();
    for series_name in names {
        let series: Vec<_> = collection
            .summary
            .range((series_name.to_owned(), String::new())..)
            .take_while(|((n, _), _)| n == series_name)
            .collect();
        let name = series_name.strip_suffix("_total").unwrap_or(series_name);
        let _ = write!(
            out,
            "# HELP {name} {name} over the cluster's hosts: _sum and _count of hosts.\n# TYPE {name} summary\n"
        );
        for ((_, labels), stat) in &series {
            let labels = with_label(labels, "");
            let _ = write!(out, "{name}_sum{labels} {}\n{name}_count{labels} {}\n", stat.sum, stat.count);
        }
        for (suffix, what) in [("min", "Smallest"), ("max", "Largest")] {
            let _ = write!(
                out,
                "# HELP {name}_{suffix} {what} {name} of any host; host names the hosts with it.\n# TYPE {name}_{suffix} gauge\n"
            );
            for ((_, labels), stat) in &series {
                let (value, members) = if suffix == "min" { &stat.min } else { &stat.max };
                let host = format!("host=\"{}\"", escape(&members.to_string()));
                let _ = writeln!(out, "{name}_{suffix}{} {value}", with_label(labels, &host));
            }
        }
    }
    out
}

/// The collection as JSON for the page: series with sum, count, mean, min and max with their hosts.
pub fn json(collection: &Collection) -> serde_json::Value {
    let series: Vec<serde_json::Value> = collection
        .summary
        .iter()
        .map(|((name, labels), stat)| {
            serde_json::json!({
                "name": name,
                "labels": labels,
                "sum": stat.sum.to_string(),
                "count": stat.count,
                "mean": stat.sum.div_count(stat.count).to_string(),
                "min": stat.min.0.to_string(),
                "min_hosts": stat.min.1.to_string(),
                "max": stat.max.0.to_string(),
                "max_hosts": stat.max.1.to_string(),
            })
        })
        .collect();
    let hosts: Vec<String> = collection.up.iter().collect();
    serde_json::json!({"up": collection.up.to_string(), "down": collection.down.to_string(), "hosts": hosts, "series": series})
}
