//! Running the `canopy` binary under `mpirun` in tests (the launch itself is canopy-testkit's),
//! and finding one rank's process to stop or kill.

use std::process::{Command, Output};
use std::time::Duration;

#[allow(unused_imports)] // each test binary uses some of them
pub use canopy_testkit::mpirun::{output_within, run_within};

/// `mpirun --oversubscribe -n N [OPTIONS] canopy ARGS`, allowed to run as root, output captured.
pub fn mpirun_command(n: usize, options: &[&str], args: &[&str]) -> Command {
    let mut cmd = canopy_testkit::mpirun::mpirun(n, options, env!("CARGO_BIN_EXE_canopy"));
    cmd.args(args).env("LC_ALL", "C");
    cmd
}

/// The process of MPI rank `rank` among the children of `launcher` (an mpirun on this machine),
/// once it exists.
pub fn rank_process(launcher: u32, rank: usize) -> Option<u32> {
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    let children = std::fs::read_to_string(format!("/proc/{launcher}/task/{launcher}/children")).ok()?;
    children.split_whitespace().filter_map(|pid| pid.parse::<u32>().ok()).find(|pid| {
        std::fs::read(format!("/proc/{pid}/environ"))
            .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == wanted.as_bytes()))
    })
}

/// How long one `mpirun` of a test may take before it counts as a hang.
pub const LIMIT: Duration = Duration::from_secs(120);

/// `mpirun -n N canopy ARGS` with extra environment, failed as a hang past [`LIMIT`].
#[track_caller]
pub fn mpirun(n: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = mpirun_command(n, &[], args);
    cmd.envs(env.iter().copied());
    run_within(cmd, LIMIT)
}
