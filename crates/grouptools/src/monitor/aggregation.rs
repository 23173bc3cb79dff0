//! The monitor's two aggregations over one collector's file: every host's samples as they are (for
//! per-host series, up to `--instances` hosts), or per series the sum over the hosts, how many have it, and
//! the minimum and maximum with the hosts that hit them (for any number of hosts: what travels up the tree
//! is one summary per series, however many hosts are below). Values are exact fixed-point decimals, so
//! results do not depend on the tree's shape.

use super::collectors::{self, Detail, Sample, Series, Source};
use canopy_group::aggr::decimal::Decimal;
use canopy_group::{Aggregation, HostConfig, RangeSet, Registry, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Registry name of [`PerHost`]; its parameter is the JSON of a [`Source`].
pub const PER_HOST: &str = "monitor-per-host";
/// Registry name of [`Summary`]; its parameter is the JSON of a [`Source`].
pub const SUMMARY: &str = "monitor-summary";

/// Registers both (every host must).
pub fn register(registry: &mut Registry) {
    let source = |params: &str| serde_json::from_str::<Source>(params).map_err(|e| e.to_string());
    registry.register(PER_HOST, move |params: &str| Ok(PerHost(source(params)?)));
    registry.register(SUMMARY, move |params: &str| Ok(Summary(source(params)?)));
}

fn samples(source: Source, host: &HostConfig, value: &Value, detail: Detail) -> Vec<Sample> {
    match value {
        Value::Bytes(data) => collectors::collect(source, &String::from_utf8_lossy(data), host, detail),
        _ => Vec::new(),
    }
}

/// Every member's samples, in member order.
pub struct PerHost(pub Source);

impl Aggregation for PerHost {
    type Partial = Vec<(u64, Vec<Sample>)>;

    fn leaf(&self, member: u64, value: &Value) -> Self::Partial {
        self.leaf_on(&HostConfig::local(), member, value)
    }

    fn leaf_on(&self, host: &HostConfig, member: u64, value: &Value) -> Self::Partial {
        vec![(member, samples(self.0, host, value, Detail::PerHost))]
    }

    fn merge(&self, mut left: Self::Partial, right: Self::Partial) -> Self::Partial {
        left.extend(right);
        left
    }
}

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

/// Per series: sum, count, and the extremes with their members.
pub struct Summary(pub Source);

impl Aggregation for Summary {
    type Partial = BTreeMap<Series, Stat>;

    fn leaf(&self, member: u64, value: &Value) -> Self::Partial {
        self.leaf_on(&HostConfig::local(), member, value)
    }

    fn leaf_on(&self, host: &HostConfig, member: u64, value: &Value) -> Self::Partial {
        let mut out = BTreeMap::new();
        for (series, value) in samples(self.0, host, value, Detail::Cluster) {
            let stat = Stat::of(value, member);
            let stat = match out.remove(&series) {
                Some(existing) => Stat::merge(existing, stat),
                None => stat,
            };
            out.insert(series, stat);
        }
        out
    }

    fn merge(&self, mut left: Self::Partial, right: Self::Partial) -> Self::Partial {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_the_same_for_every_grouping_of_hosts() {
        let summary = Summary(Source::Loadavg);
        let loads = ["0.50 0.40 0.30 1/100 10\n", "2.25 1.00 0.75 3/200 20\n", "0.50 2.00 0.10 2/150 30\n"];
        let leaves: Vec<_> = loads
            .iter()
            .enumerate()
            .map(|(m, t)| summary.leaf(m as u64, &Value::Bytes(t.as_bytes().to_vec())))
            .collect();
        let left = summary.merge(summary.merge(leaves[0].clone(), leaves[1].clone()), leaves[2].clone());
        let right = summary.merge(leaves[0].clone(), summary.merge(leaves[1].clone(), leaves[2].clone()));
        assert_eq!(left, right);
        let load1 = &left[&Series { name: "node_load1".into(), labels: Vec::new() }];
        assert_eq!((load1.sum, load1.count), (Decimal::parse("3.25").unwrap(), 3));
        assert_eq!(load1.min, (Decimal::parse("0.5").unwrap(), RangeSet::from_values([0, 2])));
        assert_eq!(load1.max.1, RangeSet::from_values([1]));
    }
}
