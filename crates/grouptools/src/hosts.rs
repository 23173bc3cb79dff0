//! The hosts a group tool runs on: simulated with threads on this machine (`--hosts N`, each with its own
//! root and name), and the client runtime built from them. Tools take a `&Runtime<T>` and never know how it
//! was made.

use canopy_group::{Fanout, Registry, Runtime, Simulation, ThreadTransport};
use clap::Args;
use std::time::Duration;

/// Where the hosts are and how the aggregation tree over them is shaped.
#[derive(Args, Debug, Clone)]
pub struct HostArgs {
    /// Simulate this many hosts with threads
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Hosts")]
    pub hosts: usize,

    /// Each host's root directory; {rank} is the host's rank ({rank:03} zero-pads)
    #[arg(long, value_name = "DIR", default_value = "/", help_heading = "Hosts")]
    pub host_root: String,

    /// Each host's name, with {rank}, {rank:03} and {hostname} [default: the hostname for one host,
    /// host{rank} for several]
    #[arg(long, value_name = "NAME", help_heading = "Hosts")]
    pub host_name: Option<String>,

    /// Children per node of the aggregation tree, or "flat"
    #[arg(long, value_name = "K", default_value = "64", help_heading = "Hosts")]
    pub fanout: Fanout,

    /// Consecutive simulated hosts per physical node (they aggregate on their node first)
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Hosts")]
    pub ranks_per_node: usize,

    /// Seconds to wait for the hosts in each operation; silent ones are reported missing
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, help_heading = "Hosts")]
    pub timeout: f64,
}

impl HostArgs {
    fn simulation(&self, registry: Registry) -> Result<Simulation, String> {
        if !(self.timeout > 0.0 && self.timeout.is_finite()) {
            return Err(format!("invalid --timeout {}", self.timeout));
        }
        let host_name = self
            .host_name
            .clone()
            .unwrap_or_else(|| if self.hosts == 1 { "{hostname}".into() } else { "host{rank}".into() });
        Ok(Simulation {
            hosts: self.hosts,
            host_root: self.host_root.clone(),
            host_name,
            ranks_per_node: self.ranks_per_node,
            fanout: self.fanout,
            timeout: Duration::from_secs_f64(self.timeout),
            registry,
        })
    }
}

/// Starts the hosts `args` describe, with the aggregations of `registry` on every one, and runs `tool` on
/// the client. `Err` is a usage error (bad flags, hosts that cannot start).
pub fn with_runtime<R>(
    args: &HostArgs,
    registry: Registry,
    tool: impl FnOnce(&Runtime<ThreadTransport>) -> R,
) -> Result<R, String> {
    let cluster = args.simulation(registry)?.start().map_err(|e| e.to_string())?;
    Ok(tool(cluster.runtime()))
}
