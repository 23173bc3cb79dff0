//! `mpirun -n N canopy …` for the end-to-end tests of the `mpi` build, each run under a time limit.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(120);

/// `mpirun -n N canopy ARGS`, killed (and the test failed) if it runs past the limit.
pub fn mpirun(n: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "-n", &n.to_string()])
        .arg(env!("CARGO_BIN_EXE_canopy"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("LC_ALL", "C")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("mpirun (Open MPI) is installed by scripts/setup");
    let started = Instant::now();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < LIMIT {
            std::thread::sleep(Duration::from_millis(200));
            if !Path::new(&format!("/proc/{pid}")).exists() {
                return false;
            }
        }
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        true
    });
    let out = child.wait_with_output().unwrap();
    let timed_out = started.elapsed() >= LIMIT || watchdog.join().unwrap_or(false);
    assert!(!timed_out, "mpirun -n {n} {args:?} did not terminate within {LIMIT:?}");
    out
}
