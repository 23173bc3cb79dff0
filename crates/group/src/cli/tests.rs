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
    let code = run_with(&cli.args, &canopy_dist::Cluster::local(), &mut out, &mut err);
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
fn failures_go_to_stderr_and_set_the_exit_status() {
    let hosts = Hosts::new();
    for rank in [0, 1, 3, 4] {
        hosts.write(rank, "/etc/motd", "hi\n");
    }
    let root = hosts.root();
    let argv = ["read", "/etc/motd", "--hosts", "6", "--host-root", &root];
    let (code, out, err) = canopy_group(&argv);
    assert_eq!(code, ExitCode::from(1));
    assert_eq!(out, "");
    assert_eq!(err, "canopy group: host[2,5]:/etc/motd: No such file or directory\n");
    let (code, out, err) = canopy_group(&[&argv[..], &["--best-effort"]].concat());
    assert_eq!(code, ExitCode::from(1));
    assert_eq!(out, format!("{RULE}\nhost[0-1,3-4] (4)\n{RULE}\nhi\n"));
    assert_eq!(err, "canopy group: host[2,5]:/etc/motd: No such file or directory\n");
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
    let (code, out, _) =
        canopy_group(&["read", "/etc/motd", "--hosts", "4", "--host-root", &root, "--best-effort", "--json"]);
    assert_eq!(code, ExitCode::from(1));
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
    let argv =
        ["read", "/run/state", "--hosts", "4", "--host-root", &root, "--timeout", "1", "--best-effort"];
    let (code, out, err) = canopy_group(&argv);
    assert_eq!(code, ExitCode::from(1));
    assert_eq!(out, format!("{RULE}\nhost[0-1,3] (3)\n{RULE}\nup\n"));
    assert_eq!(err, "canopy group: no answer from rank2 within 1s\n");
    assert!(start.elapsed() < std::time::Duration::from_secs(3), "{:?}", start.elapsed());
    // Let the blocked host thread go.
    drop(std::fs::OpenOptions::new().write(true).open(&fifo).unwrap());
}
