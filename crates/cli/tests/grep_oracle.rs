//! `canopy grep` against GNU grep -r (with -I, since canopy takes binary files as matching nothing,
//! and -E, since patterns are extended regular expressions): the same set of output lines and the
//! same exit status for every flag, on a tree with odd names, binary files, symlinks and a FIFO.

mod common;

use common::grep_trees::{config_tree, grep_tree};
use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Output;

fn grep_oracle(flags: &[&str], pattern: &str, root: &Path) -> Output {
    let mut cmd = gnu("grep");
    cmd.args(["-r", "-I"]);
    if !flags.contains(&"-F") {
        cmd.arg("-E");
    }
    cmd.args(flags).arg("--").arg(pattern).arg(root);
    run(cmd, None)
}

fn canopy_grep(flags: &[&str], pattern: &str, root: &Path) -> Output {
    let mut cmd = canopy();
    cmd.arg("grep").args(flags).arg("--").arg(pattern).arg(root);
    run(cmd, None)
}

#[track_caller]
fn assert_same_as_grep(flags: &[&str], pattern: &str, root: &Path) {
    let context = format!("grep {flags:?} {pattern:?}");
    let want = grep_oracle(flags, pattern, root);
    let got = canopy_grep(flags, pattern, root);
    assert_eq!(String::from_utf8_lossy(&got.stderr), "", "{context}");
    assert_eq!(got.status.code(), want.status.code(), "{context}: exit status");
    let sep = if flags.contains(&"-Z") || flags.contains(&"-0") { 0 } else { b'\n' };
    assert_same_records(&records(&got.stdout, sep), &records(&want.stdout, sep), &context);
}

#[test]
fn output_equals_grep_r_for_every_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let root = grep_tree(tmp.path());
    let cases: &[(&[&str], &str)] = &[
        (&[], "foo"),
        (&["-n"], "foo"),
        (&["-c"], "foo"),
        (&["-l"], "foo"),
        (&["-v"], "foo"),
        (&["-v", "-n"], "o"),
        (&["-w"], "foo"),
        (&["-i"], "foo"),
        (&["-i", "-w", "-n"], "FOO"),
        (&["-F"], "foo.bar"),
        (&["-F", "-c"], "o.b"),
        (&["-F", "-w"], "foo\nbar"),
        (&[], "fo+\\.bar|^alpha"),
        (&["-n"], "bar$"),
        (&["-c", "-v"], "foo"),
        (&["-l", "-v"], "foo"),
        (&[], "no such text anywhere"),
    ];
    for (flags, pattern) in cases {
        assert_same_as_grep(flags, pattern, &root);
    }
}

#[test]
fn null_separated_file_names_equal_grep_lz() {
    let tmp = tempfile::tempdir().unwrap();
    let root = grep_tree(tmp.path());
    let want = grep_oracle(&["-l", "-Z"], "foo", &root);
    let got = canopy_grep(&["-l", "-0"], "foo", &root);
    assert_eq!(got.status.code(), Some(0));
    assert_same_records(&records(&got.stdout, 0), &records(&want.stdout, 0), "-l -0");
    assert!(records(&got.stdout, 0).iter().any(|p| p.ends_with(b"new\nline")));
}

#[test]
fn globs_select_files_like_include_and_exclude() {
    let tmp = tempfile::tempdir().unwrap();
    let root = grep_tree(tmp.path());
    let want = run(
        {
            let mut c = gnu("grep");
            c.args(["-r", "-I", "-n", "--include=*.txt", "--exclude=f1*", "foo"]).arg(&root);
            c
        },
        None,
    );
    let got = canopy_grep(&["-n", "--glob", "*.txt", "--glob", "!f1*"], "foo", &root);
    assert_same_records(&records(&got.stdout, b'\n'), &records(&want.stdout, b'\n'), "--glob");
}

#[test]
fn files_past_path_max_are_searched() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("deep");
    deep_chain(&top, 25);
    let mut bottom = top.clone();
    for _ in 0..25 {
        bottom.push(OsStr::from_bytes(&[b'd'; 200]));
    }
    // Write through a relative descent: the full path is longer than PATH_MAX.
    let mut fd = rustix::fs::open(&top, rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty()).unwrap();
    for _ in 0..25 {
        fd = rustix::fs::openat(
            &fd,
            [b'd'; 200].as_slice(),
            rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
    }
    let file =
        rustix::fs::openat(&fd, "bottom.txt", rustix::fs::OFlags::WRONLY, rustix::fs::Mode::empty()).unwrap();
    rustix::io::write(&file, b"deep foo\n").unwrap();
    let got = canopy_grep(&[], "foo", &top);
    assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
    let mut want = bottom.join("bottom.txt").as_os_str().as_bytes().to_vec();
    want.extend_from_slice(b":deep foo\n");
    assert_eq!(got.stdout, want);
}

#[test]
fn unreadable_files_are_reported_and_the_status_is_two() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("t");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("open"), "foo\n").unwrap();
    std::fs::write(root.join("closed"), "foo\n").unwrap();
    std::fs::set_permissions(root.join("closed"), std::os::unix::fs::PermissionsExt::from_mode(0o000))
        .unwrap();
    std::fs::set_permissions(tmp.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cmd = if is_root() { as_nobody(env!("CARGO_BIN_EXE_canopy")) } else { canopy() };
    cmd.args(["grep", "foo"]).arg(&root);
    let got = run(cmd, None);
    assert_eq!(got.status.code(), Some(2));
    assert_eq!(got.stdout, format!("{}/open:foo\n", root.display()).into_bytes());
    assert_eq!(
        String::from_utf8_lossy(&got.stderr),
        format!("canopy grep: cannot read '{}/closed': Permission denied\n", root.display())
    );
    // A bad pattern is a usage error.
    let bad = canopy_grep(&[], "(", &root);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).starts_with("canopy grep: invalid pattern"));
}

#[test]
fn group_folds_identical_lines_under_the_files_holding_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = config_tree(tmp.path());
    let got = canopy_grep(&["--group"], "listen", &root);
    assert_eq!(got.status.code(), Some(0));
    let r = root.display();
    let rule = "-".repeat(15);
    let expected = format!(
        "{rule}\n{r}/node[01-40]/app.conf (40)\n{rule}\nlisten all\n\
         {rule}\n{r}/node[01-09,11-19,21-29,31-39]/app.conf (36)\n{rule}\nlisten 8080\n\
         {rule}\n{r}/node07/app.conf\n{rule}\nlisten debug\n\
         {rule}\n{r}/node[10,20,30,40]/app.conf (4)\n{rule}\nlisten 9090\n"
    );
    assert_eq!(String::from_utf8_lossy(&got.stdout), expected);
    // With -n only lines at the same number fold: node07's "listen all" is one line further down.
    let numbered = String::from_utf8(canopy_grep(&["--group", "-n"], "listen all", &root).stdout).unwrap();
    assert_eq!(
        numbered,
        format!(
            "{rule}\n{r}/node[01-06,08-40]/app.conf (39)\n{rule}\n4:listen all\n{rule}\n{r}/node07/app.conf\n{rule}\n5:listen all\n"
        )
    );
}

#[test]
fn group_json_holds_exactly_the_pairs_grep_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let root = grep_tree(tmp.path());
    for flags in [&["-n"][..], &["-i", "-w"]] {
        let mut args = vec!["--group", "--json"];
        args.extend_from_slice(flags);
        let got = canopy_grep(&args, "foo", &root);
        assert_eq!(got.status.code(), Some(0));
        let mut pairs = Vec::new();
        let mut keys = std::collections::HashSet::new();
        for line in got.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let record: serde_json::Value = serde_json::from_slice(line).unwrap();
            let text = decode(&record, "line");
            assert!(keys.insert((text.clone(), record["line_number"].as_u64())), "each line folds once");
            let paths = record["paths"].as_array().unwrap();
            assert_eq!(record["file_count"].as_u64(), Some(paths.len() as u64));
            for path in paths {
                let mut pair = decode(path, "path");
                pair.push(b':');
                if let Some(n) = record["line_number"].as_u64() {
                    pair.extend_from_slice(format!("{n}:").as_bytes());
                }
                pair.extend_from_slice(&text);
                pairs.push(pair);
            }
        }
        pairs.sort();
        // grep prints a line repeated in a file once per occurrence; folded, it is one pair.
        let mut want = records(&grep_oracle(flags, "foo", &root).stdout, b'\n');
        want.dedup();
        // Names with a newline split grep's records: compare the same way.
        let pairs = records(&pairs.join(&b'\n'), b'\n');
        let mut pairs = pairs;
        pairs.dedup();
        assert_same_records(&pairs, &want, &format!("--group --json {flags:?}"));
    }
}

/// The exact bytes of a JSON text field (`NAME`, or `NAME_base64` when not UTF-8).
fn decode(record: &serde_json::Value, name: &str) -> Vec<u8> {
    use base64::Engine;
    match record[format!("{name}_base64")].as_str() {
        Some(raw) => base64::engine::general_purpose::STANDARD.decode(raw).unwrap(),
        None => record[name].as_str().unwrap().as_bytes().to_vec(),
    }
}
