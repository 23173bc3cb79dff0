//! The hosts a group tool runs on, from its command line: simulated with threads (`--hosts N`), or the
//! ranks of an MPI job (`mpirun -n N canopy …`, one host per rank). Every group tool flattens
//! [`HostsArgs`] into its arguments and runs its client code through [`HostsArgs::run`]:
//!
//! ```no_run
//! # use canopy_group::{HostsArgs, OpenFlags, Registry};
//! # fn tool(hosts: &HostsArgs, cluster: &canopy_transport::World) -> Result<(), canopy_group::GroupError> {
//! let printed = hosts.run(cluster, Registry::new(), |runtime| {
//!     let mut group = runtime.gopen("/etc/motd", OpenFlags::RDONLY)?;
//!     group.read(4096).map(|outcome| outcome.status_value())
//! })?;
//! // `Some` on the process that ran the client (rank 0: the only one that prints), `None` on the
//! // other MPI ranks, which served their host until the client was done.
//! # Ok(()) }
//! ```

use crate::aggr::Registry;
use crate::group::GroupError;
use crate::host::HostConfig;
use crate::protocol::{self, Message};
use crate::runtime::{Runtime, serve};
use crate::sim::{Placeholders, Simulation, expand_template};
use crate::topology::{Fanout, ReductionTree};
use crate::transport::DynTransport;
use canopy_nodeset::NodeSet;
use canopy_transport::World;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The client side of a running group layer, whatever the hosts are.
pub type Client<'t> = Runtime<DynTransport<'t>>;

/// Where a group tool's hosts are and how its aggregation tree is shaped.
#[derive(Args, Debug, Clone, PartialEq)]
#[command(next_help_heading = "Hosts (simulated with threads, or one per MPI rank)")]
pub struct HostsArgs {
    /// Simulate hosts with threads: N of them, or the hosts of a NodeSet such as node[01-16] (under
    /// mpirun each rank is a host instead)
    #[arg(long, value_name = "N|NODESET")]
    pub hosts: Option<SimulatedHosts>,

    /// Each host's root directory; {rank} is the host's rank ({rank:03} zero-pads), {host} its name
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub host_root: String,

    /// Each host's name, with {rank}, {rank:03} and {hostname} [default: the hostname when each host
    /// is its own machine; host{rank} for simulated hosts, {hostname}-{rank} for ranks sharing one]
    #[arg(long, value_name = "NAME")]
    pub host_name: Option<String>,

    /// Children per node of the aggregation tree, or "flat"
    #[arg(long, value_name = "K", default_value = "64")]
    pub fanout: Fanout,

    /// Consecutive hosts (ranks) per physical node, which aggregate on their node first [default: 1
    /// for simulated hosts; the machines the MPI ranks really share]
    #[arg(long, value_name = "N")]
    pub ranks_per_node: Option<usize>,

    /// Seconds to wait for the hosts; silent ones are reported missing
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
}

impl Default for HostsArgs {
    /// One host: this machine, under `/`.
    fn default() -> Self {
        HostsArgs {
            hosts: None,
            host_root: "/".into(),
            host_name: None,
            fanout: Fanout::default(),
            ranks_per_node: None,
            timeout: Runtime::<DynTransport<'_>>::DEFAULT_TIMEOUT.as_secs_f64(),
        }
    }
}

/// The hosts `--hosts` simulates: a number of them, or their names.
#[derive(Clone, Debug, PartialEq)]
pub enum SimulatedHosts {
    /// This many, named by `--host-name`.
    Count(usize),
    /// These, one rank each in ClusterShell's order of the set.
    Names(NodeSet),
}

impl SimulatedHosts {
    fn len(&self) -> usize {
        match self {
            SimulatedHosts::Count(n) => *n,
            SimulatedHosts::Names(names) => usize::try_from(names.len()).unwrap_or(usize::MAX),
        }
    }
}

impl std::str::FromStr for SimulatedHosts {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text.bytes().all(|b| b.is_ascii_digit()) {
            return text.parse().map(SimulatedHosts::Count).map_err(|e| format!("{text}: {e}"));
        }
        let names = NodeSet::parse(text).map_err(|e| e.to_string())?;
        if names.is_empty() {
            return Err("no host in the set".into());
        }
        Ok(SimulatedHosts::Names(names))
    }
}

impl HostsArgs {
    /// `--timeout` as a duration.
    pub fn timeout(&self) -> Result<Duration, GroupError> {
        if self.timeout > 0.0 && self.timeout.is_finite() {
            Ok(Duration::from_secs_f64(self.timeout))
        } else {
            Err(GroupError::Usage(format!("invalid --timeout {}", self.timeout)))
        }
    }

    /// Starts the hosts, runs `client` with the group runtime on the process that is the tree's root,
    /// and shuts the hosts down. Every process of the job calls it with the same arguments.
    ///
    /// Returns `Ok(Some(result))` where the client ran (rank 0, or the only process when the hosts are
    /// simulated) and `Ok(None)` on the other MPI ranks, which served their host's files until the
    /// client was done: only the process that gets `Some` prints. Usage errors (bad templates,
    /// `--hosts` under mpirun) come back on every process, before any host starts; print them on rank 0.
    ///
    /// Under MPI, rank 0 then waits up to `--timeout` for every rank to finish; when one hangs or died
    /// (it was reported missing), it flushes stdout and aborts the job with status 1 rather than wait
    /// for it in MPI's collective shutdown. (A rank that is killed makes Open MPI abort the whole job
    /// at once, before rank 0 can answer, unless mpirun runs with `--enable-recovery`.)
    pub fn run<R>(
        &self,
        cluster: &World,
        registry: Registry,
        client: impl FnOnce(&Client<'_>) -> R,
    ) -> Result<Option<R>, GroupError> {
        let timeout = self.timeout()?;
        if cluster.size() <= 1 {
            return self.simulate(timeout, registry, client).map(Some);
        }
        if self.hosts.is_some() {
            return Err(GroupError::Usage(
                "under mpirun every rank is a host: --hosts is for simulating hosts with threads".into(),
            ));
        }
        let (topology, host) = self.mpi_layout(cluster)?;
        let mut messenger = cluster.messenger();
        if !cluster.is_root() {
            // Transport errors only end a rank whose links are gone; the root reports it missing.
            let _ = serve(&mut messenger, topology, host, registry);
            // Rank 0 normally ends a job with a hung rank first; this bound matters when the job
            // survives rank deaths (mpirun --enable-recovery), where aborting ends only the caller.
            if !messenger.finish(Some(Instant::now() + 2 * timeout)) {
                cluster.abort(1);
            }
            return Ok(None);
        }
        // Even if the client cannot start, the servers must be shut down below.
        let result = Runtime::new(Box::new(&mut messenger) as DynTransport<'_>, topology, host, registry)
            .map(|runtime| {
                runtime.set_timeout(timeout);
                client(&runtime)
            });
        // The tree's own shutdown cannot pass a hung rank: tell every rank directly.
        let shutdown = protocol::encode(&Message::Shutdown);
        for rank in 1..cluster.size() {
            let _ = messenger.send(rank, shutdown.clone());
        }
        if !messenger.finish(Some(Instant::now() + timeout)) {
            let _ = std::io::stdout().flush();
            // One write: MPI_Abort's own report goes to the same stderr at the same moment, and a
            // message formatted piece by piece would be cut through by it.
            let message = format!(
                "canopy: some MPI rank did not finish within {}s (hung or dead): ending the job\n",
                self.timeout
            );
            let _ = std::io::stderr().write_all(message.as_bytes());
            cluster.abort(1);
        }
        result.map(Some)
    }

    fn simulate<R>(
        &self,
        timeout: Duration,
        registry: Registry,
        client: impl FnOnce(&Client<'_>) -> R,
    ) -> Result<R, GroupError> {
        let hosts = self.hosts.as_ref().map_or(1, SimulatedHosts::len);
        let host_names = match &self.hosts {
            Some(SimulatedHosts::Names(_)) if self.host_name.is_some() => {
                return Err(GroupError::Usage(
                    "--hosts names the hosts already: --host-name is for a number of hosts".into(),
                ));
            }
            Some(SimulatedHosts::Names(names)) => Some(names.iter().collect()),
            _ => None,
        };
        let host_name = self
            .host_name
            .clone()
            .unwrap_or_else(|| if hosts == 1 { "{hostname}".into() } else { "host{rank}".into() });
        let simulation = Simulation {
            hosts,
            host_root: self.host_root.clone(),
            host_name,
            host_names,
            ranks_per_node: self.ranks_per_node.unwrap_or(1),
            fanout: self.fanout,
            timeout,
            registry,
        };
        let cluster = simulation.start_with(|transport| Box::new(transport) as DynTransport<'_>)?;
        Ok(client(cluster.runtime()))
    }

    /// This rank's tree (the same on every rank) and host.
    fn mpi_layout(&self, cluster: &World) -> Result<(ReductionTree, HostConfig), GroupError> {
        let size = cluster.size() as usize;
        let labels: Vec<String> = match self.ranks_per_node {
            Some(0) => return Err(GroupError::Usage("--ranks-per-node must be at least 1".into())),
            Some(k) => (0..size).map(|rank| (rank / k).to_string()).collect(),
            None => cluster.nodes().iter().map(u32::to_string).collect(),
        };
        let shared = {
            let mut distinct = labels.clone();
            distinct.sort_unstable();
            distinct.dedup();
            distinct.len() < size
        };
        let template = match &self.host_name {
            Some(template) => template.as_str(),
            None if shared => "{hostname}-{rank}",
            None => "{hostname}",
        };
        let rank = cluster.rank() as usize;
        let hostname = HostConfig::local().name;
        let mut values = Placeholders { rank, hostname: &hostname, host: None };
        let name = expand_template(template, &values).map_err(GroupError::Usage)?;
        values.host = Some(&name);
        let root = expand_template(&self.host_root, &values).map_err(GroupError::Usage)?;
        Ok((ReductionTree::new(&labels, self.fanout), HostConfig { name, root: PathBuf::from(root) }))
    }
}
