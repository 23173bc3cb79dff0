//! `canopy pgrep` on simulated hosts (threads, one root each) whose files differ in planned ways: exact
//! clush -b blocks and -L lines, strip rules merging hosts, grep's flags, a missing file, clush's exit
//! statuses. `pgrep_clush.rs` compares with clush itself on random hosts.

mod common;

use common::*;
use std::path::Path;
use std::process::Output;

/// Six hosts' /etc/app.conf: hosts 0-2 identical, 3 differs in a pid only, 4 in a setting, 5 has none.
fn hosts(dir: &Path) -> String {
    let files = [
        "listen 80\nworkers 4 # pid=11\nlog /var/log/app\n",
        "listen 80\nworkers 4 # pid=12\nlog /var/log/app\n",
        "listen 80\nworkers 4 # pid=13\nlog /var/log/app\n",
        "listen 80\nworkers 4 # pid=99\nlog /var/log/app\n",
        "listen 8080\nworkers 2 # pid=14\nLog /var/log/app\n",
    ];
    for rank in 0..6 {
        let etc = dir.join(format!("h/{rank}/etc"));
        std::fs::create_dir_all(&etc).unwrap();
        if let Some(text) = files.get(rank) {
            std::fs::write(etc.join("app.conf"), text).unwrap();
        }
    }
    format!("{}/h/{{rank}}", dir.display())
}

fn pgrep(root: &str, hosts: usize, args: &[&str]) -> Output {
    let mut c = canopy();
    c.arg("pgrep").args(args).args(["--hosts", &hosts.to_string(), "--host-root", root]);
    run(c, None)
}

fn text(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn identical_hosts_print_once_as_clush_b_blocks_and_strip_rules_merge_more() {
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path());
    let rule = "-".repeat(15);
    let out = text(&pgrep(&root, 5, &["workers", "/etc/app.conf"]));
    let block = |hosts: &str, lines: &str| format!("{rule}\n{hosts}\n{rule}\n{lines}");
    let want = [
        block("host0", "workers 4 # pid=11\n"),
        block("host1", "workers 4 # pid=12\n"),
        block("host2", "workers 4 # pid=13\n"),
        block("host3", "workers 4 # pid=99\n"),
        block("host4", "workers 2 # pid=14\n"),
    ]
    .concat();
    assert_eq!(out, (Some(0), want, String::new()));

    let out = text(&pgrep(&root, 5, &["--strip", r" # pid=\d+", "-i", "workers|log", "/etc/app.conf"]));
    let want = [
        block("host[0-3] (4)", "workers 4\nlog /var/log/app\n"),
        block("host4", "workers 2\nLog /var/log/app\n"),
    ]
    .concat();
    assert_eq!(out, (Some(0), want, String::new()));
}

#[test]
fn line_mode_counts_flags_missing_files_and_exit_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let root = hosts(dir.path());
    let out = text(&pgrep(&root, 5, &["-L", "-w", "-F", "listen 80", "/etc/app.conf"]));
    assert_eq!(out, (Some(0), "host[0-3]: listen 80\n".into(), String::new()));

    let out = text(&pgrep(&root, 5, &["-c", "-v", "-i", "LOG", "/etc/app.conf"]));
    assert_eq!(out, (Some(0), format!("{0}\nhost[0-4] (5)\n{0}\n2\n", "-".repeat(15)), String::new()));

    // clush's statuses: 0 unless -S asks for the largest of the hosts' grep statuses.
    let out = text(&pgrep(&root, 5, &["nowhere", "/etc/app.conf"]));
    assert_eq!(out, (Some(0), String::new(), String::new()));
    let out = text(&pgrep(&root, 5, &["-S", "nowhere", "/etc/app.conf"]));
    assert_eq!(out, (Some(1), String::new(), String::new()));
    let out = text(&pgrep(&root, 5, &["-S", "listen", "/etc/app.conf"]));
    assert_eq!(out.0, Some(0));
    let out = text(&pgrep(&root, 5, &["-S", "listen 80$", "/etc/app.conf"]));
    assert_eq!(out.0, Some(1), "host4 selected nothing");

    // Host 5 has no file: reported, the others still printed; -S: grep's 2.
    let missing = "canopy pgrep: host5: /etc/app.conf: cannot open: No such file or directory\n";
    let out = text(&pgrep(&root, 6, &["-L", "listen 8080", "/etc/app.conf"]));
    assert_eq!(out, (Some(0), "host4: listen 8080\n".into(), missing.into()));
    let out = text(&pgrep(&root, 6, &["-S", "-L", "listen 8080", "/etc/app.conf"]));
    assert_eq!(out, (Some(2), "host4: listen 8080\n".into(), missing.into()));

    let out = text(&pgrep(&root, 1, &["(", "/etc/app.conf"]));
    assert_eq!(out.0, Some(2));
    assert!(out.2.starts_with("canopy pgrep: bad pattern \"(\""), "{}", out.2);
}
