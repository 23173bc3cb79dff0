//! The monitor's two aggregations over one collector's file: every host's samples as they are (for
//! per-host series, up to `--instances` hosts), or per series the sum over the hosts, how many have it, and
//! the minimum and maximum with the hosts that hit them (for any number of hosts: what travels up the tree
//! is one summary per series, however many hosts are below). Values are exact fixed-point decimals, so
//! results do not depend on the tree's shape.

use super::collectors::{self, Detail, Sample, Series, Source};
use canopy_group::aggr::decimal::Decimal;
use canopy_group::{Aggregation, HostConfig, Registry, Value};
use canopy_nodeset::RangeSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Registry name of [`PerHost`]; its parameter is the JSON of a [`Source`].
pub const PER_HOST: &str = "monitor-per-host";
/// Registry name of [`SeriesSummary`]; its parameter is the JSON of a [`Source`].
pub const SUMMARY: &str = "monitor-summary";

/// Registers both (every host must).
pub fn register(registry: &mut Registry) {
    let source = |params: &str| serde_json::from_str::<Source>(params).map_err(|e| e.to_string());
    registry.register(PER_HOST, move |params: &str| Ok(PerHost(source(params)?)));
    registry.register(SUMMARY, move |params: &str| Ok(SeriesSummary(source(params)?)));
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

/// A series across members (`Who` a set of members), or across hosts (`Who` a set of hosts).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat<Who> {
    /// Sum of the values.
    pub sum: Decimal,
    /// How many have the series.
    pub count: u64,
    /// Smallest value and who has it.
    pub min: (Decimal, Who),
    /// Largest value and who has it.
    pub max: (Decimal, Who),
}

impl Stat<RangeSet> {
    fn of(value: Decimal, member: u64) -> Self {
        let members = RangeSet::from_values([member]);
        Stat { sum: value, count: 1, min: (value, members.clone()), max: (value, members) }
    }

    fn merge(self, other: Self) -> Self {
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

impl<Who> Stat<Who> {
    /// The mean over those that have the series.
    pub fn mean(&self) -> Decimal {
        self.sum.div_count(self.count)
    }

    /// The same figures, with who holds the extremes named another way.
    pub fn map<Other>(self, name: impl Fn(&Who) -> Other) -> Stat<Other> {
        Stat {
            sum: self.sum,
            count: self.count,
            min: (self.min.0, name(&self.min.1)),
            max: (self.max.0, name(&self.max.1)),
        }
    }
}

/// Per series: sum, count, and the extremes with their members.
pub struct SeriesSummary(pub Source);

impl Aggregation for SeriesSummary {
    type Partial = BTreeMap<Series, Stat<RangeSet>>;

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
        let summary = SeriesSummary(Source::Loadavg);
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

    #[test]
    fn extremes_keep_their_values_when_members_are_named_as_hosts() {
        let summary = SeriesSummary(Source::Loadavg);
        let loads = ["4.00 0 0 1/1 1\n", "1.00 0 0 1/1 1\n", "1.00 0 0 1/1 1\n", "2.00 0 0 1/1 1\n"];
        let merged = loads
            .iter()
            .enumerate()
            .map(|(m, t)| summary.leaf(m as u64, &Value::Bytes(t.as_bytes().to_vec())))
            .reduce(|left, right| summary.merge(left, right))
            .unwrap();
        let load1 = merged[&Series { name: "node_load1".into(), labels: Vec::new() }].clone();
        let named = load1.map(|members| members.iter().map(|m| format!("n{m}")).collect::<Vec<_>>());
        assert_eq!(named.mean(), Decimal::parse("2").unwrap());
        assert_eq!((named.sum, named.count), (Decimal::parse("8").unwrap(), 4));
        assert_eq!(named.min, (Decimal::parse("1").unwrap(), vec!["n1".to_owned(), "n2".to_owned()]));
        assert_eq!(named.max, (Decimal::parse("4").unwrap(), vec!["n0".to_owned()]));
    }
}
