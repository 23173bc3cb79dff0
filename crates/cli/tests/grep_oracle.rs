//! `canopy grep` against GNU grep with the same argv: on a tree with odd names, binary files,
//! symlinks and a FIFO (`-r`, lines compared as sets: files are searched in parallel; with
//! context, groups compared as sets), and on standard input byte for byte — every flag of grep's
//! that people type (-e -f -E -F -G -P -i -y -w -x -v -c -l -L -n -H -h -o -q -s -m -A -B -C
//! --color -a -I -z -Z --include --exclude --exclude-dir --label --group-separator), basic and
//! extended syntax with GNU's quirks and errors, exit statuses, messages, and binary files in the
//! C and UTF-8 locales.

mod common;

use common::grep_trees::{config_tree, grep_tree};
use common::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Output;

fn grep_with(program: std::process::Command, args: &[&[u8]], stdin: Option<&[u8]>, locale: &str) -> Output {
    let mut cmd = program;
    cmd.env("LC_ALL", locale).args(args.iter().map(|a| OsStr::from_bytes(a)));
    run(cmd, stdin)
}

fn both(args: &[&[u8]], stdin: Option<&[u8]>, locale: &str) -> (Output, Output) {
    let want = grep_with(gnu("grep"), args, stdin, locale);
    let mut ours = canopy();
    ours.arg("grep");
    let got = grep_with(ours, args, stdin, locale);
    (want, got)
}

fn shown(args: &[&[u8]]) -> String {
    format!("grep {:?}", args.iter().map(|a| String::from_utf8_lossy(a)).collect::<Vec<_>>())
}

/// stderr with the program name taken out of each line.
fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).replace("canopy grep: ", "grep: ")
}

/// The same exit status, stdout byte for byte, the same messages (standard input: one input, one
/// order).
#[track_caller]
fn same_on_input(input: &[u8], args: &[&[u8]], locale: &str) {
    let (want, got) = both(args, Some(input), locale);
    let context = format!("{} on {:?} ({locale})", shown(args), String::from_utf8_lossy(input));
    assert_eq!(
        got.status.code(),
        want.status.code(),
        "{context}: exit status; ours said {}",
        stderr_of(&got)
    );
    assert_eq!(String::from_utf8_lossy(&got.stdout), String::from_utf8_lossy(&want.stdout), "{context}");
    assert_eq!(got.stdout, want.stdout, "{context}: bytes");
    assert_eq!(stderr_of(&got), stderr_of(&want), "{context}: messages");
}

/// Output split into context groups (at `--` lines), each group's lines kept in order, the groups
/// sorted: what stays the same whatever order the files are searched in.
fn groups(out: &[u8], sep: u8) -> Vec<Vec<u8>> {
    let mut groups: Vec<Vec<u8>> = Vec::new();
    let mut current = Vec::new();
    for line in out.split_inclusive(|&b| b == sep) {
        if line == b"--\n" || line == b"\x1b[36m\x1b[K--\x1b[m\x1b[K\n" {
            groups.push(std::mem::take(&mut current));
        } else {
            current.extend_from_slice(line);
        }
    }
    groups.push(current);
    groups.retain(|g| !g.is_empty());
    // Files' groups are separated too; a file's consecutive groups can come out in any order
    // relative to other files', so compare lines within groups as they are, groups as a set.
    groups.sort();
    groups
}

/// The same exit status, the same lines (or groups of context) and the same messages, in any
/// order, on the tree at `root` (searched recursively from the current directory `cwd`).
#[track_caller]
fn same_on_tree(cwd: &Path, args: &[&[u8]]) {
    let run_in = |program: std::process::Command| {
        let mut cmd = program;
        cmd.current_dir(cwd);
        grep_with(cmd, args, None, "C")
    };
    let want = run_in(gnu("grep"));
    let mut ours = canopy();
    ours.arg("grep");
    let got = run_in(ours);
    let context = shown(args);
    assert_eq!(
        got.status.code(),
        want.status.code(),
        "{context}: exit status; ours said {}",
        stderr_of(&got)
    );
    // A short option, alone or in a cluster (`-rz`).
    let short = |c: u8| args.iter().any(|a| a.starts_with(b"-") && !a.starts_with(b"--") && a.contains(&c));
    let nul = short(b'z') || short(b'Z');
    let sep = if short(b'z') { 0 } else { b'\n' };
    let context_given =
        args.iter().any(|a| a.starts_with(b"-A") || a.starts_with(b"-B") || a.starts_with(b"-C"));
    if context_given {
        assert_eq!(groups(&got.stdout, sep), groups(&want.stdout, sep), "{context}: groups");
    } else if nul {
        assert_same_records(&records(&got.stdout, 0), &records(&want.stdout, 0), &context);
    } else {
        assert_same_records(&records(&got.stdout, sep), &records(&want.stdout, sep), &context);
    }
    let sorted = |text: String| {
        let mut v: Vec<String> = text.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(stderr_of(&got)), sorted(stderr_of(&want)), "{context}: messages");
}

#[test]
fn recursive_searches_equal_gnu_grep() {
    let tmp = tempfile::tempdir().unwrap();
    grep_tree(tmp.path());
    std::fs::write(tmp.path().join("patterns"), b"foo\\.bar\n^alpha\nbaz$\n").unwrap();
    std::fs::write(tmp.path().join("empty-patterns"), b"").unwrap();
    let cases: &[&[&[u8]]] = &[
        &[b"-r", b"foo", b"tree"],
        &[b"-rn", b"foo", b"tree"],
        &[b"-rc", b"foo", b"tree"],
        &[b"-rl", b"foo", b"tree"],
        &[b"-rL", b"foo", b"tree"],
        &[b"-rv", b"foo", b"tree"],
        &[b"-rvn", b"o", b"tree"],
        &[b"-rw", b"foo", b"tree"],
        &[b"-ri", b"foo", b"tree"],
        &[b"-ry", b"FOO", b"tree"],
        &[b"-riwn", b"FOO", b"tree"],
        &[b"-rx", b"foo", b"tree"],
        &[b"-rF", b"foo.bar", b"tree"],
        &[b"-rFc", b"o.b", b"tree"],
        &[b"-rFw", b"foo\nbar", b"tree"],
        &[b"-rE", b"fo+\\.bar|^alpha", b"tree"],
        &[b"-r", b"fo\\+\\.bar\\|^alpha", b"tree"],
        &[b"-rG", b"\\(o\\)\\1", b"tree"],
        &[b"-rP", b"fo(?=o)", b"tree"],
        &[b"-rno", b"fo*", b"tree"],
        &[b"-rh", b"foo", b"tree"],
        &[b"-rH", b"bar", b"tree/sub/target"],
        &[b"-r", b"bar", b"tree/sub/target"],
        &[b"-rlZ", b"foo", b"tree"],
        &[b"-r", b"-e", b"foo", b"-e", b"beta", b"tree"],
        &[b"-r", b"-f", b"patterns", b"tree"],
        &[b"-r", b"-f", b"empty-patterns", b"tree"],
        &[b"-rv", b"-f", b"empty-patterns", b"tree/sub"],
        &[b"-rm1", b"foo", b"tree"],
        &[b"-rc", b"-m2", b"foo", b"tree"],
        &[b"-r", b"-A1", b"foo", b"tree"],
        &[b"-rn", b"-B2", b"bar", b"tree"],
        &[b"-r", b"-C1", b"baz", b"tree"],
        &[b"-rn", b"-C1", b"-m1", b"foo", b"tree"],
        &[b"-rq", b"foo", b"tree"],
        &[b"-rq", b"no such text", b"tree"],
        &[b"-r", b"foo", b"tree/sub", b"missing"],
        &[b"-rs", b"foo", b"tree/sub", b"missing"],
        // -q stops at the first selected line: which errors come before it is a matter of order.
        &[b"-rqs", b"foo", b"missing", b"tree/sub"],
        &[b"-r", b"--include=*.txt", b"foo", b"tree"],
        &[b"-r", b"--exclude=f1*", b"--include=*.txt", b"foo", b"tree"],
        &[b"-r", b"--include=*.txt", b"--exclude=f1*", b"foo", b"tree"],
        &[b"-r", b"--exclude-dir=sub", b"--exclude-dir=many", b"foo", b"tree"],
        &[b"-r", b"--exclude-dir=sub", b"foo", b"tree/sub"],
        &[b"-ra", b"foo", b"tree/bin"],
        &[b"-rI", b"foo", b"tree"],
        &[b"-r", b"--binary-files=without-match", b"-c", b"foo", b"tree/bin"],
        &[b"-rc", b"foo", b"tree/bin"],
        &[b"-r", b"--color=always", b"foo", b"tree"],
        &[b"-r", b"--color=always", b"-n", b"-A1", b"fo*", b"tree/sub"],
        &[b"-r", b"--colour=always", b"-lc", b"foo", b"tree"],
        &[b"-r", b"--color=never", b"foo", b"tree"],
        &[b"-rz", b"foo", b"tree/many"],
        &[b"-R", b"target", b"tree/sub"],
        &[b"-r", b"no such text anywhere", b"tree"],
    ];
    for args in cases {
        same_on_tree(tmp.path(), args);
    }
    // With no file, -r searches '.' and names files without './'.
    same_on_tree(&tmp.path().join("tree"), &[b"-r", b"beta"]);
    same_on_tree(&tmp.path().join("tree"), &[b"-rl", b"foo", b"."]);
}

#[test]
fn standard_input_equals_gnu_grep_byte_for_byte() {
    let text = b"foo\nx\nfoo\nfoo\ny\nz\nw\nfoo bar foo\nFOO\nbarfoo\n\nlast";
    let cases: &[&[&[u8]]] = &[
        &[b"foo"],
        &[b"-n", b"foo"],
        &[b"-c", b"foo"],
        &[b"-v", b"foo"],
        &[b"-o", b"fo*"],
        &[b"-on", b"o"],
        &[b"-C0", b"foo"],
        &[b"-A1", b"foo"],
        &[b"-B1", b"-n", b"y"],
        &[b"-C2", b"-n", b"z"],
        &[b"-o", b"-n", b"-B1", b"o"],
        &[b"-o", b"-A1", b"foo"],
        &[b"-n", b"-m1", b"-A3", b"foo"],
        &[b"-n", b"-m2", b"-A1", b"foo"],
        &[b"-c", b"-m1", b"foo"],
        &[b"-v", b"-m1", b"-A3", b"foo"],
        &[b"--group-separator=XX", b"-A0", b"."],
        &[b"--no-group-separator", b"-A0", b"o"],
        &[b"-H", b"foo"],
        &[b"--label=IN", b"-H", b"-n", b"foo"],
        &[b"-c", b"-Z", b"-H", b"foo"],
        &[b"-l", b"foo"],
        &[b"-L", b"foo"],
        &[b"-L", b"nothing"],
        &[b"-q", b"foo"],
        &[b"-x", b"foo"],
        &[b"-xw", b"fo."],
        &[b"-w", b"foo"],
        &[b"-i", b"-o", b"FOO"],
        &[b"--no-ignore-case", b"-i", b"FOO"],
        &[b"-i", b"--no-ignore-case", b"FOO"],
        &[b"-e", b"x", b"-e", b"y"],
        &[b"x\ny"],
        &[b""],
        &[b"-e", b""],
        &[b"-v", b""],
        &[b"-m", b"0", b"foo"],
        &[b"--color=always", b"foo"],
        &[b"--color=always", b"-n", b"-H", b"-o", b"o"],
        &[b"--color=always", b"-v", b"-A1", b"foo"],
        &[b"--color=always", b"-c", b"-H", b"foo"],
        &[b"--color=always", b"-C1", b"y"],
        &[b"-P", b"fo(?=o)", b"-o"],
        &[b"-P", b"-e", b"a", b"-e", b"b"],
        &[b"-E", b"-F", b"a"],
        &[b"-F", b"-x", b"FOO"],
        &[b"-s", b"foo", b"-", b"/nonexistent"],
    ];
    for args in cases {
        same_on_input(text, args, "C");
    }
}

#[test]
fn basic_and_extended_syntax_with_gnu_quirks_and_errors() {
    let cases: &[(&[u8], &[&[u8]])] = &[
        (b"ab ab\n", &[b"-o", b"a\\|ab"]),
        (b"xab\n", &[b"-oE", b"a|ab"]),
        (b"xa\n*a\n", &[b"-E", b"*a"]),
        (b"*a+b\n", &[b"-o", b"*a"]),
        (b"*a+b\n", &[b"-o", b"\\(*a\\)"]),
        (b"*a+b\n", &[b"-o", b"a\\|\\+b"]),
        (b"*a\n", &[b"-o", b"^*a"]),
        (b"a\n", &[b"-E", b"^*a"]),
        (b"ab\n", &[b"-E", b"a|*b"]),
        (b"{1}a\n", &[b"-E", b"{1}a"]),
        (b"a+b\n", &[b"-E", b"(+a)"]),
        (b"a{x\n", &[b"-E", b"a{x"]),
        (b"a{1\n", &[b"-E", b"a{1"]),
        (b"aa\nb\n", &[b"-oE", b"a{,2}"]),
        (b"a)\n", &[b"-E", b"a)"]),
        (b"(\n", &[b"-E", b"\\("]),
        (b"zzz\n", &[b"-E", b"a||b"]),
        (b"aa\n", &[b"-E", b"(a)\\1"]),
        (b"abab\nab\n", &[b"-o", b"\\(ab\\)\\1"]),
        (b"a foo b\nafoo\n", &[b"\\<foo\\>"]),
        (b"a foo b\nafoo\n", &[b"-o", b"\\bfo\\w"]),
        (b"d1\n", &[b"\\d"]),
        (b"a^b a$b\n", &[b"-o", b"a^b\\|a$b"]),
        (b"]\nb\n\\\n", &[b"[]a]"]),
        (b"]\nb\n\\\n", &[b"[^]a]"]),
        (b"]\nb\n\\\n", &[b"[\\]"]),
        (b"a1b22\n", &[b"-o", b"[[:digit:]]\\{1,\\}"]),
        (b"x-y\n", &[b"-o", b"[[.-.]]"]),
        (b"aXb\n", &[b"-i", b"axb"]),
        (b"foo bar\n", &[b"-w", b"o b"]),
        (b"a.b\naxb\n", &[b"-F", b"a.b"]),
        (b"a\n", &[b"a\\)"]),
        (b"a\n", &[b"\\("]),
        (b"a\n", &[b"-E", b"("]),
        (b"a\n", &[b"[a"]),
        (b"a\n", &[b"[:alpha:]"]),
        (b"a\n", &[b"a\\{1"]),
        (b"a\n", &[b"a\\{x\\}"]),
        (b"a\n", &[b"-E", b"a{2,1}"]),
        (b"a\n", &[b"\\1"]),
        (b"a\n", &[b"\\(a\\)\\2"]),
        (b"a\n", &[b"\\"]),
        (b"a\n", &[b"[[:foo:]]"]),
        (b"a\n", &[b"[b-a]"]),
        (b"a\nb\0b\0", &[b"-z", b"^b$"]),
        (b"a\nb\0b\0", &[b"-zx", b"b"]),
        (b"a\nb\0b\0a\nb", &[b"-zo", b"a.b"]),
        (b"a\nb\0c\0", &[b"-z", b"^b"]),
    ];
    for (input, args) in cases {
        same_on_input(input, args, "C");
    }
}

#[test]
fn binary_files_and_encodings_as_gnu_grep() {
    type Case<'a> = (&'a [u8], &'a [&'a [u8]], &'a str);
    let cases: &[Case] = &[
        (b"foo\0\nfoo\nfoo\n", &[b"foo"], "C"),
        (b"foo\0\nfoo\nfoo\n", &[b"-c", b"foo"], "C"),
        (b"foo\0\nfoo\nfoo\n", &[b"-I", b"-c", b"foo"], "C"),
        (b"foo\0\nfoo\nfoo\n", &[b"-I", b"foo"], "C"),
        (b"foo\0\nfoo\nfoo\n", &[b"-l", b"foo"], "C"),
        (b"foo\0\nfoo\nfoo\n", &[b"-a", b"foo"], "C"),
        (b"foo\0\nfoo\nfoo\n", &[b"--binary-files=text", b"-c", b"o"], "C"),
        (b"x\0foo\nfoo\n", &[b"-m1", b"-c", b"foo"], "C"),
        (b"b\0foo\n", &[b"-a", b"foo"], "C"),
        (b"caf\xc3\xa9 foo\nx\xff foo\n", &[b"foo"], "C"),
        (b"caf\xc3\xa9 foo\nx\xff foo\n", &[b"foo"], "C.UTF-8"),
        (b"caf\xc3\xa9 foo\nx\xff foo\n", &[b"-c", b"foo"], "C.UTF-8"),
        (b"caf\xc3\xa9 foo\nx\xff foo\n", &[b"-o", b"foo"], "C.UTF-8"),
        (b"caf\xc3\xa9 foo\nx\xff foo\n", &[b"-a", b"foo"], "C.UTF-8"),
        (b"CAF\xc3\x89\ncaf\xc3\xa9\n", &[b"-i", b"caf\xc3\xa9"], "C.UTF-8"),
        (b"CAF\xc3\x89\ncaf\xc3\xa9\n", &[b"-i", b"caf\xc3\xa9"], "C"),
        (b"a\xc3\xa9b\na\xffb\n", &[b"-o", b"a.b"], "C"),
        (b"a\xc3\xa9b\na\xffb\n", &[b"-c", b"a.b"], "C.UTF-8"),
        (b"\xc3\x89t\xc3\xa9\n", &[b"-o", b"[[:alpha:]]*"], "C.UTF-8"),
        (b"\xc3\x89t\xc3\xa9\n", &[b"-ow", b"\\w*"], "C.UTF-8"),
    ];
    for (input, args, locale) in cases {
        same_on_input(input, args, locale);
    }
}

fn canopy_grep(flags: &[&str], pattern: &str, root: &Path) -> Output {
    let mut cmd = canopy();
    cmd.arg("grep").args(flags).arg("--").arg(pattern).arg(root);
    run(cmd, None)
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
    let grep_as = |program: &str| {
        let mut cmd = if is_root() { as_nobody(program) } else { gnu(program) };
        if program != "grep" {
            cmd.arg("grep");
        }
        cmd.args(["-r", "foo"]).arg(&root);
        run(cmd, None)
    };
    let got = grep_as(env!("CARGO_BIN_EXE_canopy"));
    let want = grep_as("grep");
    assert_eq!((got.status.code(), want.status.code()), (Some(2), Some(2)));
    assert_eq!(got.stdout, format!("{}/open:foo\n", root.display()).into_bytes());
    assert_eq!(got.stdout, want.stdout);
    assert_eq!(stderr_of(&got), stderr_of(&want));
    // With -q a selected line wins over the error; with -s the message goes, not the status.
    let quiet = run(
        {
            let mut c = canopy();
            c.args(["grep", "-q", "foo"]).arg(root.join("missing")).arg(&root);
            c
        },
        None,
    );
    assert_eq!(quiet.status.code(), Some(0));
    // A bad pattern is an error of its own.
    let bad = canopy_grep(&[], "\\(", &root);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&bad.stderr), "canopy grep: Unmatched ( or \\(\n");
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
        let mut gnu_grep = gnu("grep");
        gnu_grep.arg("-r").args(flags).arg("foo").arg(&root);
        let mut want = records(&run(gnu_grep, None).stdout, b'\n');
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
