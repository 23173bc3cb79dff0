//! Servers, mounts and the monitor ignore SIGPIPE: a reader or client that hangs up costs one
//! write (EPIPE) or one connection, never the process (`canopy dirsvc serve` used to die with
//! status 141 when a client left before its reply). Checked on the running processes' signal
//! dispositions (/proc/PID/status), and by hanging up on the monitor mid-request. The printing
//! tools' default disposition is tested in output_errors.

mod common;

use common::canopy;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Whether process `pid` ignores SIGPIPE (bit 13 of SigIgn).
fn ignores_sigpipe(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).expect("SigIgn line");
    let mask = u64::from_str_radix(mask.trim(), 16).unwrap();
    mask & (1 << (libc::SIGPIPE - 1)) != 0
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < Duration::from_secs(30), "gave up waiting: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

use canopy_testkit::fuse_available;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_child(&self.0),
            rustix::process::Signal::TERM,
        );
        let _ = self.0.wait();
    }
}

fn http_get(address: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn the_monitor_ignores_sigpipe_and_survives_clients_that_hang_up() {
    let mut child = canopy()
        .args(["monitor", "--listen", "127.0.0.1:0", "--interval", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let monitor = Killed(child);
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let address = line
        .split_whitespace()
        .find(|word| word.starts_with("127.0.0.1:") || word.starts_with("http://127.0.0.1:"))
        .map(|word| word.trim_start_matches("http://").trim_end_matches('/').to_owned())
        .unwrap_or_else(|| panic!("the address in: {line}"));
    assert!(ignores_sigpipe(monitor.0.id()));
    // Clients that leave before their reply is written, many times.
    for _ in 0..50 {
        let mut stream = TcpStream::connect(&address).unwrap();
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
        drop(stream);
    }
    let reply = http_get(&address, "/metrics");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(rustix::process::test_kill_process(rustix::process::Pid::from_child(&monitor.0)).is_ok());
}

#[test]
fn metadata_servers_ignore_sigpipe() {
    let tmp = tempfile::tempdir().unwrap();
    let cluster = tmp.path().join("cluster");
    let out = canopy().args(["dirsvc", "start", "--servers", "2", "--data"]).arg(&cluster).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for index in 0..2 {
        let pid: u32 = std::fs::read_to_string(cluster.join(format!("server-{index}/pid")))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(ignores_sigpipe(pid), "server {index}");
    }
    let stop = canopy().args(["dirsvc", "stop", "--grace", "2", "--data"]).arg(&cluster).output().unwrap();
    assert!(stop.status.success());
}

#[test]
fn mounts_ignore_sigpipe() {
    if !fuse_available() {
        return;
    }
    let (source, mountpoint, scratch) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ready = scratch.path().join("ready");
    let server = canopy()
        .args(["latfs", "--delay", "0", "--ready-file"])
        .arg(&ready)
        .arg(source.path())
        .arg(mountpoint.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let latfs = Killed(server);
    wait_until("latfs to mount", || ready.exists());
    assert!(ignores_sigpipe(latfs.0.id()), "latfs");
    drop(latfs);

    let cluster = scratch.path().join("cluster");
    let out = canopy().args(["dirsvc", "start", "--servers", "1", "--data"]).arg(&cluster).output().unwrap();
    assert!(out.status.success());
    let dirsvc_mount = tempfile::tempdir().unwrap();
    let out = canopy()
        .args(["dirsvc", "mount", "--daemon", "--cluster"])
        .arg(&cluster)
        .arg(dirsvc_mount.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(ignores_sigpipe(pid), "dirsvc mount");
    let _ = canopy().args(["dirsvc", "umount"]).arg(dirsvc_mount.path()).status();
    wait_until("the mount to end", || !Path::new(&format!("/proc/{pid}")).exists());
    let _ = canopy().args(["dirsvc", "stop", "--grace", "2", "--data"]).arg(&cluster).output();
}
