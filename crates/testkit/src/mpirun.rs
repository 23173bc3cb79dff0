//! Running a program under `mpirun` (Open MPI) in tests: every run has a time limit, so a hang
//! fails the test instead of blocking it, and each test thread's mpiruns have session files of
//! their own.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `mpirun --oversubscribe -n N [OPTIONS] PROGRAM`, allowed to run as root, output captured; the
/// caller adds the program's arguments.
pub fn mpirun(n: usize, options: &[&str], program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "-n", &n.to_string()])
        .args(options)
        .arg(program)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_orte_tmpdir_base", session_base())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Where this test thread's mpiruns keep their session files. Open MPI's default,
/// TMPDIR/ompi.HOST.UID, is shared by every mpirun of the user: one removing it at exit while
/// another creates its job directory inside makes the second fail ("mkdir … File exists",
/// orte_init failed) — seen with tests running in parallel. A test thread's mpiruns run one at a
/// time, so a base of its own has no such race.
fn session_base() -> PathBuf {
    let thread =
        format!("{:?}", std::thread::current().id()).chars().filter(char::is_ascii_digit).collect::<String>();
    let base = std::env::temp_dir().join(format!("canopy-ompi-{}-{thread}", std::process::id()));
    std::fs::create_dir_all(&base).expect("a session directory for mpirun");
    // Sticky and writable by all, as /tmp is: some tests run the whole job as nobody.
    std::fs::set_permissions(&base, std::os::unix::fs::PermissionsExt::from_mode(0o1777))
        .expect("session directory permissions");
    base
}

/// Waits for `child`; kills it and fails the test if it runs past `limit`.
#[track_caller]
pub fn output_within(child: Child, limit: Duration, context: &str) -> Output {
    let started = Instant::now();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(200));
            if !Path::new(&format!("/proc/{pid}")).exists() {
                return false;
            }
        }
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        true
    });
    let out = child.wait_with_output().unwrap();
    // Empty once mpirun is done; the next mpirun of this thread makes it again.
    let _ = std::fs::remove_dir(session_base());
    let timed_out = started.elapsed() >= limit || watchdog.join().unwrap_or(false);
    assert!(!timed_out, "{context}: did not terminate within {limit:?}");
    out
}

/// Runs `cmd` (mpirun or any other command) to the end within `limit`.
#[track_caller]
pub fn run_within(mut cmd: Command, limit: Duration) -> Output {
    let context = format!("{cmd:?}");
    let child = cmd.spawn().unwrap_or_else(|e| panic!("{context}: {e} (scripts/setup installs Open MPI)"));
    output_within(child, limit, &context)
}
