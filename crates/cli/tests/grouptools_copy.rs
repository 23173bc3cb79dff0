//! `canopy pcp` and `canopy psync` as a user runs them, on simulated hosts (threads, one root each): every
//! host ends with a byte-identical copy, failures are grouped by host set, a hung host is reported missing.

mod common;

use common::host_roots::{host_file, hosts, random};
use common::*;
use std::path::Path;
use std::process::Output;

fn tool(args: &[&str]) -> Output {
    let mut c = canopy();
    c.args(args);
    run(c, None)
}

/// Every entry of every host's /data: no temporary file may be left behind.
fn data_entries(dir: &Path, count: usize) -> Vec<String> {
    let mut names = Vec::new();
    for rank in 0..count {
        if let Ok(entries) = std::fs::read_dir(host_file(dir, rank, "/data")) {
            for entry in entries {
                names.push(format!("{rank}/{}", entry.unwrap().file_name().to_string_lossy()));
            }
        }
    }
    names.sort();
    names
}

#[test]
fn pcp_gives_every_host_a_byte_identical_copy_and_groups_the_failures() {
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path(), 8, &[3, 5]);
    let source = dir.path().join("src.bin");
    std::fs::write(&source, random(1, 3 * 1024 * 1024 + 17)).unwrap();
    // An old version on one host is replaced.
    std::fs::write(host_file(dir.path(), 6, "/data/src.bin"), b"old").unwrap();
    let out = tool(&[
        "pcp",
        source.to_str().unwrap(),
        "/data/",
        "--hosts",
        "8",
        "--host-root",
        &root,
        "--fanout",
        "2",
        "--chunk-size",
        "64K",
        "--window",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "canopy pcp: host[3,5]: /data/src.bin: cannot create: No such file or directory\n"
    );
    let expected = std::fs::read(&source).unwrap();
    for rank in [0, 1, 2, 4, 6, 7] {
        assert_eq!(
            std::fs::read(host_file(dir.path(), rank, "/data/src.bin")).unwrap(),
            expected,
            "host {rank}"
        );
    }
    let want: Vec<String> = [0, 1, 2, 4, 6, 7].iter().map(|r| format!("{r}/src.bin")).collect();
    assert_eq!(data_entries(dir.path(), 8), want);
    // The summary names what went where; -v also the source, as clush --copy -v does.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("pcp: 3.0 MiB to /data/src.bin on host[0-2,4,6-7] (6 hosts) in "), "{stdout}");
    let verbose =
        tool(&["pcp", "-v", "-q", source.to_str().unwrap(), "/data/", "--hosts", "8", "--host-root", &root]);
    assert_eq!(verbose.status.code(), Some(2), "-v and -q conflict");
    let verbose =
        tool(&["pcp", "-v", source.to_str().unwrap(), "/data/", "--hosts", "3", "--host-root", &root]);
    let stdout = String::from_utf8_lossy(&verbose.stdout);
    assert_eq!(stdout.lines().next(), Some(&*format!("`{}' -> host[0-2]:`/data/src.bin'", source.display())));
    assert!(
        stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("pcp: 3.0 MiB to /data/src.bin on host[0-2] (3 hosts) in ")
    );
}

#[test]
fn pcp_to_sixteen_hosts_with_a_json_report_and_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path(), 16, &[]);
    for (name, content) in [("big", random(2, 1_000_003)), ("empty", Vec::new())] {
        let source = dir.path().join(name);
        std::fs::write(&source, &content).unwrap();
        let dest = format!("/data/{name}.copy");
        let out = tool(&[
            "pcp",
            source.to_str().unwrap(),
            &dest,
            "--hosts",
            "16",
            "--host-root",
            &root,
            "--fanout",
            "3",
            "--chunk-size",
            "100K",
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["copied"], "host[0-15]");
        assert_eq!(report["bytes"], content.len());
        for rank in 0..16 {
            assert_eq!(std::fs::read(host_file(dir.path(), rank, &dest)).unwrap(), content, "host {rank}");
        }
    }
    assert_eq!(data_entries(dir.path(), 16).len(), 32, "{:?}", data_entries(dir.path(), 16));
}

#[test]
fn pcp_reports_a_hung_host_missing_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path(), 4, &[]);
    let source = dir.path().join("src.bin");
    std::fs::write(&source, random(3, 512 * 1024)).unwrap();
    // Host 2's temporary file is a FIFO nobody reads: its writes block once the pipe is full.
    let temp = host_file(dir.path(), 2, &format!("/data/{}", temp_name(b"src.bin")));
    let c_path = std::ffi::CString::new(temp.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let out = tool(&[
        "pcp",
        source.to_str().unwrap(),
        "/data/src.bin",
        "--hosts",
        "4",
        "--host-root",
        &root,
        "--timeout",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("canopy pcp: host2: /data/src.bin: "), "{stderr}");
    assert!(stderr.contains("did not answer"), "{stderr}");
    for rank in [0, 1, 3] {
        assert_eq!(
            std::fs::read(host_file(dir.path(), rank, "/data/src.bin")).expect(&stderr),
            std::fs::read(&source).unwrap()
        );
    }
}

/// The temporary name canopy uses for `name` (`.canopy-tmp-` and the xxh3 of the name).
fn temp_name(name: &[u8]) -> String {
    format!(".canopy-tmp-{:016x}", xxhash_rust::xxh3::xxh3_64(name))
}

#[test]
fn psync_brings_different_stale_versions_to_byte_identical_copies_sending_little() {
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path(), 9, &[8]);
    let source = random(4, 2_000_000);
    let src_path = dir.path().join("new");
    std::fs::write(&src_path, &source).unwrap();
    let mut one_percent = source.clone();
    for i in (0..source.len()).step_by(source.len() / 20) {
        one_percent[i..i + 1000].fill(0); // 20 edits of 1000 bytes: 1 % of the file
    }
    let versions: Vec<(usize, Option<Vec<u8>>)> = vec![
        (0, Some(source.clone())),
        (1, Some(source.clone())),
        (2, Some(one_percent.clone())),
        (3, Some(one_percent.clone())),
        (4, Some(source[..1_500_000].to_vec())),
        (5, Some([source.clone(), random(5, 4000)].concat())),
        (6, Some(Vec::new())),
        (7, None),
    ];
    for (rank, version) in &versions {
        if let Some(content) = version {
            std::fs::write(host_file(dir.path(), *rank, "/data/f"), content).unwrap();
        }
    }
    let out = tool(&[
        "psync",
        src_path.to_str().unwrap(),
        "/data/f",
        "--hosts",
        "9",
        "--host-root",
        &root,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "host8 has no /data");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "canopy psync: host8: /data/f: cannot create: No such file or directory\n"
    );
    for rank in 0..8 {
        assert_eq!(std::fs::read(host_file(dir.path(), rank, "/data/f")).unwrap(), source, "host {rank}");
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    let row = |hosts: &str| {
        rows.iter().find(|r| r["hosts"] == hosts).unwrap_or_else(|| panic!("{hosts}: {report}"))
    };
    assert_eq!(row("host[0-1]")["up_to_date"], true);
    let changed = row("host[2-3]");
    let sent = changed["new"].as_u64().unwrap() + changed["matches"].as_u64().unwrap();
    assert!(sent < source.len() as u64 / 20, "a 1 % change sent {sent} bytes: {changed}");
    assert!(changed["new"].as_u64().unwrap() >= 20_000, "the changed bytes themselves travel: {changed}");
    // Host 6's empty copy and host 7's missing one are the same sub-group: everything is new.
    assert_eq!(row("host[6-7]")["new"], source.len());
    assert_eq!(rows.len(), 5, "{report}");
    assert_eq!(data_entries(dir.path(), 9).len(), 8);

    // A second run finds every copy up to date and sends nothing: one summary line, with -v the table first.
    let again = tool(&["psync", src_path.to_str().unwrap(), "/data/f", "--hosts", "8", "--host-root", &root]);
    assert_eq!(again.status.code(), Some(0));
    let text = String::from_utf8_lossy(&again.stdout);
    let summary = "psync: /data/f on host[0-7] (8 hosts): 0 sub-groups updated, 1 up to date; sent 0 B new and \
                   0 B of block references for 0 B of files (0.0 %) in ";
    assert!(text.starts_with(summary) && text.lines().count() == 1, "{text}");
    let verbose =
        tool(&["psync", "-v", src_path.to_str().unwrap(), "/data/f", "--hosts", "8", "--host-root", &root]);
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(text.lines().nth(1).unwrap().starts_with("host[0-7] (8) "), "{text}");
    assert!(text.contains("same") && text.lines().nth(2).unwrap().starts_with(summary), "{text}");
    let quiet =
        tool(&["psync", "-q", src_path.to_str().unwrap(), "/data/f", "--hosts", "8", "--host-root", &root]);
    assert_eq!((quiet.status.code(), quiet.stdout.len()), (Some(0), 0));
}
