//! Mistakes on the command line: clear messages and find-like exit codes (2 usage, 1 failure).

use super::common::canopy;
use super::support::TestCluster;

fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let output = canopy().args(args).output().unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn bad_mountpoints_clusters_and_unmounts_are_reported() {
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("missing");
    let file = scratch.path().join("file");
    std::fs::write(&file, "").unwrap();

    let cluster = TestCluster::start(1, 16_000);
    for target in [&missing, &file] {
        let (code, stderr) = run(&[
            "dirsvc".as_ref(),
            "mount".as_ref(),
            "--cluster".as_ref(),
            cluster.dir.as_os_str(),
            target.as_os_str(),
        ]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("is not a directory") && stderr.contains(&*target.to_string_lossy()),
            "{stderr}"
        );
    }
    let (code, stderr) = run(&[
        "dirsvc".as_ref(),
        "mount".as_ref(),
        "--cluster".as_ref(),
        missing.as_os_str(),
        scratch.path().as_os_str(),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot read cluster file"), "{stderr}");
    let bad_ttl = ["dirsvc", "mount", "--ttl", "5", "--cluster"].map(std::ffi::OsStr::new);
    let (code, stderr) =
        run(&[&bad_ttl[..], &[cluster.dir.as_os_str(), scratch.path().as_os_str()]].concat());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("needs a unit"), "{stderr}");

    let (code, stderr) = run(&["dirsvc".as_ref(), "umount".as_ref(), scratch.path().as_os_str()]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("is not a mountpoint"), "{stderr}");
}
