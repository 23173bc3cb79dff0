//! Mounting for tests, and comparing what GNU tools print on the source and on the mount.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use canopy_latfs::{Mounted, Options};
use tempfile::TempDir;

pub use canopy_testkit::fuse_available;

/// A mount of some source directory; unmounted (before its mountpoint is removed) when dropped.
pub struct TestMount {
    pub mount: Mounted,
    mountpoint: TempDir,
}

impl TestMount {
    /// Mounts `source` with a small delay, after `configure` adjusts the options.
    pub fn new(source: &Path, configure: impl FnOnce(&mut Options)) -> TestMount {
        let mountpoint = tempfile::tempdir().expect("mountpoint");
        let mut options = Options::new(source, mountpoint.path());
        options.delay = Duration::from_micros(100);
        options.threads = 16;
        configure(&mut options);
        options.validate().expect("valid options");
        let mount = Mounted::start(&options).expect("mount");
        TestMount { mount, mountpoint }
    }

    pub fn path(&self) -> &Path {
        self.mountpoint.path()
    }
}

/// The records `find DIR -mindepth 1 -printf FORMAT` prints, one per entry; FORMAT must end in `\0`.
pub fn find_records(dir: &Path, format: &str) -> BTreeSet<Vec<u8>> {
    assert!(format.ends_with("\\0"), "records are NUL-terminated");
    let output = Command::new("find")
        .arg(dir)
        .args(["-mindepth", "1", "-printf", format])
        .output()
        .expect("run GNU find");
    assert!(
        output.status.success(),
        "find {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    split_records(&output.stdout, 0)
}

/// Runs `program args…` in `dir` and returns its output records, split at `separator`.
pub fn tool_records(dir: &Path, program: &str, args: &[&str], separator: u8) -> BTreeSet<Vec<u8>> {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|error| panic!("run {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    split_records(&output.stdout, separator)
}

fn split_records(bytes: &[u8], separator: u8) -> BTreeSet<Vec<u8>> {
    bytes.split(|&b| b == separator).filter(|record| !record.is_empty()).map(<[u8]>::to_vec).collect()
}

/// Panics with the records only one side has.
pub fn assert_same_records(expected: &BTreeSet<Vec<u8>>, actual: &BTreeSet<Vec<u8>>, what: &str) {
    if expected == actual {
        return;
    }
    let show = |records: Vec<&Vec<u8>>| {
        records
            .iter()
            .take(20)
            .map(|r| format!("  {:?}", String::from_utf8_lossy(r)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "{what}: the mount differs from the source\nonly in the source:\n{}\nonly on the mount:\n{}",
        show(expected.difference(actual).collect()),
        show(actual.difference(expected).collect()),
    );
}
