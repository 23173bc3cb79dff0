//! The default thread policy grows the pool while the file system keeps the workers waiting: on a
//! latency mount (`canopy latfs`, 500 µs per metadata request) a walk ends with more threads than
//! it starts with on a remote file system (16), and the walk is complete. (No timing is judged:
//! the thread count the walk reports is.)

mod common;

use common::canopy;
use common::latency_mount::mount;

/// Threads the engine starts with on a remote (FUSE, NFS…) file system.
const REMOTE_INITIAL_THREADS: u64 = 16;

#[test]
fn the_default_policy_grows_the_pool_on_a_latency_mount() {
    if !common::fuse_available() {
        return;
    }
    let (source, mountpoint, scratch) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Wide enough that work waits in the queues while every worker waits on the mount.
    for d in 0..300 {
        let dir = source.path().join(format!("d{d:03}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..10 {
            std::fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
    }
    let _mount = mount(source.path(), mountpoint.path(), &scratch.path().join("ready"), "500us", 256);
    let out = canopy().args(["walk", "--json"]).arg(mountpoint.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["totals"]["entries"], 1 + 300 * 11, "the walk is complete");
    let threads = report["threads"].as_u64().unwrap();
    assert!(
        threads > REMOTE_INITIAL_THREADS,
        "the pool grew past {REMOTE_INITIAL_THREADS}: {threads} threads"
    );
}
