//! Clusters and mounts for the tests, torn down (unmounted, servers stopped) when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use super::common::canopy;

pub use canopy_testkit::fuse_available;

/// Runs a canopy command that must succeed; returns its stdout.
pub fn canopy_ok(args: &[&std::ffi::OsStr]) -> String {
    let output = canopy().args(args).stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "canopy {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Polls `condition`; the limit only guards against hanging forever.
pub fn wait_until(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < limit, "gave up waiting: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn process_exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// A local cluster of server processes.
pub struct TestCluster {
    scratch: TempDir,
    pub dir: PathBuf,
}

impl TestCluster {
    pub fn start(servers: usize, split_threshold: u64) -> TestCluster {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("cluster");
        let (n, split) = (servers.to_string(), split_threshold.to_string());
        canopy_ok(&[
            "dirsvc".as_ref(),
            "start".as_ref(),
            "--servers".as_ref(),
            n.as_ref(),
            "--split-threshold".as_ref(),
            split.as_ref(),
            "--data".as_ref(),
            dir.as_os_str(),
        ]);
        TestCluster { scratch, dir }
    }

    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    pub fn server_pid(&self, index: usize) -> u32 {
        let file = self.dir.join(format!("server-{index}/pid"));
        std::fs::read_to_string(&file).unwrap().trim().parse().unwrap()
    }

    /// SIGKILL, and wait until the process is gone.
    pub fn kill_nine(&self, index: usize) {
        let pid = self.server_pid(index);
        let killed = Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
        assert!(killed.success());
        wait_until("the killed server to exit", Duration::from_secs(10), || process_exited(pid));
    }

    /// Starts every server that is not running.
    pub fn restart(&self) {
        canopy_ok(&["dirsvc".as_ref(), "start".as_ref(), "--data".as_ref(), self.dir.as_os_str()]);
    }

    /// `canopy dirsvc stat --json` of `path` (from the service's root): what the service stored,
    /// read through the client library rather than a mount.
    pub fn stat(&self, path: &str) -> serde_json::Value {
        self.client_json("stat", &[path])
    }

    /// The server holding `name` in directory `dir` (a path from the service's root).
    pub fn server_of(&self, dir: &str, name: &str) -> usize {
        self.client_json("locate", &[dir, name])["server"].as_u64().unwrap() as usize
    }

    /// `canopy dirsvc COMMAND --json --cluster DIR OPERANDS…`, parsed.
    fn client_json(&self, command: &str, operands: &[&str]) -> serde_json::Value {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "dirsvc".as_ref(),
            command.as_ref(),
            "--json".as_ref(),
            "--cluster".as_ref(),
            self.dir.as_os_str(),
        ];
        args.extend(operands.iter().map(std::ffi::OsStr::new));
        serde_json::from_str(&canopy_ok(&args)).unwrap()
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        let _ = canopy()
            .args(["dirsvc", "stop", "--grace", "2", "--data"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .status();
    }
}

/// A mount of a cluster, served by a background `canopy dirsvc mount`.
pub struct TestMount {
    mountpoint: TempDir,
    pub pid: u32,
}

impl TestMount {
    /// Mounts with `extra` options; the server's messages go to MOUNTPOINT.log.
    pub fn new(cluster: &TestCluster, extra: &[&str]) -> TestMount {
        let mountpoint = tempfile::tempdir().unwrap();
        let log = mountpoint.path().with_extension("log");
        let output = canopy()
            .args(["dirsvc", "mount", "--daemon", "--cluster"])
            .arg(&cluster.dir)
            .arg("--log")
            .arg(&log)
            .args(extra)
            .arg(mountpoint.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "mount failed: {}", String::from_utf8_lossy(&output.stderr));
        let pid = String::from_utf8(output.stdout).unwrap().trim().parse().unwrap();
        TestMount { mountpoint, pid }
    }

    pub fn path(&self) -> &Path {
        self.mountpoint.path()
    }
}

impl Drop for TestMount {
    fn drop(&mut self) {
        if !process_exited(self.pid) {
            let _ = canopy().args(["dirsvc", "umount"]).arg(self.path()).stderr(Stdio::null()).status();
            let start = Instant::now();
            while !process_exited(self.pid) && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
