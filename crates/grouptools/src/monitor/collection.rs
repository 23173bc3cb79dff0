//! One collection: every collector's file read on every host in one group read each, aggregated in the tree
//! per host (each host's samples) or per series (sums and extremes over the hosts).

use super::aggregation::{self, Stat};
use super::collectors::{Sample, Series, Source};
use canopy_group::{AggrSpec, AggrType, FileOp, GroupError, OpKind, OpenFlags, Runtime, Transport};
use canopy_nodeset::{NodeSet, RangeSet};
use std::collections::BTreeMap;

/// Whether hosts keep their own series or are summed up.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// node_exporter's series with an `instance` label per host.
    PerHost,
    /// `canopy_cluster_*` series: sum, min, max and average over the hosts.
    Cluster,
}

/// A series across hosts, with the hosts that hold its extremes.
pub type HostStat = Stat<NodeSet>;

/// What a collection holds.
#[derive(Clone, Debug)]
pub enum Data {
    /// Each host's samples, by host name.
    PerHost(BTreeMap<String, Vec<Sample>>),
    /// Each series over the hosts.
    Cluster(BTreeMap<Series, HostStat>),
}

/// One collection.
#[derive(Clone, Debug)]
pub struct Collection {
    /// When it was taken, in seconds since the epoch.
    pub at: f64,
    /// Hosts that answered.
    pub up: NodeSet,
    /// Hosts that did not.
    pub down: NodeSet,
    /// The samples.
    pub data: Data,
}

impl Collection {
    /// True when no host had any readable metric file.
    pub fn is_empty(&self) -> bool {
        match &self.data {
            Data::PerHost(hosts) => hosts.values().all(Vec::is_empty),
            Data::Cluster(series) => series.is_empty(),
        }
    }
}

/// Reads every collector's file on the hosts of `only` (all when `None`).
pub fn collect<T: Transport>(
    runtime: &Runtime<T>,
    mode: Mode,
    only: Option<&RangeSet>,
) -> Result<Collection, String> {
    let at =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let mut answered = NodeSet::new();
    let mut down = NodeSet::new();
    let mut per_host: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    let mut cluster: BTreeMap<Series, HostStat> = BTreeMap::new();
    for source in Source::ALL {
        let flags = OpenFlags::RDONLY | OpenFlags::BESTEFFORT;
        let opened = match only {
            Some(ranks) => runtime.gopen_on(source.path(), flags, 0, ranks),
            None => runtime.gopen(source.path(), flags),
        };
        let mut group = match opened {
            Ok(group) => group,
            Err(GroupError::Open(report)) => {
                down = down.union(&report.missing);
                continue;
            }
            Err(other) => return Err(other.to_string()),
        };
        down = down.union(&group.open_report().missing);
        answered = answered.union(&NodeSet::from_names(group.host_ranks().into_iter().map(|(name, _)| name)));
        let name = match mode {
            Mode::PerHost => aggregation::PER_HOST,
            Mode::Cluster => aggregation::SUMMARY,
        };
        let params = serde_json::to_string(&source).expect("a source serialises");
        let spec = AggrSpec::Registered { name: name.into(), params };
        group.gbindaggr(OpKind::Pread, AggrType::Data, spec).map_err(|e| e.to_string())?;
        let outcome = match group.run(FileOp::Pread { len: 1 << 20, offset: 0 }) {
            Ok(outcome) => outcome,
            Err(GroupError::Members(outcome)) => *outcome,
            Err(other) => return Err(other.to_string()),
        };
        down = down.union(outcome.missing());
        let Some(data) = outcome.data() else { continue };
        match mode {
            Mode::PerHost => {
                let members = data.decode::<Vec<(u64, Vec<Sample>)>>().map_err(|e| e.to_string())?;
                for (member, samples) in members.into_iter().flatten() {
                    let host = &group.gfiles()[member as usize].host;
                    per_host.entry(host.clone()).or_default().extend(samples);
                }
            }
            Mode::Cluster => {
                let series = data.decode::<BTreeMap<Series, Stat<RangeSet>>>().map_err(|e| e.to_string())?;
                for (series, stat) in series.into_iter().flatten() {
                    cluster.insert(series, stat.map(|members| group.hosts_of(members)));
                }
            }
        }
    }
    let up = answered.difference(&down);
    per_host.retain(|host, _| up.contains(host));
    for host in up.iter() {
        per_host.entry(host).or_default();
    }
    let data = match mode {
        Mode::PerHost => Data::PerHost(per_host),
        Mode::Cluster => Data::Cluster(cluster),
    };
    Ok(Collection { at, up, down, data })
}
