//! `canopy find` as a drop-in for GNU find where bfs's suite and new users found it different:
//! each test runs GNU find with the same argv as the oracle.

mod common;

use common::find_gnu::FindRun;
use common::*;
use std::path::{Path, PathBuf};

/// bfs's `weirdnames`: directories named like find's operators, with one file each.
fn weird_names(base: &Path) -> PathBuf {
    let root = base.join("weirdnames");
    for (dir, file) in [
        ("-", "a"),
        ("(", "b"),
        ("(-", "c"),
        ("!", "d"),
        ("!-", "e"),
        (",", "f"),
        (")", "g"),
        ("...", "h"),
        ("\\", "i"),
        (" ", "j"),
        ("[", "k"),
        ("{", "l"),
        ("*", "m"),
        ("\n", "n"),
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join(file), b"").unwrap();
    }
    root
}

fn with_threads<'a>(threads: &'a [&'a str; 2]) -> FindRun<'a> {
    FindRun { canopy_options: threads, ..FindRun::default() }
}

#[test]
fn starting_points_that_look_like_operators() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    for pre in [&[][..], &["-L"]] {
        let mut args: Vec<&str> = pre.to_vec();
        args.extend(["-", "(-", "!-", ",", ")", "./(", "./!", "(", "!", "-print", "-o", "-print", ")"]);
        FindRun::default().same(&root, &args);
    }
    FindRun::default().same(&root, &[")", ",", "-maxdepth", "0"]);
}

#[test]
fn quit_ends_a_comma_list_too() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    for threads in ["1", "4"] {
        let got = with_threads(&["-j", threads]).same(&root, &[".", "-print", "-quit", ",", "-print"]);
        assert_eq!(records(&got.stdout, b'\n').len(), 1, "-j {threads}");
    }
}

#[test]
fn regex_dialects_like_glibc() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    for (syntax, pattern) in [
        ("findutils-default", ".*/\\(\\[\\|{\\)/.*"),
        ("findutils-default", "*.*"),
        ("findutils-default", ".*/[[:alpha:]]"),
        ("emacs", ".*\\n.*"),
        ("awk", ".*/[\\[\\*]/.*"),
        ("posix-awk", ".*/[\\[\\*]/.*"),
        ("gnu-awk", ".*/[\\[\\*]/(\\<.\\>)"),
        ("egrep", "*.*/{l"),
        ("posix-egrep", ".*/(\\(|\\))/."),
        ("posix-extended", ".*/[^[:alnum:]]/[a-c]"),
        ("posix-extended", "\\./[(!]-?(/.)?"),
        ("posix-basic", ".*/\\(\\[\\|{\\)/.*"),
        ("posix-basic", "\\./.\\{1,2\\}/[a-e]"),
        ("posix-minimal-basic", "\\./\\((\\)"),
        ("posix-minimal-basic", "\\./[(!]\\(-\\)*"),
        ("grep", ".*/\\*/m"),
        ("ed", "\\./\\.\\.\\./h"),
        ("sed", ".*/ /j"),
        ("posix-extended", "*a"),
        ("posix-extended", "(a"),
        ("posix-basic", "a\\{2,1\\}"),
        ("posix-extended", "[[:nope:]]"),
        ("no-such-type", "x"),
    ] {
        FindRun::default().same(&root, &[".", "-regextype", syntax, "-regex", pattern]);
        FindRun::default().same(&root, &[".", "-regextype", syntax, "-iregex", &pattern.to_uppercase()]);
    }
}

#[test]
fn numeric_arguments_read_like_strtoumax() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    for (test, arg) in [
        ("-uid", "-+1"),
        ("-gid", "-+1"),
        ("-uid", "++0"),
        ("-uid", " 0"),
        ("-uid", "+-1"),
        ("-links", "-+3"),
        ("-inum", "+-1"),
        ("-size", "-+1"),
        ("-mtime", "-+2"),
    ] {
        FindRun::default().same(&root, &[".", test, arg]);
    }
}

#[test]
fn used_counts_days_between_change_and_access() {
    let tmp = tempfile::tempdir().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    for (name, ahead) in
        [("yesterday", -86400), ("tomorrow", 3600), ("dayafter", 25 * 3600), ("nextweek", 145 * 3600)]
    {
        let path = tmp.path().join(name);
        std::fs::write(&path, b"").unwrap();
        let atime = rustix::fs::Timespec { tv_sec: now + ahead, tv_nsec: 0 };
        let times = rustix::fs::Timestamps { last_access: atime, last_modification: atime };
        rustix::fs::utimensat(rustix::fs::CWD, &path, &times, rustix::fs::AtFlags::empty()).unwrap();
    }
    for arg in ["1", "2", "7", "+7", "-2", "+0", "0"] {
        FindRun::default().same(tmp.path(), &[".", "-mindepth", "1", "-used", arg]);
    }
    FindRun::default().same(tmp.path(), &[".", "-used", "x"]);
}

/// `date -d TEXT +%s`: GNU's own reading of a date, the same parser GNU find uses.
fn gnu_date(text: &str, tz: &str) -> i64 {
    let mut date = gnu("date");
    date.env("TZ", tz).args(["-d", text, "+%s"]);
    let out = run(date, None);
    assert!(out.status.success(), "date -d {text:?}");
    String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
}

#[test]
fn newermt_reads_dates_like_gnu_date() {
    for tz in ["UTC0", "America/New_York", "Asia/Kolkata"] {
        for (text, relative) in [
            ("2023-06-01", false),
            ("2023-06-01 12:00+01:00", false),
            ("2023-06-01T12:00:00Z", false),
            ("Jun 1 2023", false),
            ("1 Jun 2023 13:14:15", false),
            ("@1685620800", false),
            ("1991-12-14T00:01", false),
            ("19911213 20:31:00-0330", false),
            ("yesterday", true),
            ("1 day ago", true),
            ("2 hours ago", true),
            ("last week", true),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let t = gnu_date(text, tz);
            // Relative dates move with the clock: keep the files far from the boundary.
            let margin = if relative { 600 } else { 1 };
            for (name, at) in [("before", t - margin), ("at", t), ("after", t + margin)] {
                let path = tmp.path().join(name);
                std::fs::write(&path, b"").unwrap();
                let ts = rustix::fs::Timespec { tv_sec: at, tv_nsec: 0 };
                let times = rustix::fs::Timestamps { last_access: ts, last_modification: ts };
                rustix::fs::utimensat(rustix::fs::CWD, &path, &times, rustix::fs::AtFlags::empty()).unwrap();
            }
            let env = [("TZ", tz)];
            let run = FindRun { env: &env, ..FindRun::default() };
            let args = [".", "-type", "f", "-newermt", text];
            let got = run.same(tmp.path(), &args);
            let found = records(&got.stdout, b'\n');
            assert!(
                found.contains(&b"./after".to_vec()) && !found.contains(&b"./before".to_vec()),
                "{text} {tz}"
            );
            run.same(tmp.path(), &[".", "-type", "f", "-newerat", text]);
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    FindRun::default().same(tmp.path(), &[".", "-newermt", "31 Febtember"]);
}

#[test]
fn files0_from_reads_the_starting_points() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    let list: Vec<u8> = ["-", "(", ",/f", "\n", "*/m", "nonexistent"]
        .iter()
        .flat_map(|p| [p.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::write(tmp.path().join("list"), &list).unwrap();
    let list_path = tmp.path().join("list");
    let list_arg = list_path.to_str().unwrap();
    for threads in [["-j", "1"], ["-j", "4"]] {
        let from_stdin = FindRun { canopy_options: &threads, stdin: Some(&list), ..FindRun::default() };
        from_stdin.same(&root, &["-files0-from", "-"]);
        from_stdin.same(&root, &["-files0-from", "-", "-files0-from", "-", "-name", "[b-f]"]);
        let print0 = FindRun { canopy_options: &threads, separator: 0, ..FindRun::default() };
        print0.same(&root, &["-files0-from", list_arg, "-print0"]);
    }
    let with = |stdin: &'static [u8]| FindRun { stdin: Some(stdin), ..FindRun::default() };
    with(b"").same(&root, &["-files0-from", "-"]);
    with(b"-\0\0(\0").same(&root, &["-files0-from", "-"]);
    with(b"-").same(&root, &["-files0-from", "-"]);
    FindRun::default().same(&root, &["-files0-from", "/nonexistent-list"]);
    // GNU adds an empty line after this message; the rest is the same.
    let (want, got) = FindRun::default().both(&root, &["-files0-from", "-", "-ok", "echo", "{}", ";"]);
    assert_eq!((got.status.code(), want.status.code()), (Some(1), Some(1)));
    assert_eq!(
        String::from_utf8_lossy(&got.stderr),
        "canopy find: option -files0-from reading from standard input cannot be combined with -ok, -okdir\n"
    );
    // A directory as the list: a read error. Extra operands: refused (GNU says it in two lines).
    let (want, got) = FindRun::default().both(&root, &["-files0-from", "."]);
    assert_eq!((got.status.code(), want.status.code()), (Some(1), Some(1)));
    assert!(String::from_utf8_lossy(&got.stderr).contains("'.': read error: Is a directory"));
    let (want, got) = FindRun::default().both(&root, &["-", "-files0-from", list_arg]);
    assert_eq!((got.status.code(), want.status.code()), (Some(1), Some(1)));
    assert!(String::from_utf8_lossy(&got.stderr).contains("extra operand '-'"));
    assert!(got.stdout.is_empty());
}

#[test]
fn starting_points_are_handled_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    let args = ["*/m", "-/a", "[/k", "(", "{/l", "!/d", "-print0"];
    for threads in ["1", "4"] {
        let options = ["-j", threads];
        let (want, got) = FindRun { canopy_options: &options, ..FindRun::default() }.both(&root, &args);
        assert_eq!(got.stdout, want.stdout, "files in command-line order, the directory in its place");
    }
    let (want, got) = FindRun::default().both(&root, &["{/l", "[/k", "-/a", "-printf", "%h\\0%f\\n"]);
    assert_eq!(got.stdout, want.stdout);
    let (want, got) = FindRun::default().both(&root, &["[/k", "-/a", "*/m", "-print", "-quit"]);
    assert_eq!(got.stdout, want.stdout, "-quit after the first starting point");
    // A directory with more output than a worker buffers, between two files.
    let big = root.join("big");
    std::fs::create_dir(&big).unwrap();
    for i in 0..3000 {
        std::fs::write(big.join(format!("{i:0>60}")), b"").unwrap();
    }
    for threads in ["1", "4"] {
        let mut ours = canopy();
        ours.current_dir(&root).args(["find", "-j", threads, "[/k", "big", "*/m"]);
        let out = run(ours, None);
        let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 3003);
        assert_eq!((lines[0], lines[3002]), (&b"[/k"[..], &b"*/m"[..]), "-j {threads}");
    }
}

#[test]
fn execdir_refuses_relative_path_entries_and_runs_a_root_in_its_parent() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    let system_path = std::env::var("PATH").unwrap();
    for path in [
        format!(".:{system_path}"),
        format!(":{system_path}"),
        format!("{system_path}::/bin"),
        format!("bin:{system_path}"),
    ] {
        let env = [("PATH", path.as_str())];
        let run = FindRun { env: &env, ..FindRun::default() };
        run.same(&root, &[".", "-execdir", "echo", "{}", ";"]);
        run.same(&root, &[".", "-okdir", "echo", "{}", ";"]);
    }
    for start in ["/", "//", "-", "./(/", "*/m"] {
        FindRun::default().same(
            &root,
            &[start, "-maxdepth", "0", "-execdir", "sh", "-c", "echo \"$PWD\" \"$1\"", "sh", "{}", ";"],
        );
        FindRun::default().same(&root, &[start, "-maxdepth", "0", "-execdir", "pwd", "+"]);
    }
}

#[test]
fn fprint_names_of_one_file_share_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    let mut outputs = Vec::new();
    for who in ["gnu", "ours"] {
        let dir = tmp.path().join(who);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("out"), b"old contents\n").unwrap();
        std::fs::hard_link(dir.join("out"), dir.join("hard")).unwrap();
        std::os::unix::fs::symlink("out", dir.join("soft")).unwrap();
        let out = |n: &str| dir.join(n).to_str().unwrap().to_string();
        let args = [
            ".",
            "-fprint",
            &out("out"),
            "-fprint",
            &out("hard"),
            "-fprint",
            &out("soft"),
            "-fprint",
            &out("out"),
        ];
        let mut command = if who == "gnu" { gnu("find") } else { canopy() };
        if who == "ours" {
            command.args(["find", "-j", "4"]);
        }
        command.current_dir(&root).args(args);
        assert!(run(command, None).status.success());
        outputs.push(records(&std::fs::read(dir.join("out")).unwrap(), b'\n'));
    }
    assert_eq!(outputs[1], outputs[0], "every entry four times, nothing truncated away");
    FindRun::default().same(&root, &[".", "-fprint", "/nonexistent/x"]);
    FindRun::default().same(&root, &[".", "-name", "a", "-fprint", "/dev/stdout"]);
}

#[test]
fn printf_types_and_contexts_like_gnu() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("loops");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("file"), b"").unwrap();
    for (link, target) in [("notdir", "file/x"), ("broken", "nowhere"), ("loop", "loop"), ("ok", "file")] {
        std::os::unix::fs::symlink(target, dir.join(link)).unwrap();
    }
    FindRun::default().same(tmp.path(), &["loops", "-printf", "(%p) (%l) %y %Y\\n"]);
    FindRun::default().same(tmp.path(), &["loops", "-printf", "%p [%Z] %y\\n"]);
    FindRun::default().same(tmp.path(), &["loops", "-printf", "%p [%BY|%B+|%Bk] %y\\n"]);
    FindRun::default().same(tmp.path(), &["-L", "loops/file", "loops/ok", "-printf", "%Z|%p\\n"]);
}

#[test]
fn case_folding_follows_the_locale() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["\u{c9}t\u{e9}", "\u{e9}t\u{e9}", "ETE", "ete", "\u{e9}"] {
        std::fs::write(tmp.path().join(name), b"").unwrap();
    }
    for locale in ["C", "C.UTF-8"] {
        let env = [("LC_ALL", locale)];
        let run = FindRun { env: &env, ..FindRun::default() };
        for args in [
            &[".", "-iname", "\u{e9}t\u{e9}"][..],
            &[".", "-iname", "ete"],
            &[".", "-name", "?"],
            &[".", "-name", "??"],
            &[".", "-iname", "[\u{c9}]*"],
            &[".", "-iregex", "./\u{e9}t\u{e9}"],
            &[".", "-regex", "./.."],
            &[".", "-regex", "./."],
        ] {
            run.same(tmp.path(), args);
        }
    }
}

#[test]
fn ignore_readdir_race_still_reports_a_missing_starting_point() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    FindRun::default().same(&root, &["nonexistent", "-ignore_readdir_race"]);
    FindRun::default().same(&root, &["-", "nonexistent", "-ignore_readdir_race"]);
}

#[test]
fn trailing_backslash_in_a_name_pattern_matches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = weird_names(tmp.path());
    for pattern in ["\\", "*\\", "\\\\", "[\\\\]"] {
        FindRun::default().same(&root, &[".", "-name", pattern]);
    }
}
