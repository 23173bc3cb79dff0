//! The hosts a group tool runs on: the group layer's [`HostsArgs`] — simulated with threads (`--hosts N`,
//! each with its own root and name) or one host per MPI rank under `mpirun` — and the client runtime
//! built from them. Tools take a `&Runtime<T>` and never know how it was made.

pub use canopy_group::HostsArgs;
use canopy_group::{Client, Registry};
use canopy_transport::World;

/// Starts the hosts `args` describe, with the aggregations of `registry` on every one, and runs `tool` on
/// the client. `Ok(Some(result))` where the client ran (the only process, or MPI rank 0); `Ok(None)` on the
/// other ranks, which served their host and print nothing. `Err` is a usage error (bad flags, hosts that
/// cannot start), returned on rank 0 only: every rank meets the same one, and rank 0 speaks for the job.
pub fn with_runtime<R>(
    args: &HostsArgs,
    cluster: &World,
    registry: Registry,
    tool: impl FnOnce(&Client<'_>) -> R,
) -> Result<Option<R>, String> {
    match args.run(cluster, registry, tool) {
        Ok(result) => Ok(result),
        Err(error) if cluster.is_root() => Err(error.to_string()),
        Err(_) => Ok(None),
    }
}
