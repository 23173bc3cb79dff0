//! The Prometheus text exposition (format 0.0.4) and the JSON of the same families.
//!
//! Per host (up to `--instances` hosts): node_exporter's families as node_exporter names, types and labels
//! them, each sample labelled `instance="HOST"` (scrape with `honor_labels: true` so Prometheus keeps it),
//! plus `canopy_host_up{instance}`. Over a cluster: `canopy_cluster_NAME{agg="sum|min|max|avg",…}` for
//! every node_exporter family (info families: only `agg="sum"`, the number of hosts of each kind), and
//! `canopy_cluster_extreme_hosts_info{metric,agg="min|max",hosts,…}` naming the hosts that hold an extreme.
//! Both have `canopy_cluster_hosts_up` and `canopy_cluster_hosts_down`.

use super::collection::{Collection, Data, HostStat};
use super::collectors::{self, Series};
use canopy_group::aggr::decimal::Decimal;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Prefix of the cluster-wide series.
pub const CLUSTER: &str = "canopy_cluster_";

/// A metric family: its samples as label pairs and values.
pub struct Family {
    /// The metric name.
    pub name: String,
    /// The HELP text.
    pub help: String,
    /// Label pairs and value of each sample.
    pub samples: Vec<(Vec<(String, String)>, Decimal)>,
}

impl Family {
    fn new(name: impl Into<String>, help: impl Into<String>) -> Family {
        Family { name: name.into(), help: help.into(), samples: Vec::new() }
    }

    fn push(&mut self, first: &[(&str, &str)], series: Option<&Series>, value: Decimal) {
        let labels = first
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(series.into_iter().flat_map(|s| s.labels.iter().cloned()))
            .collect();
        self.samples.push((labels, value));
    }

    /// `counter` or `gauge`.
    pub fn kind(&self) -> &'static str {
        family_type(&self.name)
    }
}

/// `counter` for names ending in `_total` (node_exporter's counters all do, and nothing else does),
/// else `gauge`.
pub fn family_type(name: &str) -> &'static str {
    if name.ends_with("_total") { "counter" } else { "gauge" }
}

/// Every family of a collection, in exposition order.
pub fn families(collection: &Collection) -> Vec<Family> {
    let mut up = Family::new("canopy_cluster_hosts_up", "Hosts that answered the last collection.");
    up.push(&[], None, Decimal::from_u64(collection.up.len()));
    let mut down = Family::new("canopy_cluster_hosts_down", "Hosts that did not answer the last collection.");
    down.push(&[], None, Decimal::from_u64(collection.down.len()));
    let mut out = vec![up, down];
    match &collection.data {
        Data::PerHost(hosts) => per_host(&mut out, collection, hosts),
        Data::Cluster(series) => cluster(&mut out, series),
    }
    out
}

fn per_host(
    out: &mut Vec<Family>,
    collection: &Collection,
    hosts: &BTreeMap<String, Vec<collectors::Sample>>,
) {
    let mut up = Family::new("canopy_host_up", "Whether the host answered the last collection.");
    for (host, value) in collection.up.iter().map(|h| (h, 1)).chain(collection.down.iter().map(|h| (h, 0))) {
        up.push(&[("instance", &host)], None, Decimal::from_u64(value));
    }
    out.push(up);
    let mut families: BTreeMap<&str, Family> = BTreeMap::new();
    for (host, samples) in hosts {
        for (series, value) in samples {
            let name = series.name.as_str();
            let family = families.entry(name).or_insert_with(|| Family::new(name, collectors::help(name)));
            family.push(&[("instance", host)], Some(series), *value);
        }
    }
    out.extend(families.into_values());
}

/// Which aggregates a cluster family has: info families only count their hosts.
fn aggregates(name: &str) -> &'static [&'static str] {
    if name.ends_with("_info") { &["sum"] } else { &["sum", "min", "max", "avg"] }
}

fn cluster(out: &mut Vec<Family>, series: &BTreeMap<Series, HostStat>) {
    let mut extremes = Family::new(
        format!("{CLUSTER}extreme_hosts_info"),
        "The hosts that hold a series' minimum or maximum (agg), value 1.",
    );
    let mut families: BTreeMap<&str, Family> = BTreeMap::new();
    for (s, stat) in series {
        let name = s.name.as_str();
        let family = families.entry(name).or_insert_with(|| {
            let help = format!(
                "{} Over the hosts: sum, min, max and avg (info: how many hosts).",
                collectors::help(name)
            );
            Family::new(format!("{CLUSTER}{name}"), help)
        });
        for agg in aggregates(name) {
            let value = match *agg {
                "sum" => stat.sum,
                "min" => stat.min.0,
                "max" => stat.max.0,
                _ => stat.mean(),
            };
            family.push(&[("agg", agg)], Some(s), value);
        }
        if !name.ends_with("_info") {
            for (agg, hosts) in [("min", &stat.min.1), ("max", &stat.max.1)] {
                let hosts = hosts.to_string();
                extremes.push(
                    &[("metric", name), ("agg", agg), ("hosts", &hosts)],
                    Some(s),
                    Decimal::from_u64(1),
                );
            }
        }
    }
    out.extend(families.into_values());
    out.push(extremes);
}

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The exposition text.
pub fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for family in families {
        let name = &family.name;
        let _ = write!(out, "# HELP {name} {}\n# TYPE {name} {}\n", family.help, family.kind());
        for (labels, value) in &family.samples {
            if labels.is_empty() {
                let _ = writeln!(out, "{name} {value}");
            } else {
                let inner: Vec<String> =
                    labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
                let _ = writeln!(out, "{name}{{{}}} {value}", inner.join(","));
            }
        }
    }
    out
}

/// The same families as JSON, for the API: `{"at", "up", "down", "hosts", "families": [{"name", "type",
/// "help", "samples": [{"labels": {...}, "value"}]}]}`.
pub fn json(collection: &Collection, families: &[Family]) -> Json {
    let families: Vec<Json> = families
        .iter()
        .map(|f| {
            let samples: Vec<Json> = f
                .samples
                .iter()
                .map(|(labels, value)| {
                    let labels: serde_json::Map<String, Json> =
                        labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
                    json!({"labels": labels, "value": value.to_f64()})
                })
                .collect();
            json!({"name": f.name, "type": f.kind(), "help": f.help, "samples": samples})
        })
        .collect();
    json!({
        "at": collection.at,
        "up": collection.up.to_string(),
        "down": collection.down.to_string(),
        "hosts": collection.up.iter().collect::<Vec<_>>(),
        "families": families,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_nodeset::NodeSet;

    #[test]
    fn text_and_json_carry_the_same_names_labels_and_values() {
        let series = Series {
            name: "node_filesystem_avail_bytes".into(),
            labels: vec![("mountpoint".into(), "/a \"b\"".into())],
        };
        let collection = Collection {
            at: 1.0,
            up: NodeSet::parse("host[0-1]").unwrap(),
            down: NodeSet::parse("host2").unwrap(),
            data: Data::PerHost(
                [
                    ("host0".to_owned(), vec![(series, Decimal::from_u64(42))]),
                    ("host1".to_owned(), Vec::new()),
                ]
                .into(),
            ),
        };
        let families = families(&collection);
        let text = render(&families);
        assert!(
            text.contains("node_filesystem_avail_bytes{instance=\"host0\",mountpoint=\"/a \\\"b\\\"\"} 42\n"),
            "{text}"
        );
        assert!(text.contains("canopy_host_up{instance=\"host2\"} 0\n"), "{text}");
        let doc = json(&collection, &families);
        let family = doc["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == "node_filesystem_avail_bytes")
            .unwrap();
        assert_eq!(family["type"], "gauge");
        assert_eq!(family["samples"][0]["labels"]["mountpoint"], "/a \"b\"");
        assert_eq!(family["samples"][0]["value"], 42.0);
    }
}
