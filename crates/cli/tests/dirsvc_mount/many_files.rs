//! Many processes create files in one directory through mounts of the service; `ls | wc -l`, GNU
//! find and `canopy find` on the mount must then see exactly the names the creators say they
//! created. Each creator has its own mount, like clients on different nodes: the kernel serialises
//! creates within one directory of one mount, so this is how creates reach the servers at once.
//!
//! 100,000 files by default (`CANOPY_MOUNT_TEST_FILES` changes that): about 2.5 minutes on a
//! loaded 2-core machine (load average 8), where every create waits for a journal fsync.

use std::collections::BTreeSet;
use std::fs;
use std::process::{Command, Stdio};

use super::common::{canopy, gnu};
use super::support::{TestCluster, TestMount, fuse_available};

const CREATORS: usize = 4;

/// Creates its argument names in the current directory, one open(O_CREAT)+close each, and
/// appends each one created to the list file given first.
const CREATOR: &str = r#"list=$1; shift; for f; do true > "$f" && printf '%s\n' "$f" >> "$list"; done"#;

fn lines(bytes: &[u8]) -> BTreeSet<String> {
    String::from_utf8_lossy(bytes).lines().map(str::to_string).collect()
}

#[test]
fn files_created_by_many_processes_are_all_seen_by_ls_find_and_canopy_find() {
    if !fuse_available() {
        return;
    }
    let total: usize =
        std::env::var("CANOPY_MOUNT_TEST_FILES").ok().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let cluster = TestCluster::start(2, 16_000);
    // New directories span both servers from the start.
    let mounts: Vec<TestMount> =
        (0..CREATORS).map(|_| TestMount::new(&cluster, &["--partitions", "0"])).collect();
    fs::create_dir(mounts[0].path().join("shared")).unwrap();

    let per_creator = total.div_ceil(CREATORS);
    let lists: Vec<_> = (0..CREATORS).map(|k| cluster.scratch().join(format!("created-{k}"))).collect();
    let creators: Vec<_> = (0..CREATORS)
        .map(|k| {
            let names = (0..per_creator).map(|i| format!("c{k}.file.{i:06}\n")).collect::<String>();
            let mut xargs = Command::new("xargs")
                .args(["-n", "2000", "sh", "-c", CREATOR, "creator"])
                .arg(&lists[k])
                .current_dir(mounts[k].path().join("shared"))
                .stdin(Stdio::piped())
                .spawn()
                .unwrap();
            let mut input = xargs.stdin.take().unwrap();
            std::thread::spawn(move || std::io::Write::write_all(&mut input, names.as_bytes()).unwrap());
            xargs
        })
        .collect();
    for mut creator in creators {
        assert!(creator.wait().unwrap().success(), "a creator failed");
    }
    let mut created = BTreeSet::new();
    for list in &lists {
        created.extend(lines(&fs::read(list).unwrap()));
    }
    assert_eq!(created.len(), per_creator * CREATORS, "every create succeeded");

    // Listed from a mount that created nothing itself (no kernel cache of these names).
    let reader = TestMount::new(&cluster, &[]);
    let shared = reader.path().join("shared");
    let ls = gnu("sh").arg("-c").arg("ls | wc -l").current_dir(&shared).output().unwrap();
    assert!(ls.status.success());
    assert_eq!(String::from_utf8_lossy(&ls.stdout).trim(), created.len().to_string(), "ls | wc -l");

    let find = gnu("find").arg(&shared).args(["-mindepth", "1", "-printf", "%f\\n"]).output().unwrap();
    assert!(find.status.success(), "{}", String::from_utf8_lossy(&find.stderr));
    assert!(lines(&find.stdout) == created, "GNU find sees exactly the created names");
    assert_eq!(find.stdout.iter().filter(|&&b| b == b'\n').count(), created.len(), "and each once");

    let ours =
        canopy().arg("find").arg(&shared).args(["-mindepth", "1", "-printf", "%f\\n"]).output().unwrap();
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    assert!(lines(&ours.stdout) == created, "canopy find sees exactly the created names");
    assert_eq!(ours.stdout.iter().filter(|&&b| b == b'\n').count(), created.len(), "and each once");

    // The names went to both servers' partitions.
    let stat = canopy()
        .args(["dirsvc", "stat", "--json", "--cluster"])
        .arg(&cluster.dir)
        .arg("/shared")
        .output()
        .unwrap();
    let stat: serde_json::Value = serde_json::from_slice(&stat.stdout).unwrap();
    let entries: Vec<u64> =
        stat["partitions"].as_array().unwrap().iter().map(|p| p["entries"].as_u64().unwrap()).collect();
    assert_eq!(entries.iter().sum::<u64>(), created.len() as u64);
    assert!(entries.iter().all(|&n| n > 0), "{entries:?}");
}
