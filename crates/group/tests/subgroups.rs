//! Sub-groups, posted (pipelined) writes, and the path operations the group tools build on: rename,
//! unlink, and assembling a file from literal bytes and ranges of another group's member.

use canopy_group::{Errno, Fanout, FileOp, GroupError, MemberStatus, OpenFlags, Piece, Simulation};
use canopy_nodeset::RangeSet;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root(dir: &Path, rank: usize) -> PathBuf {
    dir.join(rank.to_string())
}

fn start(dir: &Path, hosts: usize, fanout: usize) -> canopy_group::SimulatedCluster {
    for rank in 0..hosts {
        std::fs::create_dir_all(root(dir, rank).join("data")).unwrap();
    }
    Simulation {
        hosts,
        host_root: format!("{}/{{rank}}", dir.display()),
        fanout: Fanout::Max(NonZeroUsize::new(fanout).unwrap()),
        timeout: Duration::from_secs(10),
        ..Default::default()
    }
    .start()
    .unwrap()
}

#[test]
fn posted_writes_stream_in_order_and_report_failures_on_the_next_acknowledged_operation() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = start(dir.path(), 5, 2);
    let mut group = cluster
        .runtime()
        .gopen("/data/out", OpenFlags::WRONLY | OpenFlags::CREAT | OpenFlags::TRUNC)
        .unwrap();
    for chunk in 0..50u8 {
        group.post(FileOp::Write { data: vec![chunk; 1000] }).unwrap();
    }
    let outcome = group.fsync().unwrap();
    assert_eq!(outcome.status_value().unwrap(), Some(0));
    let expected: Vec<u8> = (0..50u8).flat_map(|c| vec![c; 1000]).collect();
    for rank in 0..5 {
        assert_eq!(std::fs::read(root(dir.path(), rank).join("data/out")).unwrap(), expected, "host {rank}");
    }

    // A write at an offset no file can reach fails on every member; the posted failure is reported by
    // the next acknowledged operation, which those members skip, and then it is gone.
    group.post(FileOp::Pwrite { data: b"x".to_vec(), offset: u64::MAX - 1 }).unwrap();
    let Err(GroupError::Members(outcome)) = group.fsync() else { panic!("the posted failure is reported") };
    assert_eq!(outcome.failures().len(), 1);
    assert_eq!(outcome.failures()[0].status, MemberStatus::Failed(Errno(libc::EINVAL)));
    assert_eq!(outcome.failures()[0].hosts.to_string(), "host[0-4]");
    assert_eq!(group.fsync().unwrap().status_value().unwrap(), Some(0));
}

#[test]
fn operations_on_a_sub_group_reach_only_its_members_and_keep_the_others_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = start(dir.path(), 6, 2);
    let mut group =
        cluster.runtime().gopen("/data/f", OpenFlags::WRONLY | OpenFlags::CREAT | OpenFlags::TRUNC).unwrap();
    let odd = RangeSet::from_values([1, 3, 5]);
    let outcome = group.run_on(FileOp::Write { data: b"odd".to_vec() }, &odd).unwrap();
    assert_eq!(outcome.status_value().unwrap(), Some(9));
    group.post_on(FileOp::Write { data: b"!".to_vec() }, &RangeSet::from_values([5])).unwrap();
    group.run_on(FileOp::Write { data: b"even".to_vec() }, &RangeSet::from_values([0, 2, 4])).unwrap();
    let statuses = group.gstatus();
    assert_eq!(statuses[0], MemberStatus::Ok(4));
    assert_eq!(statuses[1], MemberStatus::Ok(3), "members outside the sub-group keep their last status");
    for rank in 0..6 {
        let content = std::fs::read(root(dir.path(), rank).join("data/f")).unwrap();
        let expected: &[u8] = match rank {
            5 => b"odd!",
            r if r % 2 == 1 => b"odd",
            _ => b"even",
        };
        assert_eq!(content, expected, "host {rank}");
    }
    assert!(matches!(group.run_on(FileOp::Close, &odd), Err(GroupError::Usage(_))));
}

#[test]
fn gopen_on_opens_only_on_the_chosen_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = start(dir.path(), 7, 2);
    let ranks = RangeSet::from_values([2, 6]);
    let group =
        cluster.runtime().gopen_on("/data/new", OpenFlags::WRONLY | OpenFlags::CREAT, 0o600, &ranks).unwrap();
    assert_eq!(group.gsize(), 2);
    let hosts: Vec<&str> = group.gfiles().iter().map(|m| m.host.as_str()).collect();
    assert_eq!(hosts, ["host2", "host6"]);
    assert_eq!(group.ranks_of(&group.all_members()), ranks);
    for rank in 0..7 {
        assert_eq!(root(dir.path(), rank).join("data/new").exists(), ranks.contains_value(rank as u64));
    }
}

#[test]
fn rename_replaces_the_real_name_in_one_step_and_unlink_removes_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = start(dir.path(), 3, 2);
    for rank in 0..3 {
        std::fs::write(root(dir.path(), rank).join("data/conf"), b"old").unwrap();
    }
    let mut temp = cluster
        .runtime()
        .gopen("/data/.conf.tmp", OpenFlags::WRONLY | OpenFlags::CREAT | OpenFlags::TRUNC)
        .unwrap();
    temp.write(b"new").unwrap();
    temp.rename(b"conf").unwrap();
    for rank in 0..3 {
        assert_eq!(std::fs::read(root(dir.path(), rank).join("data/conf")).unwrap(), b"new");
        assert!(!root(dir.path(), rank).join("data/.conf.tmp").exists());
    }
    // A name with a slash could leave the directory: refused on every member.
    let Err(GroupError::Members(outcome)) = temp.rename(b"../escape") else { panic!("refused") };
    assert_eq!(outcome.failures()[0].status, MemberStatus::Failed(Errno(libc::EINVAL)));
    // Renamed members are unlinked under their new name.
    temp.unlink().unwrap();
    for rank in 0..3 {
        assert!(!root(dir.path(), rank).join("data/conf").exists());
    }
}

#[test]
fn assemble_rebuilds_a_file_from_literals_and_ranges_of_each_hosts_old_version() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = start(dir.path(), 4, 2);
    for rank in 0..4 {
        std::fs::write(root(dir.path(), rank).join("data/old"), format!("host{rank}-0123456789")).unwrap();
    }
    let old = cluster.runtime().gopen("/data/old", OpenFlags::RDONLY).unwrap();
    let mut new = cluster
        .runtime()
        .gopen("/data/new", OpenFlags::WRONLY | OpenFlags::CREAT | OpenFlags::TRUNC)
        .unwrap();
    let pieces = vec![
        Piece::Copy { offset: 6, len: 4 },
        Piece::Data(b"+".to_vec()),
        Piece::Copy { offset: 0, len: 5 },
    ];
    let outcome = new.assemble(&old, pieces).unwrap();
    assert_eq!(outcome.status_value().unwrap(), Some(4 * 10));
    for rank in 0..4 {
        let content = std::fs::read(root(dir.path(), rank).join("data/new")).unwrap();
        assert_eq!(content, format!("0123+host{rank}").into_bytes(), "host {rank}");
    }
    // A range past the old version's end is an I/O error, not a short file.
    let Err(GroupError::Members(outcome)) = new.assemble(&old, vec![Piece::Copy { offset: 100, len: 1 }])
    else {
        panic!("a range past the end fails")
    };
    assert_eq!(outcome.failures()[0].status, MemberStatus::Failed(Errno(libc::EIO)));
}

#[test]
fn a_sub_group_still_reaches_its_members_after_a_host_before_them_went_missing() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..4 {
        std::fs::create_dir_all(root(dir.path(), rank).join("data")).unwrap();
    }
    // Host 2's file is a FIFO nobody reads: a big write blocks it for good.
    let fifo = std::ffi::CString::new(root(dir.path(), 2).join("data/f").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let cluster = Simulation {
        hosts: 4,
        host_root: format!("{}/{{rank}}", dir.path().display()),
        fanout: Fanout::Flat,
        timeout: Duration::from_secs(1),
        ..Default::default()
    }
    .start()
    .unwrap();
    let mut group = cluster.runtime().gopen("/data/f", OpenFlags::RDWR | OpenFlags::CREAT).unwrap();
    let Err(GroupError::Members(outcome)) = group.write(&vec![b'a'; 256 * 1024]) else {
        panic!("host2 hangs")
    };
    assert_eq!(outcome.missing().to_string(), "host2");
    group.run_on(FileOp::Write { data: b"b".to_vec() }, &RangeSet::from_values([3])).unwrap();
    let content = std::fs::read(root(dir.path(), 3).join("data/f")).unwrap();
    assert_eq!(content.len(), 256 * 1024 + 1);
    assert_eq!(std::fs::read(root(dir.path(), 1).join("data/f")).unwrap().len(), 256 * 1024);
}
