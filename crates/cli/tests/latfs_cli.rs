//! `canopy latfs` as scripts use it: foreground with a ready file and SIGTERM, `--daemon` with an
//! outside unmount, and usage errors. Skipped only where /dev/fuse does not exist.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn canopy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_canopy"))
}

use canopy_testkit::fuse_available;

fn is_mounted(path: &Path) -> bool {
    let path = path.canonicalize().unwrap();
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap();
    mounts.lines().any(|line| line.split(' ').nth(4) == Some(path.to_str().unwrap()))
}

/// Polls `condition`; a generous limit only guards against hanging forever.
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < Duration::from_secs(30), "gave up waiting: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn process_exited(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => true,
    }
}

#[test]
fn foreground_server_reports_ready_and_unmounts_cleanly_on_sigterm() {
    if !fuse_available() {
        return;
    }
    let (source, mountpoint, scratch) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fs::write(source.path().join("file"), "through the mount").unwrap();
    let (ready, stats) = (scratch.path().join("ready"), scratch.path().join("stats.json"));
    let server = canopy()
        .args(["latfs", "--delay", "100us", "--ready-file"])
        .arg(&ready)
        .arg("--stats-file")
        .arg(&stats)
        .arg(source.path())
        .arg(mountpoint.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the ready file", || ready.exists());
    assert_eq!(fs::read_to_string(&ready).unwrap().trim(), server.id().to_string());
    assert!(is_mounted(mountpoint.path()));
    assert_eq!(fs::read_to_string(mountpoint.path().join("file")).unwrap(), "through the mount");

    let killed = Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let output = server.wait_with_output().unwrap();
    let messages = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "exit status {:?}: {messages}", output.status);
    assert!(!is_mounted(mountpoint.path()), "unmounted at exit");
    assert!(!ready.exists(), "the ready file is removed at exit");
    assert!(messages.contains("unmounted") && messages.contains("lookup"), "{messages}");
    let counters = fs::read_to_string(&stats).unwrap();
    assert!(counters.contains("\"lookup\":") && counters.contains("\"max_in_flight\":"), "{counters}");
}

#[test]
fn daemon_returns_once_mounted_and_exits_after_an_outside_unmount() {
    if !fuse_available() {
        return;
    }
    let (source, mountpoint) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fs::create_dir(source.path().join("dir")).unwrap();
    let output = canopy()
        .args(["latfs", "--daemon", "--delay", "100us"])
        .arg(source.path())
        .arg(mountpoint.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let pid = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(pid.parse::<u32>().is_ok(), "the pid is printed: {pid:?}");
    assert!(is_mounted(mountpoint.path()), "mounted when --daemon returns");
    assert!(mountpoint.path().join("dir").is_dir());

    let unmounted = Command::new("fusermount3").arg("-u").arg(mountpoint.path()).status().unwrap();
    assert!(unmounted.success());
    wait_until("the background server to exit", || process_exited(&pid));
    assert!(!is_mounted(mountpoint.path()));
}

fn latfs(args: &[&std::ffi::OsStr]) -> Output {
    canopy().arg("latfs").args(args).output().unwrap()
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let source = tempfile::tempdir().unwrap();
    let inside = source.path().join("mnt");
    fs::create_dir(&inside).unwrap();
    let missing = source.path().join("missing");
    let cases: [(&[&std::ffi::OsStr], &str); 3] = [
        (&[source.path().as_os_str(), inside.as_os_str()], "inside the source"),
        (&[missing.as_os_str(), inside.as_os_str()], "missing"),
        (
            &[source.path().as_os_str(), inside.as_os_str(), "--delay".as_ref(), "500".as_ref()],
            "needs a unit",
        ),
    ];
    for (args, message) in cases {
        let output = latfs(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
