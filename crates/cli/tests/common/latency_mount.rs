//! A foreground `canopy latfs` server over a directory: every metadata request waits `delay`, at
//! most `threads` at once. Unmounted (SIGTERM to the server) when dropped.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

pub struct LatencyMount {
    server: Child,
}

impl Drop for LatencyMount {
    fn drop(&mut self) {
        let pid = rustix::process::Pid::from_child(&self.server);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let _ = self.server.wait();
    }
}

/// Mounts `source` at `mountpoint` and returns once latfs has written `ready`.
pub fn mount(source: &Path, mountpoint: &Path, ready: &Path, delay: &str, threads: usize) -> LatencyMount {
    let server = super::canopy()
        .args(["latfs", "--delay", delay, "--threads", &threads.to_string(), "--ready-file"])
        .arg(ready)
        .arg(source)
        .arg(mountpoint)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mount = LatencyMount { server };
    let started = Instant::now();
    while !ready.exists() {
        assert!(started.elapsed() < Duration::from_secs(30), "latfs did not mount {}", mountpoint.display());
        std::thread::sleep(Duration::from_millis(20));
    }
    mount
}
