//! Interrupting a copy at a point chosen by its progress, not by a clock: it is killed with SIGKILL
//! once its destination holds so many entries, and whether it was really interrupted is known for
//! sure (it had not exited on its own).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Entries below `dir` (what a copy in progress has made so far).
pub fn entries(dir: &Path) -> usize {
    let mut count = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(list) = std::fs::read_dir(&d) else { continue };
        for e in list.flatten() {
            count += 1;
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    count
}

/// Runs `cmd` and kills it with SIGKILL once `watch` holds `threshold` entries; whether it was
/// killed before it finished on its own.
pub fn kill_at(mut cmd: Command, watch: &Path, threshold: usize) -> bool {
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "the copy failed on its own: {status}");
            return false;
        }
        if entries(watch) >= threshold {
            child.kill().unwrap(); // SIGKILL
            // Killed, or it exited just before: the status tells.
            return !child.wait().unwrap().success();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
