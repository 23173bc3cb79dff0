//! The group layer end to end on simulated hosts (threads), each with its own root directory whose files
//! differ in planned ways.

use canopy_group::aggr::{Classes, Concatenation, ForeignPartial, Sums};
use canopy_group::{
    AggrSpec, AggrType, Aggregation, Builtin, Errno, Fanout, GroupError, HostConfig, MemberStatus, OpKind,
    OpenFlags, Outcome, ReductionTree, Registry, Runtime, Simulation, Value, Whence, gloadaggr, serve,
    transport::thread_mesh,
};
use canopy_nodeset::RangeSet;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Host roots `DIR/0 .. DIR/n-1` with helpers to plant files.
struct Hosts {
    dir: tempfile::TempDir,
    count: usize,
}

impl Hosts {
    fn new(count: usize) -> Hosts {
        let dir = tempfile::tempdir().unwrap();
        for rank in 0..count {
            std::fs::create_dir(dir.path().join(rank.to_string())).unwrap();
        }
        Hosts { dir, count }
    }

    fn path(&self, rank: usize, path: &str) -> PathBuf {
        self.dir.path().join(rank.to_string()).join(path.trim_start_matches('/'))
    }

    fn write(&self, rank: usize, path: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rank, path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn simulation(&self, fanout: Fanout, ranks_per_node: usize) -> Simulation {
        Simulation {
            hosts: self.count,
            host_root: format!("{}/{{rank}}", self.dir.path().display()),
            host_name: "host{rank}".into(),
            host_names: None,
            ranks_per_node,
            fanout,
            timeout: Duration::from_secs(10),
            registry: Registry::new(),
        }
    }

    fn start(&self) -> canopy_group::SimulatedCluster {
        self.simulation(Fanout::default(), 1).start().unwrap()
    }
}

fn fanout(k: usize) -> Fanout {
    Fanout::Max(NonZeroUsize::new(k).unwrap())
}

/// Tree shapes that must all give the same results: (fan-out, ranks per node).
fn shapes() -> Vec<(Fanout, usize)> {
    vec![(Fanout::Flat, 1), (fanout(1), 1), (fanout(2), 1), (fanout(8), 1), (fanout(64), 1), (fanout(2), 3)]
}

fn text(value: &Value) -> String {
    match value {
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn group_read_concatenates_every_members_bytes_in_member_order() {
    let hosts = Hosts::new(11);
    for rank in 0..hosts.count {
        // Different lengths, and an empty file on host 3.
        hosts.write(
            rank,
            "/data/log",
            format!("line from host {rank}\n").repeat(if rank == 3 { 0 } else { rank + 1 }),
        );
    }
    let mut outcomes = Vec::new();
    for (fanout, per_node) in shapes() {
        let cluster = hosts.simulation(fanout, per_node).start().unwrap();
        let mut group = cluster.runtime().gopen("/data/log", OpenFlags::RDONLY).unwrap();
        assert_eq!(group.gsize(), 11);
        for (index, member) in group.gfiles().iter().enumerate() {
            assert_eq!(member.host, format!("host{index}"));
            assert_eq!(member.path, Path::new("/data/log"));
            assert_eq!(group.gindex(&member.host, &member.path), Some(index as u64));
        }
        let outcome = group.read(1 << 20).unwrap();
        let concat = outcome.data().unwrap().decode::<Concatenation>().unwrap().unwrap();
        let expected: Vec<(u64, String)> = (0..11)
            .map(|r| (r as u64, format!("line from host {r}\n").repeat(if r == 3 { 0 } else { r + 1 })))
            .collect();
        let got: Vec<(u64, String)> = concat.0.iter().map(|(m, v)| (*m, text(v))).collect();
        assert_eq!(got, expected, "{fanout:?}/{per_node}");
        let total: usize = expected.iter().map(|(_, s)| s.len()).sum();
        assert_eq!(outcome.status_value().unwrap(), Some(total as i64));
        // gstatus: each member's byte count.
        let statuses = group.gstatus();
        assert_eq!(statuses[3], MemberStatus::Ok(0));
        assert_eq!(statuses[10], MemberStatus::Ok(expected[10].1.len() as i64));
        outcomes.push(outcome);
    }
    assert!(outcomes.windows(2).all(|w| w[0] == w[1]), "every tree shape gives the same outcome");
}

#[test]
fn directory_groups_number_members_host_by_host_in_name_order() {
    let hosts = Hosts::new(4);
    for rank in 0..4 {
        hosts.write(rank, "/etc/conf.d/b.conf", "b");
        hosts.write(rank, "/etc/conf.d/a.conf", "a");
        if rank == 2 {
            hosts.write(rank, "/etc/conf.d/c.conf", "c");
        }
        std::fs::create_dir_all(hosts.path(rank, "/etc/conf.d/subdir")).unwrap();
    }
    let cluster = hosts.start();
    let group = cluster.runtime().gopen("/etc/conf.d", OpenFlags::RDONLY).unwrap();
    let files: Vec<String> =
        group.gfiles().iter().map(|m| format!("{}:{}", m.host, m.path.display())).collect();
    assert_eq!(
        files,
        [
            "host0:/etc/conf.d/a.conf",
            "host0:/etc/conf.d/b.conf",
            "host1:/etc/conf.d/a.conf",
            "host1:/etc/conf.d/b.conf",
            "host2:/etc/conf.d/a.conf",
            "host2:/etc/conf.d/b.conf",
            "host2:/etc/conf.d/c.conf",
            "host3:/etc/conf.d/a.conf",
            "host3:/etc/conf.d/b.conf",
        ]
    );
    assert_eq!(group.gindex("host2", "/etc/conf.d/c.conf"), Some(6));
    assert_eq!(group.gindex("host3", "/etc/conf.d/c.conf"), None);
    assert_eq!(group.hosts_of(&RangeSet::from_values([0, 5, 6])).to_string(), "host[0,2]");
    // A glob names the same kind of group.
    let glob = cluster.runtime().gopen("/etc/conf.d/[ab].conf", OpenFlags::RDONLY).unwrap();
    assert_eq!(glob.gsize(), 8);
}

#[test]
fn equivalence_classes_group_identical_contents_exactly() {
    let hosts = Hosts::new(7);
    let versions = ["v1", "v2", "v1", "v1", "v2", "v1", "v3"];
    for (rank, version) in versions.iter().enumerate() {
        hosts.write(rank, "/etc/app.conf", format!("version = {version}\n"));
    }
    for (fanout, per_node) in shapes() {
        let cluster = hosts.simulation(fanout, per_node).start().unwrap();
        let mut group = cluster.runtime().gopen("/etc/app.conf", OpenFlags::RDONLY).unwrap();
        group.gbindaggr(OpKind::Read, AggrType::Data, Builtin::Classes.into()).unwrap();
        let outcome = group.read(4096).unwrap();
        let classes = outcome.data().unwrap().decode::<Classes<Value>>().unwrap().unwrap();
        let listed: Vec<(String, String, String)> = classes
            .by_first_member()
            .into_iter()
            .map(|(value, members)| (text(value), members.to_string(), group.hosts_of(members).to_string()))
            .collect();
        assert_eq!(
            listed,
            [
                ("version = v1\n".into(), "0,2-3,5".into(), "host[0,2-3,5]".into()),
                ("version = v2\n".into(), "1,4".into(), "host[1,4]".into()),
                ("version = v3\n".into(), "6".into(), "host6".into()),
            ],
            "{fanout:?}/{per_node}"
        );
        // Checksums give the same partition while shipping digests only.
        group.gbindaggr(OpKind::Pread, AggrType::Data, Builtin::Checksum.into()).unwrap();
        let digests = group.pread(4096, 0).unwrap();
        let digests =
            digests.data().unwrap().decode::<Classes<canopy_group::aggr::Digest>>().unwrap().unwrap();
        let mut partition: Vec<String> = digests.0.iter().map(|(_, m)| m.to_string()).collect();
        partition.sort();
        assert_eq!(partition, ["0,2-3,5", "1,4", "6"]);
    }
}

/// Lists members in merge order: associative but not commutative.
struct MemberList;

impl Aggregation for MemberList {
    type Partial = String;
    fn leaf(&self, member: u64, _value: &Value) -> String {
        member.to_string()
    }
    fn merge(&self, left: String, right: String) -> String {
        format!("{left},{right}")
    }
}

#[test]
fn every_tree_shape_gives_the_same_aggregates() {
    let hosts = Hosts::new(13);
    for rank in 0..hosts.count {
        hosts.write(
            rank,
            "/proc/loadavg",
            format!(
                "{}.{:02} 0.5{} 1.00 1/{} {}\n",
                rank % 4,
                rank * 7 % 100,
                rank % 10,
                100 + rank,
                4000 + rank
            ),
        );
    }
    let builtins =
        [Builtin::Sum, Builtin::Min, Builtin::Max, Builtin::Average, Builtin::Concat, Builtin::Classes];
    let mut per_shape: Vec<Vec<Outcome>> = Vec::new();
    for (fanout, per_node) in shapes() {
        let mut simulation = hosts.simulation(fanout, per_node);
        simulation.registry.register("joined", |_: &str| Ok(MemberList));
        let cluster = simulation.start().unwrap();
        let mut group = cluster.runtime().gopen("/proc/loadavg", OpenFlags::RDONLY).unwrap();
        // Merges run strictly in member order, so even this non-commutative merge lists members in order.
        let joined = AggrSpec::Registered { name: "joined".into(), params: String::new() };
        group.gbindaggr(OpKind::Read, AggrType::Data, joined).unwrap();
        let list = group.read(10).unwrap().data().unwrap().decode::<String>().unwrap().unwrap();
        let expected: Vec<String> = (0..13).map(|m| m.to_string()).collect();
        assert_eq!(list, expected.join(","), "{fanout:?}/{per_node}");
        let mut outcomes = Vec::new();
        for builtin in builtins {
            group.gbindaggr(OpKind::Pread, AggrType::Data, builtin.into()).unwrap();
            outcomes.push(group.pread(4096, 0).unwrap());
        }
        group.gbindaggr(OpKind::Fstat, AggrType::Data, Builtin::Max.into()).unwrap();
        outcomes.push(group.fstat().unwrap());
        per_shape.push(outcomes);
    }
    assert!(per_shape.windows(2).all(|w| w[0] == w[1]), "aggregates differ between tree shapes");
    let sums = per_shape[0][0].data().unwrap().decode::<Sums>().unwrap().unwrap();
    // Column 5: 4000 + ... + 4012.
    assert_eq!(sums.0[4].unwrap().to_string(), (0..13).map(|r| 4000 + r).sum::<i64>().to_string());
    assert_eq!(sums.0[3], None, "1/100 is not a number");
}

#[test]
fn default_gopen_fails_on_any_failure_and_besteffort_keeps_the_rest() {
    let hosts = Hosts::new(6);
    for rank in [0, 1, 3, 4] {
        hosts.write(rank, "/etc/motd", "hi\n");
    }
    let cluster = hosts.start();
    let err =
        cluster.runtime().gopen("/etc/motd", OpenFlags::RDONLY).err().expect("hosts 2 and 5 lack the file");
    let GroupError::Open(report) = &err else { panic!("{err}") };
    assert_eq!(report.opened, 4);
    let grouped: Vec<String> = report
        .grouped()
        .iter()
        .map(|(path, errno, hosts)| format!("{hosts}:{}: {errno}", path.display()))
        .collect();
    assert_eq!(grouped, ["host[2,5]:/etc/motd: No such file or directory"]);
    assert!(err.to_string().contains("host[2,5]:/etc/motd: No such file or directory"), "{err}");

    let mut group = cluster.runtime().gopen("/etc/motd", OpenFlags::RDONLY | OpenFlags::BESTEFFORT).unwrap();
    assert_eq!(group.gsize(), 4);
    assert_eq!(group.open_report().failures.len(), 2);
    let hosts_of_members: Vec<&str> = group.gfiles().iter().map(|m| m.host.as_str()).collect();
    assert_eq!(hosts_of_members, ["host0", "host1", "host3", "host4"]);
    assert_eq!(group.read(10).unwrap().status_value().unwrap(), Some(12));

    // Nothing opened anywhere: best effort fails too.
    let err = cluster.runtime().gopen("/nowhere", OpenFlags::RDONLY | OpenFlags::BESTEFFORT).err().unwrap();
    assert!(matches!(&err, GroupError::Open(r) if r.opened == 0), "{err}");
}

#[test]
fn gstatus_names_the_members_that_fail_an_operation() {
    let hosts = Hosts::new(5);
    for rank in 0..5 {
        hosts.write(rank, "/var/out", "");
    }
    // Writes to /dev/full fail with ENOSPC: host 3's member is a link to it.
    let out3 = hosts.path(3, "/var/out");
    std::fs::remove_file(&out3).unwrap();
    std::os::unix::fs::symlink("/dev/full", &out3).unwrap();
    let cluster = hosts.start();
    let mut group = cluster.runtime().gopen("/var/out", OpenFlags::WRONLY).unwrap();
    let err = group.write(b"0123456789").expect_err("host 3 cannot write");
    let GroupError::Members(outcome) = &err else { panic!("{err}") };
    assert_eq!(outcome.failures().len(), 1);
    let failure = &outcome.failures()[0];
    assert_eq!(failure.status, MemberStatus::Failed(Errno(libc::ENOSPC)));
    assert_eq!(failure.members.to_string(), "3");
    assert_eq!(failure.hosts.to_string(), "host3");
    assert!(outcome.missing().is_empty());
    // The status aggregation only saw the members that succeeded (error-aware sum).
    assert_eq!(outcome.status_value().unwrap(), Some(40));
    let statuses = group.gstatus();
    assert_eq!(statuses[3], MemberStatus::Failed(Errno(libc::ENOSPC)));
    assert!(statuses.iter().enumerate().all(|(i, s)| i == 3 || *s == MemberStatus::Ok(10)));
    assert_eq!(std::fs::read(hosts.path(4, "/var/out")).unwrap(), b"0123456789");
}

#[test]
fn write_seek_truncate_sync_and_close_apply_to_every_member() {
    let hosts = Hosts::new(3);
    for rank in 0..3 {
        hosts.write(rank, "/tmp/state", "x".repeat(rank * 10));
    }
    let cluster = hosts.start();
    let mut group = cluster.runtime().gopen("/tmp/state", OpenFlags::RDWR).unwrap();
    // Offsets differ after seeking to each end: equal reports no common offset.
    assert_eq!(group.lseek(0, Whence::End).unwrap().status_value().unwrap(), None);
    assert_eq!(group.gstatus(), [MemberStatus::Ok(0), MemberStatus::Ok(10), MemberStatus::Ok(20)]);
    assert_eq!(group.lseek(5, Whence::Set).unwrap().status_value().unwrap(), Some(5));
    assert_eq!(group.write(b"HELLO").unwrap().status_value().unwrap(), Some(15));
    assert_eq!(group.pwrite(b"ab", 0).unwrap().status_value().unwrap(), Some(6));
    assert_eq!(group.fsync().unwrap().status_value().unwrap(), Some(0));
    group.ftruncate(8).unwrap();
    group.gbindaggr(OpKind::Fstat, AggrType::Data, Builtin::Min.into()).unwrap();
    let stat = group.fstat().unwrap();
    let smallest = stat.data().unwrap().decode::<canopy_group::aggr::Extremes>().unwrap().unwrap();
    let size = smallest.0[0].clone().unwrap();
    assert_eq!((size.value.to_string(), size.members.to_string()), ("8".into(), "0-2".into()));
    for rank in 0..3 {
        let content = std::fs::read(hosts.path(rank, "/tmp/state")).unwrap();
        // Host 0's empty file got zeros between its end and offset 5.
        let expected: &[u8] = if rank == 0 { b"ab\0\0\0HEL" } else { b"abxxxHEL" };
        assert_eq!(content, expected, "host {rank}");
    }
    let closed = group.close().unwrap();
    assert_eq!(closed.status_value().unwrap(), Some(0));
    let err =
        cluster.runtime().gbindaggr(OpKind::Write, AggrType::Data, Builtin::Concat.into()).err().unwrap();
    assert!(err.to_string().contains("produces no data"), "{err}");
}

/// A FIFO that blocks readers until the test writes to it: a host that hangs in a read.
struct Fifo {
    writer: Option<std::fs::File>,
}

impl Fifo {
    fn new(path: PathBuf) -> Fifo {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        // O_RDWR on a FIFO does not block on Linux; holding a writer makes readers wait for data.
        let writer = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        Fifo { writer: Some(writer) }
    }

    fn release(&mut self) {
        use std::io::Write;
        if let Some(mut writer) = self.writer.take() {
            writer.write_all(b"late\n").unwrap();
        }
    }
}

#[test]
fn a_host_that_never_answers_is_a_named_missing_set_within_the_timeout() {
    for (fanout, missing) in [(Fanout::Flat, "host2"), (fanout(2), "host[2-3]")] {
        let hosts = Hosts::new(8);
        for rank in 0..8 {
            if rank != 2 {
                hosts.write(rank, "/var/log/app", format!("ok {rank}\n"));
            }
        }
        let mut fifo = Fifo::new(hosts.path(2, "/var/log/app"));
        let mut simulation = hosts.simulation(fanout, 1);
        simulation.timeout = Duration::from_secs(1);
        let cluster = simulation.start().unwrap();
        // With fan-out 2, rank 2 is the parent of rank 3: a hung inner node takes its subtree with it.
        let topology = ReductionTree::uniform(8, fanout);
        assert_eq!(topology.children(2).contains(&3), missing == "host[2-3]");
        let mut group = cluster.runtime().gopen("/var/log/app", OpenFlags::RDONLY).unwrap();
        let start = Instant::now();
        let err = group.read(100).expect_err("host 2 hangs");
        let elapsed = start.elapsed();
        assert!(elapsed < Duration::from_secs(1), "answered after {elapsed:?}");
        let GroupError::Members(outcome) = &err else { panic!("{err}") };
        assert_eq!(outcome.missing().to_string(), missing);
        let unreachable = &outcome.failures()[0];
        assert_eq!(unreachable.status, MemberStatus::Unreachable);
        assert_eq!(unreachable.hosts.to_string(), missing);
        // Everyone else's data is there.
        let concat = outcome.data().unwrap().decode::<Concatenation>().unwrap().unwrap();
        let answered: Vec<u64> = concat.0.iter().map(|(m, _)| *m).collect();
        let lost = RangeSet::parse(if missing == "host2" { "2" } else { "2-3" }).unwrap();
        assert_eq!(answered, (0..8).filter(|m| !lost.contains_value(*m)).collect::<Vec<_>>());
        assert_eq!(group.gstatus()[2], MemberStatus::Unreachable);

        // The host comes back: its late answer is discarded and it stays out of the group.
        fifo.release();
        let err = group.fstat().expect_err("host 2 left the group");
        let GroupError::Members(outcome) = &err else { panic!("{err}") };
        assert_eq!(outcome.missing().to_string(), missing);
        assert_eq!(outcome.failures().len(), 1);
    }
}

#[test]
fn a_hung_host_at_gopen_is_missing_and_best_effort_goes_on_without_it() {
    let hosts = Hosts::new(4);
    for rank in [0, 1, 3] {
        hosts.write(rank, "/run/status", "up\n");
    }
    // Opening a FIFO for reading blocks until a writer appears: host 2 hangs in gopen.
    let fifo_path = hosts.path(2, "/run/status");
    std::fs::create_dir_all(fifo_path.parent().unwrap()).unwrap();
    let c_path = std::ffi::CString::new(fifo_path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let mut simulation = hosts.simulation(Fanout::Flat, 1);
    simulation.timeout = Duration::from_secs(1);
    let cluster = simulation.start().unwrap();
    let err = cluster.runtime().gopen("/run/status", OpenFlags::RDONLY).err().unwrap();
    let GroupError::Open(report) = &err else { panic!("{err}") };
    assert_eq!(report.missing.to_string(), "rank2");
    let mut group =
        cluster.runtime().gopen("/run/status", OpenFlags::RDONLY | OpenFlags::BESTEFFORT).unwrap();
    assert_eq!(group.gsize(), 3);
    assert_eq!(group.read(10).unwrap().status_value().unwrap(), Some(9));
    // Unblock host 2 (and keep a writer until its thread has seen the shutdown).
    let writer = std::fs::OpenOptions::new().write(true).open(&fifo_path).unwrap();
    drop(group);
    drop(cluster);
    drop(writer);
}

/// Longest line across the group: a Rust aggregation registered by name.
struct LongestLine;

impl Aggregation for LongestLine {
    type Partial = (usize, RangeSet);
    fn leaf(&self, member: u64, value: &Value) -> (usize, RangeSet) {
        let longest = match value {
            Value::Bytes(data) => data.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap_or(0),
            _ => 0,
        };
        (longest, RangeSet::from_values([member]))
    }
    fn merge(&self, left: (usize, RangeSet), right: (usize, RangeSet)) -> (usize, RangeSet) {
        match left.0.cmp(&right.0) {
            std::cmp::Ordering::Less => right,
            std::cmp::Ordering::Greater => left,
            std::cmp::Ordering::Equal => (left.0, left.1.union(&right.1)),
        }
    }
}

#[test]
fn registered_rust_aggregations_run_in_the_tree() {
    let hosts = Hosts::new(6);
    for rank in 0..6 {
        hosts.write(
            rank,
            "/etc/hosts",
            format!("short\n{}\n", "x".repeat(if rank % 3 == 1 { 40 } else { 10 })),
        );
    }
    let mut simulation = hosts.simulation(fanout(2), 1);
    simulation.registry.register("longest-line", |_params: &str| Ok(LongestLine));
    let cluster = simulation.start().unwrap();
    let mut group = cluster.runtime().gopen("/etc/hosts", OpenFlags::RDONLY).unwrap();
    let spec = AggrSpec::Registered { name: "longest-line".into(), params: String::new() };
    group.gbindaggr(OpKind::Read, AggrType::Data, spec).unwrap();
    let outcome = group.read(1000).unwrap();
    let (longest, members) = outcome.data().unwrap().decode::<(usize, RangeSet)>().unwrap().unwrap();
    assert_eq!((longest, members.to_string()), (40, "1,4".into()));

    let unknown = AggrSpec::Registered { name: "nope".into(), params: String::new() };
    group.gbindaggr(OpKind::Read, AggrType::Status, unknown).unwrap();
    let err = group.read(1).err().unwrap();
    assert!(matches!(&err, GroupError::Aggregation(e) if e.0.contains("nope")), "{err}");
}

fn build_load_avg_library(dir: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = dir.join("libloadavg.so");
    let output = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-Wall", "-Werror", "-I"])
        .arg(manifest.join("include"))
        .arg(manifest.join("tests/fixtures/load_avg.c"))
        .arg("-o")
        .arg(&library)
        .output()
        .expect("run cc");
    assert!(output.status.success(), "cc failed: {}", String::from_utf8_lossy(&output.stderr));
    library
}

#[test]
fn the_papers_load_average_aggregation_loads_from_a_shared_library() {
    let hosts = Hosts::new(9);
    let loads: Vec<[f64; 3]> =
        (0..9).map(|r| [r as f64 * 0.25, 1.0 + r as f64 * 0.5, 2.0 - r as f64 * 0.125]).collect();
    for (rank, [one, five, fifteen]) in loads.iter().enumerate() {
        hosts.write(
            rank,
            "/proc/loadavg",
            format!("{one:.3} {five:.3} {fifteen:.3} 1/123 {}\n", 1000 + rank),
        );
    }
    let library = build_load_avg_library(hosts.dir.path());
    let expected: Vec<f64> = (0..3).map(|i| loads.iter().map(|l| l[i]).sum::<f64>() / 9.0).collect();
    for (fanout, per_node) in shapes() {
        let cluster = hosts.simulation(fanout, per_node).start().unwrap();
        let mut group = cluster.runtime().gopen("/proc/loadavg", OpenFlags::RDONLY).unwrap();
        let aggregation = gloadaggr(&library, "calc_load_avgs").unwrap();
        group.gbindaggr(OpKind::Read, AggrType::Data, aggregation).unwrap();
        let outcome = group.read(4096).unwrap();
        let partial = outcome.data().unwrap().decode::<ForeignPartial>().unwrap().unwrap();
        assert_eq!(partial.members.to_string(), "0-8");
        let averages: Vec<f64> =
            partial.data.chunks_exact(8).map(|b| f64::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(averages.len(), 3);
        for (got, want) in averages.iter().zip(&expected) {
            assert!((got - want).abs() < 1e-9, "{fanout:?}/{per_node}: {averages:?} vs {expected:?}");
        }
    }
    assert!(gloadaggr(&library, "no_such_function").err().unwrap().to_string().contains("no_such_function"));
    assert!(gloadaggr(hosts.dir.path().join("missing.so"), "f").is_err());

    let cluster = hosts.start();
    let mut group = cluster.runtime().gopen("/proc/loadavg", OpenFlags::RDONLY).unwrap();
    group.gbindaggr(OpKind::Read, AggrType::Data, gloadaggr(&library, "always_fails").unwrap()).unwrap();
    let err = group.read(100).err().unwrap();
    assert!(err.to_string().contains("always_fails failed with status 42"), "{err}");
}

#[test]
fn ranks_built_with_another_topology_refuse_instead_of_hanging() {
    let hosts = Hosts::new(4);
    for rank in 0..4 {
        hosts.write(rank, "/f", "x");
    }
    let mut mesh = thread_mesh(4);
    let mut threads = Vec::new();
    for transport in mesh.drain(1..) {
        let rank = canopy_group::Transport::rank(&transport);
        let config = HostConfig { name: format!("host{rank}"), root: hosts.path(rank, "/") };
        // The servers form a chain (fan-out 1); the client believes in fan-out 3.
        threads.push(std::thread::spawn(move || {
            serve(transport, ReductionTree::uniform(4, fanout(1)), config, Registry::new())
        }));
    }
    let config = HostConfig { name: "host0".into(), root: hosts.path(0, "/") };
    let runtime =
        Runtime::new(mesh.pop().unwrap(), ReductionTree::uniform(4, fanout(3)), config, Registry::new())
            .unwrap();
    runtime.set_timeout(Duration::from_millis(300));
    let err = runtime.gopen("/f", OpenFlags::RDONLY).err().unwrap();
    assert!(matches!(&err, GroupError::Refused(p) if p[0].contains("another tree topology")), "{err}");
    // Shutting down reaches every server anyway.
    drop(runtime);
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
}
