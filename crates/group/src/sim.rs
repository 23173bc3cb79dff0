//! Simulated hosts on one machine: one thread per rank, each with its own name and host root, talking over
//! [`ThreadTransport`]s. The same code paths as a real run, testable without MPI.

use crate::aggr::Registry;
use crate::group::GroupError;
use crate::host::HostConfig;
use crate::protocol::{self, Message};
use crate::runtime::{Runtime, serve};
use crate::topology::{Fanout, ReductionTree};
use crate::transport::{MeshControl, ThreadTransport, Transport, thread_mesh};
use crossbeam_channel::Receiver;
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How to simulate a cluster.
#[derive(Clone)]
pub struct Simulation {
    /// Number of hosts (ranks), at least 1; rank 0 is also the client.
    pub hosts: usize,
    /// Each host's root directory; `{rank}` is replaced by the rank (`{rank:03}` zero-pads it), `{host}` by
    /// the host's name.
    pub host_root: String,
    /// Each host's name, with `{rank}`, `{rank:03}` and `{hostname}` for the real hostname.
    pub host_name: String,
    /// The hosts' names rank by rank instead of `host_name` (ClusterShell's order of a NodeSet, say); as
    /// many as `hosts`.
    pub host_names: Option<Vec<String>>,
    /// Consecutive ranks per simulated physical node, for the tree's per-node level.
    pub ranks_per_node: usize,
    /// Fan-out of the aggregation tree.
    pub fanout: Fanout,
    /// How long operations wait for the hosts.
    pub timeout: Duration,
    /// Rust aggregations every simulated host can run.
    pub registry: Registry,
}

impl Default for Simulation {
    fn default() -> Self {
        Simulation {
            hosts: 1,
            host_root: "/".into(),
            host_name: "host{rank}".into(),
            host_names: None,
            ranks_per_node: 1,
            fanout: Fanout::default(),
            timeout: Runtime::<ThreadTransport>::DEFAULT_TIMEOUT,
            registry: Registry::new(),
        }
    }
}

/// What a host-name or host-root template's placeholders stand for on one host.
#[derive(Copy, Clone, Debug)]
pub struct Placeholders<'a> {
    /// `{rank}`, `{rank:0N}`: the host's rank.
    pub rank: usize,
    /// `{hostname}`: the machine's hostname.
    pub hostname: &'a str,
    /// `{host}`: the host's own name (known in a root template, not in the name's own).
    pub host: Option<&'a str>,
}

/// Expands `{rank}`, `{rank:0N}`, `{hostname}` and `{host}` in a template.
pub fn expand_template(template: &str, values: &Placeholders<'_>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out += &rest[..start];
        let end = rest[start..].find('}').ok_or_else(|| format!("unclosed '{{' in {template:?}"))? + start;
        let field = &rest[start + 1..end];
        match (field, values.host) {
            ("rank", _) => out += &values.rank.to_string(),
            ("hostname", _) => out += values.hostname,
            ("host", Some(host)) => out += host,
            ("host", None) => return Err(format!("{{host}} cannot name the host itself in {template:?}")),
            _ => match field.strip_prefix("rank:0").map(str::parse::<usize>) {
                Some(Ok(width)) => out += &format!("{:0width$}", values.rank),
                _ => return Err(format!("unknown placeholder {{{field}}} in {template:?}")),
            },
        }
        rest = &rest[end + 1..];
    }
    out += rest;
    Ok(out)
}

/// A running simulation: the client runtime plus one server thread per other host.
pub struct SimulatedCluster<T: Transport = ThreadTransport> {
    runtime: Option<Runtime<T>>,
    /// Reaches every server directly, to stop them even when the tree is broken.
    control: MeshControl,
    servers: Vec<(JoinHandle<()>, Receiver<()>)>,
}

impl Simulation {
    /// Starts the servers and returns the cluster, whose runtime is the client.
    pub fn start(self) -> Result<SimulatedCluster, GroupError> {
        self.start_with(|transport| transport)
    }

    /// [`Simulation::start`] with the client's transport wrapped by `wrap` (into a [`DynTransport`],
    /// say, to run the same client code as on MPI hosts).
    ///
    /// [`DynTransport`]: crate::transport::DynTransport
    pub fn start_with<T: Transport>(
        self,
        wrap: impl FnOnce(ThreadTransport) -> T,
    ) -> Result<SimulatedCluster<T>, GroupError> {
        if self.hosts == 0 || self.ranks_per_node == 0 {
            return Err(GroupError::Usage(
                "a simulation needs at least one host and one rank per node".into(),
            ));
        }
        if self.host_names.as_ref().is_some_and(|names| names.len() != self.hosts) {
            return Err(GroupError::Usage("a simulation needs one name per host".into()));
        }
        let hostname = HostConfig::local().name;
        let mut configs = Vec::with_capacity(self.hosts);
        for rank in 0..self.hosts {
            let mut values = Placeholders { rank, hostname: &hostname, host: None };
            let name = match &self.host_names {
                Some(names) => names[rank].clone(),
                None => expand_template(&self.host_name, &values).map_err(GroupError::Usage)?,
            };
            values.host = Some(&name);
            let root = expand_template(&self.host_root, &values).map_err(GroupError::Usage)?;
            configs.push(HostConfig { name, root: PathBuf::from(root) });
        }
        let labels: Vec<String> =
            (0..self.hosts).map(|rank| format!("node{}", rank / self.ranks_per_node)).collect();
        let topology = ReductionTree::new(&labels, self.fanout);
        let mut transports = thread_mesh(self.hosts);
        let control = transports[0].control();
        let mut servers = Vec::new();
        for (transport, config) in transports.drain(1..).zip(configs.drain(1..)) {
            let (topology, registry) = (topology.clone(), self.registry.clone());
            // The thread drops the sender when it ends, which is what the cluster waits for.
            let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(0);
            let handle = std::thread::Builder::new()
                .name(format!("canopy-host-{}", transport.rank()))
                .spawn(move || {
                    let _done = done_tx;
                    // A server only fails once every channel is gone, when the simulation is over.
                    let _ = serve(transport, topology, config, registry);
                })
                .map_err(|e| GroupError::Usage(format!("cannot start a host thread: {e}")))?;
            servers.push((handle, done_rx));
        }
        let root = transports.pop().expect("rank 0");
        let runtime = Runtime::new(wrap(root), topology, configs.pop().expect("rank 0"), self.registry)?;
        runtime.set_timeout(self.timeout);
        Ok(SimulatedCluster { runtime: Some(runtime), control, servers })
    }
}

impl<T: Transport> SimulatedCluster<T> {
    /// The client.
    pub fn runtime(&self) -> &Runtime<T> {
        self.runtime.as_ref().expect("the runtime lives until drop")
    }
}

impl<T: Transport> Drop for SimulatedCluster<T> {
    /// Stops every server; threads still stuck in a file operation after a second are left behind (they
    /// end with the process).
    fn drop(&mut self) {
        drop(self.runtime.take());
        self.control.send_to_all(&protocol::encode(&Message::Shutdown));
        let deadline = Instant::now() + Duration::from_secs(1);
        for (handle, done) in self.servers.drain(..) {
            if let Err(crossbeam_channel::RecvTimeoutError::Disconnected) = done.recv_deadline(deadline) {
                let _ = handle.join();
            }
        }
    }
}
