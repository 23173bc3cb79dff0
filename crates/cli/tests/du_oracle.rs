//! `canopy du` against GNU du as the oracle: the same lines for every list-mode option (-S, -l,
//! -t, --time included), at 1 to 32 threads, on trees with hard links, a sparse file, odd names
//! (newline, invalid UTF-8), a path past PATH_MAX, a wide directory, and — as an unprivileged
//! user — directories that cannot be read; several arguments come out in the order given, as
//! du's do. Hard links spread over several directories are checked against GNU du `-l` (every
//! link counted) corrected by the documented rule, with GNU find listing the links.

mod common;

use common::du_tree::{du_lines, tree, write};
use common::*;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

const THREADS: [&str; 5] = ["1", "2", "3", "8", "32"];

fn du(args: &[&OsStr]) -> std::process::Output {
    let mut c = gnu("du");
    c.args(args);
    run(c, None)
}

fn canopy_du(args: &[&OsStr]) -> std::process::Output {
    let mut c = canopy();
    c.arg("du").args(args);
    run(c, None)
}

/// Runs GNU du and canopy du with the same arguments (canopy at each thread count) and requires
/// the same set of lines, the same exit status and no messages. With `-a`, a file with several
/// names is listed by GNU du under the name its readdir meets first and by canopy under the
/// documented first name: GNU's line is renamed to that one (and canopy's must already be).
#[track_caller]
fn same_lines(args: &[&OsStr], threads: &[&str]) {
    let want = du(args);
    assert_eq!(want.status.code(), Some(0), "du {args:?}: {}", String::from_utf8_lossy(&want.stderr));
    let sep = if args.iter().any(|a| *a == "-0") { 0 } else { b'\n' };
    // With -l every name is listed, by du and canopy alike.
    let all = args.iter().any(|a| *a == "-a" || a.as_bytes().starts_with(b"-a"))
        && !args.contains(&OsStr::new("-l"));
    let first_names = if all { first_names(args) } else { HashMap::new() };
    let canonical = |out: &[u8]| -> Vec<Vec<u8>> {
        let mut lines: Vec<Vec<u8>> = records(out, sep)
            .into_iter()
            .map(|line| {
                let tab = line.iter().position(|&b| b == b'\t').unwrap_or(0);
                match first_names.get(&line[tab + 1..]) {
                    Some(first) => [&line[..=tab], first.as_slice()].concat(),
                    None => line,
                }
            })
            .collect();
        lines.sort();
        lines
    };
    let want = canonical(&want.stdout);
    for j in threads {
        let mut ours: Vec<&OsStr> = vec![OsStr::new("-j"), OsStr::new(j)];
        ours.extend_from_slice(args);
        let got = canopy_du(&ours);
        assert_eq!(
            got.status.code(),
            Some(0),
            "canopy du {ours:?}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        assert!(got.stderr.is_empty(), "{}", String::from_utf8_lossy(&got.stderr));
        assert_eq!(
            canonical(&got.stdout),
            records(&got.stdout, sep),
            "canopy lists each file under its first name"
        );
        assert_same_records(&records(&got.stdout, sep), &want, &format!("du {args:?} -j {j}"));
    }
}

/// For every name of a file with several names below the path arguments: the documented first
/// name (first argument, then component order below it), found with GNU find.
fn first_names(args: &[&OsStr]) -> HashMap<Vec<u8>, Vec<u8>> {
    let paths: Vec<&OsStr> =
        args.iter().copied().filter(|a| Path::new(a).exists() && !a.as_bytes().starts_with(b"-")).collect();
    // inode → (argument position, path below it, full path) of each name
    type Names = Vec<(usize, Vec<u8>, Vec<u8>)>;
    let mut groups: HashMap<Vec<u8>, Names> = HashMap::new();
    for (position, path) in paths.iter().enumerate() {
        let mut find = gnu("find");
        find.arg(path).args(["!", "-type", "d", "-links", "+1", "-printf", "%D:%i\\0%P\\0%p\\0"]);
        let out = run(find, None);
        let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        for f in fields.chunks_exact(3) {
            groups.entry(f[0].to_vec()).or_default().push((position, f[1].to_vec(), f[2].to_vec()));
        }
    }
    let key = |c: &u8| if *c == b'/' { 0 } else { *c };
    let mut first = HashMap::new();
    for names in groups.values() {
        let best = names
            .iter()
            .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.iter().map(key).cmp(b.1.iter().map(key))))
            .unwrap();
        for (_, _, path) in names {
            first.insert(path.clone(), best.2.clone());
        }
    }
    first
}

#[test]
fn list_mode_lines_equal_gnu_du() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let r = root.as_os_str();
    let option_sets: &[&[&str]] = &[
        &["-B1"],
        &["-b"],
        &["--apparent-size"],
        &["--inodes"],
        &["-k"],
        &["-m"],
        &["-h"],
        &["--si"],
        &["-B", "1K"],
        &["-BK"],
        &["-BMB"],
        &["-B", "3"],
        &["-s"],
        &["-sh"],
        &["-a", "-B1"],
        &["-a", "-b"],
        &["-a", "--inodes"],
        &["-c", "-B1"],
        &["-d", "1", "-B1"],
        &["--max-depth=2", "-b"],
        &["-a", "--max-depth=1", "--inodes"],
        &["--exclude=*.dat", "-B1"],
        &["--exclude=b", "-a", "-B1"],
        &["--exclude", "c", "--exclude", "odd", "--inodes"],
        &["-x", "-B1"],
        &["-P", "-a", "-B1"],
        &["-H", "-B1"],
    ];
    for options in option_sets {
        for nul in [false, true] {
            let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
            if nul {
                args.push(OsStr::new("-0"));
            }
            args.push(r);
            let threads: &[&str] = if options.len() == 1 && nul { &THREADS } else { &["2"] };
            same_lines(&args, threads);
        }
    }
}

#[test]
fn separate_dirs_count_links_threshold_and_time_like_gnu_du() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let r = root.as_os_str();
    let option_sets: &[&[&str]] = &[
        &["-S", "-B1"],
        &["-S", "-a", "-b"],
        &["-Ss", "-B1"],
        &["-S", "-c", "--inodes"],
        &["-S", "-d", "1", "-B1"],
        &["-l", "-B1"],
        &["-l", "-a", "-b"],
        &["-l", "-c", "--inodes"],
        &["-t", "5k", "-B1"],
        &["-t", "-5k", "-a", "-b"],
        &["--threshold=1M", "-a", "-B1"],
        &["-t", "0x10", "--inodes"],
        &["-t", "12KB", "-S", "-b"],
        &["--time", "-B1"],
        &["--time=ctime", "--time-style=full-iso", "-b"],
        &["--time", "--time-style=+%s.%N %Y", "-s"],
        &["--time=status", "--time-style=iso", "-S", "-c"],
        &["--time", "--time-style=long-iso", "-t", "-20k"],
    ];
    for options in option_sets {
        let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
        args.push(r);
        same_lines(&args, &["1", "4"]);
    }
    // TIME_STYLE from the environment (posix- prefixes dropped), and a time zone with a half hour.
    for (style, zone) in [("posix-full-iso", "XYZ-5:30"), ("+%H:%M:%S %:z", "UTC0"), ("locale", "ABC+3")] {
        let run_with = |mut c: std::process::Command| {
            c.env("TIME_STYLE", style).env("TZ", zone).args(["--time", "-B1"]).arg(r);
            run(c, None)
        };
        let want = run_with(gnu("du"));
        let mut ours = canopy();
        ours.arg("du");
        let got = run_with(ours);
        assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
        assert_same_records(
            &records(&got.stdout, b'\n'),
            &records(&want.stdout, b'\n'),
            &format!("TIME_STYLE={style}"),
        );
    }
}

/// `du -sh b a c` prints b, a, c in that order, and so does every list: one argument's lines
/// after another's, each ending with the argument itself.
#[test]
fn arguments_come_out_in_the_order_given() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let at = |rel: &str| root.join(rel).into_os_string();
    let (a, b, c, dat, wide, odd, h1) =
        (at("a"), at("a/b"), at("a/b/c"), at("dat"), at("wide"), at("odd"), at("a/h1"));
    let orders: Vec<Vec<&OsStr>> = vec![
        vec![&wide, &dat, &odd],
        vec![&dat, &wide, &odd, &c],
        vec![&c, &a, &dat],
        vec![&h1, &a, &wide],
        vec![&odd, &b, &dat, &wide],
    ];
    for order in &orders {
        for options in [&["-s", "-B1"][..], &["-sh"], &["-s", "-c", "--inodes"], &["-s", "-b", "--time"]] {
            let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
            args.extend(order.iter().copied());
            let want = du(&args);
            for j in ["1", "3"] {
                let mut ours: Vec<&OsStr> = vec![OsStr::new("-j"), OsStr::new(j)];
                ours.extend_from_slice(&args);
                let got = canopy_du(&ours);
                assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
                assert_eq!(
                    String::from_utf8_lossy(&got.stdout),
                    String::from_utf8_lossy(&want.stdout),
                    "du {args:?} -j {j}: the same lines in the same order"
                );
            }
        }
        // Whole lists: the same lines, each argument's together and in argument order, its own
        // line last.
        let mut args: Vec<&OsStr> = vec![OsStr::new("-B1"), OsStr::new("-0")];
        args.extend(order.iter().copied());
        let want = du(&args);
        let got = canopy_du(&args);
        assert_eq!(got.status.code(), Some(0));
        assert_same_records(&records(&got.stdout, 0), &records(&want.stdout, 0), &format!("du {args:?}"));
        let paths: Vec<&[u8]> = got
            .stdout
            .split(|&b| b == 0)
            .filter(|l| !l.is_empty())
            .map(|l| &l[l.iter().position(|&b| b == b'\t').unwrap() + 1..])
            .collect();
        let mut position = 0;
        for argument in order {
            let argument = argument.as_bytes();
            let start = position;
            while position < paths.len() && paths[position].starts_with(argument) {
                position += 1;
            }
            assert!(
                position > start,
                "du {args:?}: {} has no lines in its turn",
                String::from_utf8_lossy(argument)
            );
            assert_eq!(paths[position - 1], argument, "du {args:?}: the argument's own line ends its lines");
        }
        assert_eq!(position, paths.len(), "du {args:?}: every line belongs to its argument's turn");
    }
    // A missing argument in the middle: the others keep their places.
    let missing = tmp.path().join("missing");
    let args = [dat.as_os_str(), missing.as_os_str(), wide.as_os_str()];
    let mut with_s = vec![OsStr::new("-s")];
    with_s.extend(args);
    let want = du(&with_s);
    let got = canopy_du(&with_s);
    assert_eq!((got.status.code(), want.status.code()), (Some(1), Some(1)));
    assert_eq!(got.stdout, want.stdout);
}

#[test]
fn sort_gives_one_order_for_every_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let first = canopy_du(&[OsStr::new("-a"), OsStr::new("-B1"), OsStr::new("--sort"), root.as_os_str()]);
    assert_eq!(first.status.code(), Some(0));
    for j in THREADS {
        let again = canopy_du(&[
            OsStr::new("-j"),
            OsStr::new(j),
            OsStr::new("-a"),
            OsStr::new("-B1"),
            OsStr::new("--sort"),
            root.as_os_str(),
        ]);
        assert_eq!(again.stdout, first.stdout, "-j {j}");
    }
    // Each directory after its contents, the argument last.
    let lines: Vec<&[u8]> = first.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let last = lines.last().unwrap();
    assert!(last.ends_with(root.as_os_str().as_bytes()), "{}", String::from_utf8_lossy(last));
    let position = |suffix: &str| lines.iter().position(|l| l.ends_with(suffix.as_bytes())).unwrap();
    assert!(position("/a/b/c/kilo") < position("/a/b/c"));
    assert!(position("/a/b/c") < position("/a/b"));
    assert!(position("/a/b") < position("/a/big"), "a/b's lines before a/big (component order)");
}

#[test]
fn several_arguments_count_shared_things_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tree(tmp.path());
    let at = |rel: &str| root.join(rel).into_os_string();
    let (a, b, c, h1) = (at("a"), at("a/b"), at("a/b/c"), at("a/h1"));
    let dat = at("dat");
    let cases: Vec<Vec<&OsStr>> = vec![
        vec![&a, &b],
        vec![&b, &a],
        vec![&a, &a],
        vec![&c, &a, &b],
        vec![&h1, &a],
        vec![&a, &h1, &dat],
        vec![&dat, &b],
    ];
    for case in cases {
        for options in [&["-B1"][..], &["-s", "-b", "-c"], &["-a", "--inodes", "-c"]] {
            let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
            args.extend(case.iter().copied());
            same_lines(&args, &["1", "4"]);
        }
    }
}

#[test]
fn dereferencing_like_gnu_du() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("links");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(outside.join("inner")).unwrap();
    write(&outside.join("inner/data"), 50_000);
    fs::create_dir_all(root.join("d")).unwrap();
    write(&root.join("d/target"), 30_000);
    // Link and target in one directory: counted once, the directory line is the same either way.
    symlink("target", root.join("d/alias")).unwrap();
    symlink(&outside, root.join("out")).unwrap();
    symlink("..", root.join("d/up")).unwrap();
    for options in [&["-L", "-B1"][..], &["-L", "-b", "-c"], &["-L", "--inodes"], &["-D", "-B1"], &["-B1"]] {
        let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
        args.push(root.as_os_str());
        same_lines(&args, &["1", "3", "16"]);
    }
    let arg_link = tmp.path().join("arg-link");
    symlink(&root, &arg_link).unwrap();
    for options in [&["-H", "-B1"][..], &["-B1"], &["-L", "-s"]] {
        let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
        args.push(arg_link.as_os_str());
        same_lines(&args, &["2"]);
    }
    // A dangling symlink under -L cannot be accessed, for du and canopy alike.
    symlink("nowhere", root.join("d/dangling")).unwrap();
    let want = du(&[OsStr::new("-L"), OsStr::new("-B1"), root.as_os_str()]);
    let got = canopy_du(&[OsStr::new("-L"), OsStr::new("-B1"), root.as_os_str()]);
    assert_eq!((got.status.code(), want.status.code()), (Some(1), Some(1)));
    assert_same_records(
        &records(&got.stdout, b'\n'),
        &records(&want.stdout, b'\n'),
        "-L with a dangling link",
    );
    assert_eq!(messages(&got.stderr, "canopy du: "), messages(&want.stderr, "du: "));
}

/// `setpriv` as nobody: a directory nobody may read, one nobody may list but not enter.
#[test]
fn unreadable_directories_as_an_unprivileged_user() {
    if !root_or_skip("switch to an unprivileged user with setpriv") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let root = tmp.path().join("tree");
    fs::create_dir_all(root.join("ok/sub")).unwrap();
    write(&root.join("ok/sub/f"), 5000);
    let locked = root.join("locked");
    fs::create_dir_all(locked.join("inside")).unwrap();
    write(&locked.join("secret"), 70_000);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let listable = root.join("listable");
    fs::create_dir(&listable).unwrap();
    write(&listable.join("hidden"), 3000);
    fs::set_permissions(&listable, fs::Permissions::from_mode(0o644)).unwrap();
    let as_nobody = |program: &str, args: &[&str]| {
        let mut c = as_nobody(program);
        c.current_dir(tmp.path()).args(args);
        run(c, None)
    };
    for options in [&["-B1"][..], &["-a", "-b"], &["--inodes", "-c"], &["-s"]] {
        let mut args = options.to_vec();
        args.push("tree");
        let want = as_nobody("du", &args);
        for j in ["1", "8"] {
            let mut ours = vec!["du", "-j", j];
            ours.extend_from_slice(&args);
            let got = as_nobody(env!("CARGO_BIN_EXE_canopy"), &ours);
            assert_eq!(want.status.code(), Some(1), "GNU du reports the unreadable directories");
            assert_eq!(got.status.code(), Some(1), "{}", String::from_utf8_lossy(&got.stderr));
            assert_same_records(
                &records(&got.stdout, b'\n'),
                &records(&want.stdout, b'\n'),
                &format!("{args:?} -j {j}"),
            );
            assert_eq!(messages(&got.stderr, "canopy du: "), messages(&want.stderr, "du: "), "{args:?}");
        }
    }
}

/// Hard links across directories: every directory's size is GNU du -l's (each name counted)
/// less the names below it, plus the inodes whose first name (the documented rule) is below it.
#[test]
fn hard_links_across_directories_follow_the_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    fs::create_dir_all(root.join("x/y")).unwrap();
    fs::create_dir_all(root.join("x-y")).unwrap();
    write(&root.join("x-y/first"), 33_000);
    fs::hard_link(root.join("x-y/first"), root.join("x/y/second")).unwrap();
    fs::hard_link(root.join("x-y/first"), root.join("sub/deeper/third")).unwrap();
    fs::hard_link(root.join("sizes/f4096"), root.join("x/f4096-again")).unwrap();
    for (unit, size_of) in [("-B1", 'b'), ("-b", 's'), ("--inodes", 'i')] {
        let expected = rule_expectation(&root, unit, size_of);
        for j in THREADS {
            let got = canopy_du(&[
                OsStr::new("-j"),
                OsStr::new(j),
                OsStr::new(unit),
                OsStr::new("-0"),
                root.as_os_str(),
            ]);
            assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
            let got = du_lines(&got.stdout);
            assert_eq!(got, expected, "{unit} -j {j}");
        }
        let gnu_total =
            du_lines(&du(&[OsStr::new(unit), OsStr::new("-0"), OsStr::new("-s"), root.as_os_str()]).stdout);
        assert_eq!(
            gnu_total[root.as_os_str().as_bytes()],
            expected[root.as_os_str().as_bytes()],
            "totals agree with GNU du"
        );
    }
}

/// The documented rule, computed from GNU du -l and GNU find.
fn rule_expectation(root: &Path, unit: &str, size_of: char) -> BTreeMap<Vec<u8>, u64> {
    let mut expected =
        du_lines(&du(&[OsStr::new("-l"), OsStr::new(unit), OsStr::new("-0"), root.as_os_str()]).stdout);
    let mut find = gnu("find");
    find.arg(root).args(["!", "-type", "d", "-links", "+1", "-printf", "%D:%i\\0%b\\0%s\\0%P\\0"]);
    let out = run(find, None);
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    let mut inodes: HashMap<&[u8], (u64, Vec<&[u8]>)> = HashMap::new();
    for f in fields.chunks_exact(4) {
        let size = match size_of {
            'b' => std::str::from_utf8(f[1]).unwrap().parse::<u64>().unwrap() * 512,
            's' => std::str::from_utf8(f[2]).unwrap().parse().unwrap(),
            _ => 1,
        };
        inodes.entry(f[0]).or_insert((size, Vec::new())).1.push(f[3]);
    }
    let root_bytes = root.as_os_str().as_bytes();
    let containing = |rel: &[u8]| -> Vec<Vec<u8>> {
        let mut dirs = vec![root_bytes.to_vec()];
        let parts: Vec<&[u8]> = rel.split(|&b| b == b'/').collect();
        for i in 1..parts.len() {
            dirs.push([root_bytes, b"/", &parts[..i].join(&b'/')].concat());
        }
        dirs
    };
    let order = |a: &&[u8], b: &&[u8]| {
        let key = |c: &u8| if *c == b'/' { 0 } else { *c };
        a.iter().map(key).cmp(b.iter().map(key))
    };
    for (size, names) in inodes.values() {
        for name in names {
            for dir in containing(name) {
                *expected.get_mut(&dir).unwrap() -= size;
            }
        }
        let first = names.iter().copied().min_by(order).unwrap();
        for dir in containing(first) {
            *expected.get_mut(&dir).unwrap() += size;
        }
    }
    expected
}

#[test]
fn usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in [
        &["-s", "-a"][..],
        &["-s", "--max-depth=1"],
        &["-B", "0"],
        &["-B", "1Q"],
        &["--json", "-s"],
        &["--min-ratio", "2"],
        &["--threshold=-0"],
        &["-t", "1x"],
        &["--time=bad"],
        &["--time", "--time-style=bad"],
    ] {
        let mut args: Vec<&OsStr> = bad.iter().map(OsStr::new).collect();
        args.push(tmp.path().as_os_str());
        let out = canopy_du(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("canopy du: "), "{bad:?}");
    }
    let missing = canopy_du(&[OsStr::new("-B1"), OsStr::new("/nonexistent/x")]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr),
        "canopy du: cannot access '/nonexistent/x': No such file or directory\n"
    );
}
