use super::*;
use clap::Parser;
use std::path::PathBuf;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: GroupArgs,
}

/// Runs `canopy group ARGS...` in-process: (exit code, stdout, stderr).
fn canopy_group(argv: &[&str]) -> (ExitCode, String, String) {
    let cli = Cli::try_parse_from(std::iter::once("group").chain(argv.iter().copied())).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_with(&cli.args, &canopy_transport::World::local(), &mut out, &mut err);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

struct Hosts(tempfile::TempDir);

impl Hosts {
    fn new() -> Hosts {
        Hosts(tempfile::tempdir().unwrap())
    }

    fn write(&self, rank: usize, path: &str, content: &str) {
        let path = self.path(rank, path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn path(&self, rank: usize, path: &str) -> PathBuf {
        self.0.path().join(rank.to_string()).join(path.trim_start_matches('/'))
    }

    fn root(&self) -> String {
        format!("{}/{{rank}}", self.0.path().display())
    }
}

const RULE: &str = "---------------";

#[test]
fn read_prints_identical_contents_once_under_their_hosts() {
    let hosts = Hosts::new();
    for (rank, text) in ["a\n", "b\n", "a\n", "a\n", "b\n", "c"].iter().enumerate() {
        hosts.write(rank, "/etc/motd", text);
    }
    let root = hosts.root();
    let (code, out, err) = canopy_group(&["read", "/etc/motd", "--hosts", "6", "--host-root", &root]);
    assert_eq!((code, err.as_str()), (ExitCode::SUCCESS, ""));
    let expected = format!(
        "{RULE}\nhost[0,2-3] (3)\n{RULE}\na\n{RULE}\nhost[1,4] (2)\n{RULE}\nb\n{RULE}\nhost5\n{RULE}\nc\n"
    );
    assert_eq!(out, expected);
    // Every tree shape prints the same.
    for fanout in ["1", "2", "8", "flat"] {
        let (_, again, _) =
            canopy_group(&["read", "/etc/motd", "--hosts", "6", "--host-root", &root, "--fanout", fanout]);
        assert_eq!(again, expected, "fan-out {fanout}");
    }
    let (_, again, _) =
        canopy_group(&["read", "/etc/motd", "--hosts", "6", "--host-root", &root, "--ranks-per-node", "4"]);
    assert_eq!(again, expected);
}

#[test]
fn concat_prints_one_block_per_member_and_names_follow_the_template() {
    let hosts = Hosts::new();
    for rank in 0..3 {
        hosts.write(rank, "/etc/motd", "same\n");
    }
    let root = hosts.root();
    let argv = [
        "read",
        "/etc/motd",
        "--hosts",
        "3",
        "--host-root",
        &root,
        "--agg",
        "concat",
        "--host-name",
        "n{rank:02}",
    ];
    let (code, out, _) = canopy_group(&argv);
    assert_eq!(code, ExitCode::SUCCESS);
    assert_eq!(
        out,
        format!("{RULE}\nn00\n{RULE}\nsame\n{RULE}\nn01\n{RULE}\nsame\n{RULE}\nn02\n{RULE}\nsame\n")
    );
}

#[test]
fn directory_groups_are_labelled_with_hosts_and_paths() {
    let hosts = Hosts::new();
    for rank in 0..4 {
        hosts.write(rank, "/etc/conf.d/a.conf", "alpha\n");
        hosts.write(rank, "/etc/conf.d/b.conf", if rank == 2 { "beta2\n" } else { "beta\n" });
    }
    let root = hosts.root();
    let (code, out, _) = canopy_group(&["checksum", "/etc/conf.d", "--hosts", "4", "--host-root", &root]);
    assert_eq!(code, ExitCode::SUCCESS);
    let digest = |text: &str| {
        use sha2::Digest as _;
        sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let expected = format!(
        "{RULE}\nhost[0-3]:/etc/conf.d/a.conf (4)\n{RULE}\n{}\n\
         {RULE}\nhost[0-1,3]:/etc/conf.d/b.conf (3)\n{RULE}\n{}\n\
         {RULE}\nhost2:/etc/conf.d/b.conf\n{RULE}\n{}\n",
        digest("alpha\n"),
        digest("beta\n"),
        digest("beta2\n")
    );
    assert_eq!(out, expected);
}

#[test]
fn numeric_aggregations_print_columns_and_who_hit_the_extremes() {
    let hosts = Hosts::new();
    let loads = ["0.50 0.40 0.30 1/200 100\n", "1.50 0.40 0.10 2/210 200\n", "0.25 0.90 0.30 1/190 300\n"];
    for (rank, load) in loads.iter().enumerate() {
        hosts.write(rank, "/proc/loadavg", load);
    }
    let root = hosts.root();
    let base = ["read", "/proc/loadavg", "--hosts", "3", "--host-root", &root, "--agg"];
    let run = |agg: &str| canopy_group(&[&base[..], &[agg]].concat()).1;
    assert_eq!(
        run("average"),
        format!("{RULE}\nhost[0-2] (3)\n{RULE}\naverage: 0.75 0.566666667 0.233333333 - 200\n")
    );
    assert_eq!(run("sum"), format!("{RULE}\nhost[0-2] (3)\n{RULE}\nsum: 2.25 1.7 0.7 - 600\n"));
    assert_eq!(
        run("max"),
        format!(
            "{RULE}\nhost[0-2] (3)\n{RULE}\nmax field 1: 1.5 at host1\nmax field 2: 0.9 at host2\n\
             max field 3: 0.3 at host[0,2]\nmax field 5: 300 at host2\n"
        )
    );
}

#[test]
fn stat_groups_hosts_by_metadata() {
    let hosts = Hosts::new();
    for rank in 0..3 {
        hosts.write(rank, "/etc/passwd", if rank == 1 { "longer content\n" } else { "short\n" });
    }
    let root = hosts.root();
    let (code, out, _) =
        canopy_group(&["stat", "/etc/passwd", "--hosts", "3", "--host-root", &root, "--agg", "max"]);
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(out.contains("max size: 15 at host1\n"), "{out}");
    assert!(out.contains("max uid: 0 at host[0-2]\n"), "{out}");
}

#[test]
fn failures_go_to_stderr_after_the_others_results_and_exit_codes_are_clushs() {
    let hosts = Hosts::new();
    for rank in [0, 1, 3, 4] {
        hosts.write(rank, "/etc/motd", "hi\n");
    }
    let root = hosts.root();
    let argv = ["read", "/etc/motd", "--hosts", "6", "--host-root", &root];
    let failure = "canopy group: host[2,5]:/etc/motd: No such file or directory\n";
    let (code, out, err) = canopy_group(&argv);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (ExitCode::SUCCESS, &*format!("{RULE}\nhost[0-1,3-4] (4)\n{RULE}\nhi\n"), failure)
    );
    // clush -S: the largest status, cat's 1 for a file that is not there.
    let (code, out_s, _) = canopy_group(&[&argv[..], &["-S"]].concat());
    assert_eq!((code, out_s), (ExitCode::from(1), out));
    // All or nothing.
    let (code, out, err) = canopy_group(&[&argv[..], &["--strict"]].concat());
    assert_eq!((code, out.as_str(), err.as_str()), (ExitCode::from(1), "", failure));
    let (code, _, err) = canopy_group(&["read", "/nowhere", "--hosts", "2", "--host-root", &root]);
    assert_eq!(
        (code, err.as_str()),
        (ExitCode::SUCCESS, "canopy group: host[0-1]:/nowhere: No such file or directory\n")
    );
}

#[test]
fn blocks_come_in_clush_order_and_a_final_newline_or_empty_output_is_as_clush_sees_it() {
    let hosts = Hosts::new();
    // host0 and host1 differ only in the final newline; host2 is empty; host10's set comes first as a
    // string ("host10" < "host3"), host3 and host11 share a text.
    let texts = ["x\n", "x", "", "y\n\n", "z", "z", "z", "z", "z", "w\n", "v\n", "y\n\n"];
    for (rank, text) in texts.iter().enumerate() {
        hosts.write(rank, "/etc/motd", text);
    }
    let root = hosts.root();
    let (code, out, err) = canopy_group(&["read", "/etc/motd", "--hosts", "12", "--host-root", &root]);
    assert_eq!((code, err.as_str()), (ExitCode::SUCCESS, ""));
    let block = |hosts: &str, text: &str| format!("{RULE}\n{hosts}\n{RULE}\n{text}");
    let expected = [
        block("host[4-8] (5)", "z\n"),
        block("host[0-1] (2)", "x\n"),
        block("host[3,11] (2)", "y\n\n"),
        block("host10", "v\n"),
        block("host9", "w\n"),
    ]
    .concat();
    assert_eq!(out, expected);
}

#[test]
fn stat_groups_by_what_ls_shows_and_prints_it_that_way() {
    let hosts = Hosts::new();
    for rank in 0..4 {
        hosts.write(rank, "/etc/passwd", if rank == 3 { "longer\n" } else { "short\n" });
        let path = hosts.path(rank, "/etc/passwd");
        // Same second, different nanoseconds: one class; host2 has other contents of the same size.
        let nanos = [1, 500_000_000, 999_999_999, 2][rank];
        let time = rustix::fs::Timespec { tv_sec: 1_700_000_000, tv_nsec: nanos };
        let times = rustix::fs::Timestamps { last_access: time, last_modification: time };
        rustix::fs::utimensat(rustix::fs::CWD, &path, &times, rustix::fs::AtFlags::empty()).unwrap();
    }
    hosts.write(2, "/etc/passwd", "SHORT\n");
    let time = rustix::fs::Timespec { tv_sec: 1_700_000_000, tv_nsec: 7 };
    let times = rustix::fs::Timestamps { last_access: time, last_modification: time };
    rustix::fs::utimensat(
        rustix::fs::CWD,
        hosts.path(2, "/etc/passwd"),
        &times,
        rustix::fs::AtFlags::empty(),
    )
    .unwrap();
    let root = hosts.root();
    let when = String::from_utf8(canopy_expr::listing::strftime(
        &canopy_expr::listing::local_tm(1_700_000_000).unwrap(),
        "%Y-%m-%d %H:%M:%S",
    ))
    .unwrap();
    let owner = {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(hosts.path(0, "/etc/passwd")).unwrap();
        let name = |n: Option<Vec<u8>>| String::from_utf8(n.unwrap()).unwrap();
        use canopy_util::owners::{group_name, user_name};
        format!("{} {}", name(user_name(meta.uid())), name(group_name(meta.gid())))
    };
    let argv = ["stat", "/etc/passwd", "--hosts", "4", "--host-root", &root];
    let (code, out, err) = canopy_group(&argv);
    assert_eq!((code, err.as_str()), (ExitCode::SUCCESS, ""));
    assert_eq!(
        out,
        format!(
            "{RULE}\nhost[0-2] (3)\n{RULE}\n-rw-r--r-- {owner} 6 {when}\n\
             {RULE}\nhost3\n{RULE}\n-rw-r--r-- {owner} 7 {when}\n"
        )
    );
    let (_, out, _) = canopy_group(&[&argv[..], &["--checksum"]].concat());
    let digest = |text: &str| {
        use sha2::Digest as _;
        sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    assert_eq!(
        out,
        format!(
            "{RULE}\nhost[0-1] (2)\n{RULE}\n-rw-r--r-- {owner} 6 {when} sha256:{}\n\
             {RULE}\nhost2\n{RULE}\n-rw-r--r-- {owner} 6 {when} sha256:{}\n\
             {RULE}\nhost3\n{RULE}\n-rw-r--r-- {owner} 7 {when} sha256:{}\n",
            digest("short\n"),
            digest("SHORT\n"),
            digest("longer\n")
        )
    );
}

#[test]
fn json_output_carries_results_failures_and_status() {
    let hosts = Hosts::new();
    for rank in 0..4 {
        if rank != 1 {
            hosts.write(rank, "/etc/motd", if rank == 3 { "other\n" } else { "hi\n" });
        }
    }
    let root = hosts.root();
    let (code, out, _) = canopy_group(&["read", "/etc/motd", "--hosts", "4", "--host-root", &root, "--json"]);
    assert_eq!(code, ExitCode::SUCCESS);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["members"], 3);
    assert_eq!(doc["status"], 12); // 3 + 3 + 6 bytes
    assert_eq!(doc["hosts"], "host[0,2-3]");
    assert_eq!(doc["result"][0]["hosts"], "host[0,2]");
    assert_eq!(doc["result"][0]["members"], "0-1");
    assert_eq!(doc["result"][0]["value"]["text"], "hi\n");
    assert_eq!(doc["result"][1]["value"]["text"], "other\n");
    assert_eq!(doc["failures"][0]["stage"], "open");
    assert_eq!(doc["failures"][0]["hosts"], "host1");
    assert_eq!(doc["failures"][0]["errno"], libc::ENOENT);
}

#[test]
fn usage_errors_exit_with_2() {
    let hosts = Hosts::new();
    hosts.write(0, "/f", "x");
    let root = hosts.root();
    for (argv, message) in [
        (vec!["read", "/f", "--host-root", &root, "--agg", "median"], "unknown aggregation \"median\""),
        (vec!["checksum", "/f", "--host-root", &root, "--agg", "concat"], "checksum aggregates by checksum"),
        (vec!["read", "/f", "--host-root", "/x/{rnk}"], "unknown placeholder {rnk}"),
        (vec!["read", "/f", "--agg", "/nonexistent/lib.so:f"], "cannot load aggregation library"),
        (vec!["read", "/f", "--timeout", "0"], "invalid --timeout"),
        (vec!["read", "/f", "--hosts", "0"], "at least one host"),
        (vec!["read", "/f", "--checksum"], "--checksum adds the contents to stat"),
        (
            vec!["stat", "/f", "--hosts", "n[1-2]", "--host-name", "x{rank}"],
            "--hosts names the hosts already",
        ),
    ] {
        let (code, _, err) = canopy_group(&argv);
        assert_eq!(code, ExitCode::from(2), "{argv:?}");
        assert!(err.contains(message), "{argv:?}: {err}");
    }
}

#[test]
fn a_silent_host_is_reported_within_the_timeout() {
    let hosts = Hosts::new();
    for rank in [0, 1, 3] {
        hosts.write(rank, "/run/state", "up\n");
    }
    let fifo = hosts.path(2, "/run/state");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    let root = hosts.root();
    let start = std::time::Instant::now();
    let argv = ["read", "/run/state", "--hosts", "4", "--host-root", &root, "--timeout", "1", "-S"];
    let (code, out, err) = canopy_group(&argv);
    // clush -S: 255 for a host that timed out.
    assert_eq!(code, ExitCode::from(255));
    assert_eq!(out, format!("{RULE}\nhost[0-1,3] (3)\n{RULE}\nup\n"));
    assert_eq!(err, "canopy group: no answer from rank2 within 1s\n");
    assert!(start.elapsed() < std::time::Duration::from_secs(3), "{:?}", start.elapsed());
    // Let the blocked host thread go.
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
}
