//! Under a tiny fd limit (`ulimit -n 20`, even 10) the tree tools still walk every tree
//! completely: 16 chains of 17 levels, which GNU find walks in full, as the oracle.

mod common;

use common::{canopy, gnu, sorted_lines};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

fn chains(root: &Path) {
    for c in 0..16 {
        let mut dir = root.join(format!("chain{c:02}"));
        for level in 0..17 {
            dir = dir.join(format!("level{level:02}"));
        }
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bottom"), b"at the bottom\n").unwrap();
    }
}

/// Runs `cmd` with RLIMIT_NOFILE `fds` (soft and hard, as `ulimit -n` sets them).
fn with_fd_limit(mut cmd: Command, fds: u64) -> Output {
    // SAFETY: setrlimit(2) in the child between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let limit = rustix::process::Rlimit { current: Some(fds), maximum: Some(fds) };
            rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)?;
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn sixteen_chains_of_seventeen_levels_are_walked_completely_with_20_and_10_fds() {
    let tmp = tempfile::tempdir().unwrap();
    chains(tmp.path());
    let find = with_fd_limit(gnu("find").arg(tmp.path()).to_owned_command(), 20);
    assert!(find.status.success());
    let expected = sorted_lines(&find.stdout);
    assert_eq!(expected.len(), 1 + 16 * 19, "GNU find walks it all");
    let du = gnu("du").arg("-s").arg(tmp.path()).output().unwrap().stdout;

    for fds in [20, 10] {
        let out = with_fd_limit(canopy().arg("find").arg(tmp.path()).to_owned_command(), fds);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "find, {fds} fds: {stderr}");
        assert!(stderr.is_empty(), "find, {fds} fds: {stderr}");
        assert_eq!(sorted_lines(&out.stdout), expected, "find, {fds} fds");

        let out = with_fd_limit(canopy().args(["find", "-j", "16"]).arg(tmp.path()).to_owned_command(), fds);
        assert_eq!(
            out.status.code(),
            Some(0),
            "find -j 16, {fds} fds: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(sorted_lines(&out.stdout), expected, "find -j 16, {fds} fds");

        let out = with_fd_limit(canopy().args(["du", "-s"]).arg(tmp.path()).to_owned_command(), fds);
        assert_eq!(out.status.code(), Some(0), "du, {fds} fds: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.stdout, du, "du -s, {fds} fds");

        let out = with_fd_limit(canopy().args(["walk", "--json"]).arg(tmp.path()).to_owned_command(), fds);
        assert_eq!(out.status.code(), Some(0), "walk, {fds} fds: {}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["totals"]["entries"], expected.len() as u64, "walk, {fds} fds");
        assert_eq!(report["errors"], 0);
    }
}

/// `Command` builders return `&mut Command`; these tests want the value.
trait ToOwnedCommand {
    fn to_owned_command(&mut self) -> Command;
}

impl ToOwnedCommand for Command {
    fn to_owned_command(&mut self) -> Command {
        std::mem::replace(self, Command::new("false"))
    }
}
