//! Faults through the mount: a dead or hung server makes the operations on its partitions fail
//! with EIO (never a hang), the mount recovers by itself when the server is back, `kill -9` of a
//! server during a create storm loses no acknowledged create, and unmounting always works — with
//! a server dead, with the mount busy, and after the mount's own server was killed.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::support::{TestCluster, TestMount, canopy_ok, fuse_available, process_exited, wait_until};

/// Runs `operation` on another thread; the limit only guards against a hung mount.
fn bounded<T: Send + 'static>(operation: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || done.send(operation()));
    result.recv_timeout(Duration::from_secs(60)).expect("the mount hung")
}

fn errno_of<T>(result: std::io::Result<T>) -> Option<i32> {
    result.err().map(|e| e.raw_os_error().unwrap_or(-1))
}

/// Names in directory `dir` (a service path) whose partitions are on server `server`.
fn names_on(cluster: &TestCluster, dir: &str, server: usize, count: usize) -> Vec<String> {
    (0..).map(|i| format!("n{i}")).filter(|n| cluster.server_of(dir, n) == server).take(count).collect()
}

fn stat_errno(path: PathBuf) -> Option<i32> {
    bounded(move || errno_of(fs::symlink_metadata(path)))
}

#[test]
fn a_dead_or_hung_server_gives_eio_and_the_mount_recovers_when_it_is_back() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(2, 16_000);
    let mount = TestMount::new(&cluster, &["--partitions", "0", "--timeout", "2s", "--ttl", "0"]);
    // A directory whose metadata object is on server 0, with partitions on both servers.
    let dir_name = names_on(&cluster, "/", 0, 1).remove(0);
    let dir = mount.path().join(&dir_name);
    fs::create_dir(&dir).unwrap();
    let service_dir = format!("/{dir_name}");
    let on_zero = names_on(&cluster, &service_dir, 0, 3);
    let mut on_one = names_on(&cluster, &service_dir, 1, 4);
    let new_on_one = on_one.pop().unwrap();
    for name in on_zero.iter().chain(&on_one) {
        fs::write(dir.join(name), name).unwrap();
    }

    for stop in ["KILL", "STOP"] {
        let pid = cluster.server_pid(1);
        let signalled = Command::new("kill").args([&format!("-{stop}"), &pid.to_string()]).status().unwrap();
        assert!(signalled.success());
        if stop == "KILL" {
            wait_until("server 1 to die", Duration::from_secs(10), || process_exited(pid));
        }
        // Server 1's partition: EIO (refused connection, or the 2 s timeout for a hung server).
        assert_eq!(stat_errno(dir.join(&on_one[0])), Some(libc::EIO), "{stop}: stat");
        let path = dir.join(&on_one[1]);
        assert_eq!(bounded(move || errno_of(fs::read(path))), Some(libc::EIO), "{stop}: read");
        let path = dir.join(&new_on_one);
        assert_eq!(bounded(move || errno_of(fs::write(path, b"x"))), Some(libc::EIO), "{stop}: create");
        let listing = dir.clone();
        let listed =
            bounded(move || errno_of(fs::read_dir(listing).and_then(Iterator::collect::<Result<Vec<_>, _>>)));
        assert_eq!(listed, Some(libc::EIO), "{stop}: readdir reads every partition");
        // Server 0's partition and the metadata object still work.
        assert_eq!(
            fs::read(dir.join(&on_zero[0])).unwrap(),
            on_zero[0].as_bytes(),
            "{stop}: server 0 serves on"
        );
        assert!(fs::metadata(&dir).unwrap().is_dir());

        if stop == "KILL" {
            cluster.restart();
        } else {
            assert!(
                Command::new("kill")
                    .args(["-CONT", &cluster.server_pid(1).to_string()])
                    .status()
                    .unwrap()
                    .success()
            );
        }
        // Back without remounting (the first requests may still race the server's start).
        let probe = dir.join(&on_one[0]);
        wait_until("the mount to reach server 1 again", Duration::from_secs(30), || fs::read(&probe).is_ok());
        assert_eq!(fs::read(dir.join(&on_one[2])).unwrap(), on_one[2].as_bytes());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 6);
    }

    // Unmounting works while a server is dead and a process sits in the mount: detached lazily,
    // and the mount's server exits when that process leaves.
    cluster.kill_nine(1);
    let mut sitter = Command::new("sleep").arg("600").current_dir(&dir).spawn().unwrap();
    let output = super::common::canopy().args(["dirsvc", "umount"]).arg(mount.path()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("busy"), "a busy mount is detached");
    assert!(!canopy_fusekit::is_mounted(mount.path()).unwrap(), "gone from the namespace at once");
    sitter.kill().unwrap();
    sitter.wait().unwrap();
    wait_until("the mount's server to exit", Duration::from_secs(30), || process_exited(mount.pid));
}

/// Appends each name it creates (open O_CREAT, close) to the list file; failures are reported on
/// stderr and the loop goes on.
const CREATOR: &str =
    r#"list=$1; shift; for f; do true > "$f" && printf '%s\n' "$f" >> "$list"; done; exit 0"#;

#[test]
fn kill_nine_of_a_server_during_a_create_storm_loses_no_acknowledged_create() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(3, 16_000);
    let mounts: Vec<TestMount> =
        (0..3).map(|_| TestMount::new(&cluster, &["--partitions", "0", "--timeout", "3s"])).collect();
    // The directory's metadata object away from the server to be killed.
    let dir_name = names_on(&cluster, "/", 0, 1).remove(0);
    fs::create_dir(mounts[0].path().join(&dir_name)).unwrap();

    let per_creator = 1_500;
    let lists: Vec<PathBuf> = (0..3).map(|k| cluster.scratch().join(format!("acknowledged-{k}"))).collect();
    let mut creators: Vec<Child> = (0..3)
        .map(|k| {
            let names: Vec<String> = (0..per_creator).map(|i| format!("s{k}.{i:05}")).collect();
            Command::new("sh")
                .args(["-c", CREATOR, "creator"])
                .arg(&lists[k])
                .args(&names)
                .current_dir(mounts[k].path().join(&dir_name))
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let acknowledged = |lists: &[PathBuf]| -> BTreeSet<String> {
        let mut all = BTreeSet::new();
        for list in lists {
            all.extend(fs::read_to_string(list).unwrap_or_default().lines().map(str::to_string));
        }
        all
    };
    wait_until("creates to get going", Duration::from_secs(120), || acknowledged(&lists).len() >= 600);
    cluster.kill_nine(2);
    let at_kill = acknowledged(&lists).len();
    // The storm goes on against the dead server for a while (those creates fail with EIO).
    wait_until("more creates", Duration::from_secs(120), || acknowledged(&lists).len() >= at_kill + 300);
    cluster.restart();
    for creator in &mut creators {
        assert!(creator.wait().unwrap().success());
    }

    let acknowledged = acknowledged(&lists);
    let listed: BTreeSet<String> = fs::read_dir(mounts[1].path().join(&dir_name))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    let lost: Vec<&String> = acknowledged.difference(&listed).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged creates lost, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    let attempted: BTreeSet<String> =
        (0..3).flat_map(|k| (0..per_creator).map(move |i| format!("s{k}.{i:05}"))).collect();
    assert!(listed.is_subset(&attempted), "nothing appears that no creator attempted");
    let failed = attempted.len() - acknowledged.len();
    assert!(failed > 0, "some creates hit the dead server (else the kill proved nothing)");
    eprintln!(
        "{} acknowledged, {failed} failed while server 2 was down, {} present",
        acknowledged.len(),
        listed.len()
    );
}

#[test]
fn unmount_clears_a_mount_whose_server_was_killed() {
    if !fuse_available() {
        return;
    }
    let cluster = TestCluster::start(1, 16_000);
    let mount = TestMount::new(&cluster, &[]);
    fs::create_dir(mount.path().join("d")).unwrap();
    assert!(Command::new("kill").args(["-KILL", &mount.pid.to_string()]).status().unwrap().success());
    wait_until("the mount's server to die", Duration::from_secs(10), || process_exited(mount.pid));
    let path = mount.path().to_path_buf();
    let stale = bounded(move || errno_of(fs::metadata(path.join("d"))));
    // The kernel answers ENOTCONN once the dead server's connection is gone, ECONNABORTED for a
    // request that met the abort itself: both are the stale mount `umount` must clear.
    assert!(
        matches!(stale, Some(libc::ENOTCONN | libc::ECONNABORTED)),
        "a stale mount: transport endpoint is not connected, got {stale:?}"
    );
    canopy_ok(&["dirsvc".as_ref(), "umount".as_ref(), mount.path().as_os_str()]);
    assert!(!canopy_fusekit::is_mounted(mount.path()).unwrap());
    // Remounting the same directory works, and the data is all there.
    let again = TestMount::new(&cluster, &[]);
    assert!(again.path().join("d").is_dir());
}

/// One HTTP/2 gRPC call (a Ping with the cluster secret) written raw to `address`, after which the
/// connection is dropped without reading the answer: the server's reply meets a closed socket.
fn call_and_hang_up(address: &str, secret: &str) -> std::io::Result<()> {
    use std::io::Write;
    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        bytes.extend([kind, flags]);
        bytes.extend(stream.to_be_bytes());
        bytes.extend(payload);
        bytes
    }
    // HPACK literal fields without indexing, new names, no Huffman coding.
    let mut headers = Vec::new();
    let authorization = format!("Bearer {secret}");
    for (name, value) in [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/canopy.dirsvc.v1.Metadata/Ping"),
        (":authority", address),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        ("authorization", authorization.as_str()),
    ] {
        headers.extend([0x00, name.len() as u8]);
        headers.extend(name.bytes());
        headers.push(value.len() as u8);
        headers.extend(value.bytes());
    }
    let mut request = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    request.extend(frame(0x4, 0, 0, &[])); // SETTINGS
    request.extend(frame(0x1, 0x4, 1, &headers)); // HEADERS, END_HEADERS
    request.extend(frame(0x0, 0x1, 1, &[0, 0, 0, 0, 0])); // DATA: an empty message, END_STREAM
    std::net::TcpStream::connect(address)?.write_all(&request)
}

#[test]
fn clients_hanging_up_before_their_answer_cost_a_connection_not_the_server() {
    let cluster = TestCluster::start(1, 16_000);
    let config: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(cluster.dir.join("cluster.json")).unwrap()).unwrap();
    let address = config["servers"][0].as_str().unwrap().to_string();
    let secret = fs::read_to_string(cluster.dir.join("secret")).unwrap().trim().to_string();
    let pid = cluster.server_pid(0);
    for _ in 0..200 {
        if call_and_hang_up(&address, &secret).is_err() {
            break; // refused: the server is gone
        }
    }
    assert!(!process_exited(pid), "the server died of a client hanging up (SIGPIPE)");
    let status =
        super::common::canopy().args(["dirsvc", "status", "--cluster"]).arg(&cluster.dir).output().unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stdout));
}
