//! A rank that stops answering under `mpirun` ends the job with a message naming it, instead of
//! hanging it; a rank that is merely busy for longer than `--timeout` does not. The jobs are held
//! open by a `-exec cat FIFO` that blocks until the test writes to the FIFO, so the outcome never
//! depends on how fast the walk is.
#![cfg(feature = "mpi")]

mod common;

use common::mkfifo;
use common::mpirun::{mpirun_command, output_within, rank_process};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// A hang guard: far above the 3 s timeout, far below a hang.
const GUARD: Duration = Duration::from_secs(60);

/// A tree with a file named `gate` among a few hundred others.
fn gated_tree(root: &Path) {
    for d in 0..30 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..10 {
            std::fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
    }
    std::fs::write(root.join("d17/gate"), b"").unwrap();
}

/// `find ROOT -name gate -exec cat FIFO ;` under mpirun with `--timeout 3`: it cannot end before
/// something writes to the FIFO.
fn held_find(root: &Path, fifo: &Path) -> std::process::Command {
    let (root, fifo) = (root.to_str().unwrap(), fifo.to_str().unwrap());
    mpirun_command(4, &[], &["find", "--timeout", "3", root, "-name", "gate", "-exec", "cat", fifo, ";"])
}

/// Whether process `pid` runs the rank's heartbeat thread (MPI is initialised, the ring is up).
fn has_heartbeat(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().any(|task| {
        std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| name.trim_end() == "heartbeat")
    })
}

/// Lets a `cat` blocked on the FIFO finish, if one is still there (a killed rank leaves its child).
fn release(fifo: &Path) {
    if let Ok(mut writer) =
        OpenOptions::new().write(true).custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32).open(fifo)
    {
        let _ = writer.write_all(b"released\n");
    }
}

fn signal(pid: u32, signal: &str) {
    let _ = std::process::Command::new("kill").args([signal, &pid.to_string()]).status();
}

#[test]
fn a_stopped_rank_ends_the_job_with_a_message_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, fifo) = (tmp.path().join("tree"), tmp.path().join("gate.fifo"));
    gated_tree(&root);
    mkfifo(&fifo);
    let child = held_find(&root, &fifo).spawn().expect("mpirun (Open MPI) is installed by scripts/setup");
    let launcher = child.id();
    let started = Instant::now();
    let rank2 = loop {
        if let Some(pid) = rank_process(launcher, 2).filter(|&pid| has_heartbeat(pid)) {
            break pid;
        }
        assert!(started.elapsed() < GUARD, "rank 2 never started its heartbeat thread");
        std::thread::sleep(Duration::from_millis(50));
    };
    signal(rank2, "-STOP");
    let out = output_within(child, GUARD, "mpirun -n 4 canopy find --timeout 3 with rank 2 stopped");
    signal(rank2, "-CONT");
    signal(rank2, "-KILL");
    release(&fifo);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    let message = format!(
        "canopy: rank 2 on {host} did not answer within 3 s (stopped, partitioned or dead); aborting"
    );
    assert!(stderr.lines().any(|line| line == message), "no '{message}' in:\n{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

#[test]
fn a_rank_busy_past_the_timeout_is_not_taken_for_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let (root, fifo) = (tmp.path().join("tree"), tmp.path().join("gate.fifo"));
    gated_tree(&root);
    mkfifo(&fifo);
    let child = held_find(&root, &fifo).spawn().expect("mpirun (Open MPI) is installed by scripts/setup");
    // Opening the FIFO waits for the rank that found the gate to open it; it then waits on `cat`
    // for twice the timeout while the other ranks wait for it.
    let mut writer = OpenOptions::new().write(true).open(&fifo).unwrap();
    std::thread::sleep(Duration::from_secs(6));
    writer.write_all(b"released\n").unwrap();
    drop(writer);
    let out = output_within(child, GUARD, "mpirun -n 4 canopy find --timeout 3 with a busy rank");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "released\n", "{stderr}");
}
