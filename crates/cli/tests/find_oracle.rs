//! `canopy find` against GNU find on a hostile tree: for every expression the sorted output, the
//! exit status and the error messages must be the same, at 1, 4 and 16 threads.

mod common;

use common::find_gnu::FindRun;
use common::*;
use std::ffi::OsString;
use std::path::Path;

/// Runs GNU find and canopy find with `args` (after the root) and asserts identical results.
fn same(root: &Path, pre: &[&str], args: &[OsString]) {
    same_with(root, pre, args, b'\n', None);
}

fn same_with(root: &Path, pre: &[&str], args: &[OsString], sep: u8, stdin: Option<&[u8]>) {
    let mut full: Vec<OsString> = pre.iter().map(OsString::from).collect();
    full.push("tree".into());
    full.extend_from_slice(args);
    for threads in ["1", "4", "16"] {
        let options = ["-j", threads];
        let run = FindRun { canopy_options: &options, separator: sep, stdin, env: &[] };
        run.same(root.parent().unwrap(), &full);
    }
}

/// GNU find -L resolves paths and fails past PATH_MAX ("File name too long"); canopy does not (see
/// `follow_mode_walks_past_path_max`). Oracle runs under -L/-H leave that subtree out.
fn beyond_gnu_path_max(expr: &[&str]) -> Vec<OsString> {
    let mut v = a(&["-path", "tree/deep", "-prune", "-o", "("]);
    v.extend(a(expr));
    v.push(")".into());
    v
}

fn a(parts: &[&str]) -> Vec<OsString> {
    parts.iter().map(|s| OsString::from(*s)).collect()
}

fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    (tmp, root)
}

#[test]
fn names_paths_and_patterns() {
    let (_tmp, root) = tree();
    for expr in [
        &[][..],
        &["-name", "*.txt"],
        &["-iname", "*.TXT"],
        &["-name", "[a-c]*"],
        &["-name", "\\*"],
        &["-name", "star*"],
        &["-name", "?"],
        &["-name", "q?"],
        &["-name", "[[]a]*"],
        &["-name", ".*"],
        &["-name", "*line"],
        &["-name", "tree"],
        &["-path", "*/sub/*"],
        &["-ipath", "*/SUB/*.RS"],
        &["-wholename", "tree/sub*"],
        &["-regex", ".*/f[0-9]+"],
        &["-regex", ".*/\\(mid\\|leaf\\)\\.rs"],
        &["-iregex", ".*UPPER.*"],
        &["-regextype", "posix-extended", "-regex", ".*/(m644|m755)"],
        &["-regextype", "posix-basic", "-regex", ".*/f[0-9]\\{4\\}"],
        &["-lname", "*target*"],
        &["-ilname", "NOWHERE"],
        &["-lname", "*"],
    ] {
        same(&root, &[], &a(expr));
    }
    same(&root, &[], &argv(&[b"-name", b"\xff*"]));
}

#[test]
fn types_and_links() {
    let (_tmp, root) = tree();
    for expr in [
        &["-type", "f"][..],
        &["-type", "d"],
        &["-type", "l"],
        &["-type", "p"],
        &["-type", "s"],
        &["-type", "f,l"],
        &["-xtype", "l"],
        &["-xtype", "d"],
        &["-xtype", "f"],
        &["-links", "2"],
        &["-links", "+1"],
        &["-links", "-2"],
        &["-samefile", "tree/sub/mid.rs"],
    ] {
        same(&root, &[], &a(expr));
    }
    for follow in ["-L", "-H"] {
        for expr in [
            &["-true"][..],
            &["-type", "l"],
            &["-type", "d"],
            &["-xtype", "l"],
            &["-lname", "*"],
            &["-samefile", "tree/sub/deeper"],
        ] {
            same(&root, &[follow], &beyond_gnu_path_max(expr));
        }
    }
}

#[test]
fn sizes_times_owners_permissions() {
    let (_tmp, root) = tree();
    let inode = std::fs::metadata(root.join("sub/mid.rs"))
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .unwrap()
        .to_string();
    for expr in [
        &["-size", "0"][..],
        &["-size", "+1k"],
        &["-size", "-2"],
        &["-size", "1"],
        &["-size", "+511c"],
        &["-size", "512c"],
        &["-size", "-1M"],
        &["-size", "+1M"],
        &["-size", "2k"],
        &["-size", "1w"],
        &["-size", "+40M"],
        &["-empty"],
        &["-mtime", "0"],
        &["-mtime", "+1"],
        &["-mtime", "-2"],
        &["-mtime", "1"],
        &["-mtime", "+300"],
        &["-mtime", "-1"],
        &["-mmin", "-1"],
        &["-mmin", "+2"],
        &["-mmin", "4"],
        &["-mmin", "-130"],
        &["-atime", "+0"],
        &["-amin", "-10"],
        &["-amin", "+30"],
        &["-ctime", "-1"],
        &["-cmin", "+1000"],
        &["-daystart", "-mtime", "+1"],
        &["-newer", "tree/times/days"],
        &["-anewer", "tree/times/minutes"],
        &["-cnewer", "tree/times/year"],
        &["-newermt", "2020-01-01"],
        &["-newerat", "@1"],
        &["-newermm", "tree/times/week"],
        &["-user", "root"],
        &["-group", "root"],
        &["-user", "nobody"],
        &["-uid", "0"],
        &["-uid", "+100"],
        &["-gid", "-1"],
        &["-nouser"],
        &["-nogroup"],
        &["-perm", "644"],
        &["-perm", "-u+s"],
        &["-perm", "/o+w"],
        &["-perm", "-644"],
        &["-perm", "/u=x,g=x"],
        &["-perm", "/000"],
        &["-perm", "-2000"],
        &["-perm", "u=rwx,go=rx"],
        &["-readable"],
        &["-writable"],
        &["-executable"],
        &["-inum", &inode],
        &["-fstype", "ext4"],
        &["-fstype", "tmpfs"],
    ] {
        same(&root, &[], &a(expr));
    }
}

#[test]
fn depth_pruning_and_operators() {
    let (_tmp, root) = tree();
    for expr in [
        &["-maxdepth", "0"][..],
        &["-maxdepth", "1"],
        &["-mindepth", "2"],
        &["-mindepth", "1", "-maxdepth", "2"],
        &["-depth"],
        &["-depth", "-maxdepth", "1"],
        &["-name", "sub", "-prune", "-o", "-print"],
        &["-name", "deep", "-prune", "-o", "-type", "f", "-print"],
        &["!", "-name", "*.rs"],
        &["-not", "-type", "d"],
        &["(", "-name", "mid.rs", "-o", "-name", "leaf.rs", ")", "-type", "f"],
        &["-name", "m644", ",", "-name", "m755", "-print"],
        &["-true"],
        &["-false"],
        &["-type", "f", "-a", "-size", "+0", "-o", "-type", "d", "-empty"],
        &["-xdev", "-type", "d"],
    ] {
        same(&root, &[], &a(expr));
    }
}

#[test]
fn print_actions() {
    let (_tmp, root) = tree();
    same_with(&root, &[], &a(&["-print0"]), 0, None);
    for expr in [
        &["-printf", "%p|%f|%h|%P|%H|%d|%y|%Y|%l\\n"][..],
        &["-printf", "%s %b %k %m %M %n %i %u %g %U %G %D %F %S\\n"],
        &["-printf", "%t|%a|%c|%T@|%A+|%C@|%TY-%Tm-%Td %TH:%TM|%Tk %Ta %Tb %Tj\\n"],
        &["-printf", "%-12f|%12s|%.3p|%05d|%+d|%#m|%%|\\t\\101\\n"],
        // GNU's -ls widens the owner column after an unknown uid, which makes widths depend on the
        // visiting order: that directory is compared file by file below.
        &["-path", "*/owners", "-prune", "-o", "-ls"],
        &["-name", "*.rs", "-fls", "/dev/stdout"],
        &["-name", "*.rs", "-fprint", "/dev/stdout"],
        &["-type", "f", "-fprintf", "/dev/stdout", "%f %s\\n"],
    ] {
        same(&root, &[], &a(expr));
    }
    for follow in ["-L", "-H"] {
        same(&root, &[follow], &beyond_gnu_path_max(&["-printf", "%p %y %Y %l %s\\n"]));
    }
    for owner in ["nobody", "ghost", "mixed"] {
        let file = root.join("owners").join(owner);
        if file.exists() {
            same(&root, &[], &a(&["-path", &format!("tree/owners/{owner}"), "-ls"]));
        }
    }
    // Mixed separators: records are whatever ends in a newline or a NUL.
    let mixed = ["-name", "*.rs", "-print", "-o", "-name", "*.txt", "-print0"];
    let (want, got) = (gnu_stdout(&root, &mixed), canopy_stdout(&root, &mixed));
    assert_same_records(&split_any(&got), &split_any(&want), "mixed -print/-print0");
}

fn gnu_stdout(root: &Path, args: &[&str]) -> Vec<u8> {
    let mut c = gnu("find");
    c.current_dir(root.parent().unwrap()).arg("tree").args(args);
    run(c, None).stdout
}

fn canopy_stdout(root: &Path, args: &[&str]) -> Vec<u8> {
    let mut c = canopy();
    c.current_dir(root.parent().unwrap()).args(["find", "-j", "4", "tree"]).args(args);
    run(c, None).stdout
}

fn split_any(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> =
        bytes.split(|&b| b == b'\n' || b == 0).filter(|r| !r.is_empty()).map(<[u8]>::to_vec).collect();
    v.sort();
    v
}

#[test]
fn fprint_writes_the_same_file() {
    let (tmp, root) = tree();
    let mut find = gnu("find");
    find.current_dir(tmp.path())
        .args(["tree", "-name", "*.rs", "-fprint", "gnu.out", "-type", "f", "-fprint0", "gnu.out0"]);
    assert!(run(find, None).status.success());
    let mut ours = canopy();
    ours.current_dir(tmp.path()).args([
        "find",
        "tree",
        "-name",
        "*.rs",
        "-fprint",
        "ours.out",
        "-type",
        "f",
        "-fprint0",
        "ours.out0",
    ]);
    assert!(run(ours, None).status.success());
    let read = |n: &str| std::fs::read(tmp.path().join(n)).unwrap();
    assert_eq!(records(&read("ours.out"), b'\n'), records(&read("gnu.out"), b'\n'));
    assert_eq!(records(&read("ours.out0"), 0), records(&read("gnu.out0"), 0));
    drop(root);
}

#[test]
fn exec_forms() {
    let (_tmp, root) = tree();
    for expr in [
        &["-name", "*.rs", "-exec", "printf", "[%s]\\n", "{}", ";"][..],
        &["-type", "f", "-exec", "printf", "%s\\n", "{}", "+"],
        &["-name", "*.rs", "-execdir", "printf", "%s\\n", "{}", ";"],
        &["-type", "f", "-execdir", "printf", "%s\\n", "{}", "+"],
        &["-name", "mid.rs", "-exec", "echo", "x{}y", ";"],
        &["-type", "f", "-exec", "test", "-s", "{}", ";", "-print"],
        &["-name", "*.rs", "-exec", "false", "{}", "+"],
        &["-name", "*.rs", "-exec", "/nonexistent-command", "{}", ";"],
    ] {
        same(&root, &[], &a(expr));
    }
    let yes = b"y\ny\ny\ny\ny\ny\ny\ny\n";
    same_with(&root, &[], &a(&["-name", "*.rs", "-ok", "echo", "{}", ";"]), b'\n', Some(yes));
}

#[test]
fn delete_leaves_the_same_tree() {
    for expr in [
        &["-name", "*.rs", "-delete"][..],
        &["-type", "d", "-empty", "-delete"],
        &["-path", "*sub*", "-delete"],
    ] {
        let (tmp_gnu, root_gnu) = tree();
        let (tmp_ours, root_ours) = tree();
        let mut find = gnu("find");
        find.current_dir(tmp_gnu.path()).arg("tree").args(expr);
        let want = run(find, None);
        let mut ours = canopy();
        ours.current_dir(tmp_ours.path()).args(["find", "tree"]).args(expr);
        let got = run(ours, None);
        assert_eq!(got.status.code(), want.status.code(), "{expr:?}");
        let list = |dir: &Path| {
            let mut c = gnu("find");
            c.current_dir(dir).args(["tree", "-print0"]);
            records(&run(c, None).stdout, 0)
        };
        assert_eq!(list(tmp_ours.path()), list(tmp_gnu.path()), "remaining tree after {expr:?}");
        drop((root_gnu, root_ours));
    }
}

#[test]
fn quit_stops_after_one_match() {
    let (tmp, _root) = tree();
    for threads in ["1", "4", "16"] {
        let mut ours = canopy();
        ours.current_dir(tmp.path()).args(["find", "-j", threads, "tree", "-type", "f", "-print", "-quit"]);
        let out = run(ours, None);
        assert!(out.status.success());
        assert_eq!(records(&out.stdout, b'\n').len(), 1, "exactly one line before -quit at -j {threads}");
    }
}

#[test]
fn follow_mode_walks_past_path_max() {
    let (tmp, _root) = tree();
    let mut ours = canopy();
    ours.current_dir(tmp.path()).args(["find", "-L", "tree/deep", "-name", "bottom.txt"]);
    let out = run(ours, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let found = records(&out.stdout, b'\n');
    assert_eq!(found.len(), 1);
    assert!(found[0].len() > 9000 && found[0].ends_with(b"/bottom.txt"));
}

#[test]
fn expression_errors_exit_1_like_gnu_and_missing_roots_too() {
    let (tmp, _root) = tree();
    for bad in [
        &["-name"][..],
        &["-frobnicate"],
        &["(", "-name", "x"],
        &["-type", "q"],
        &["-perm", "9"],
        &["-newer", "/nonexistent"],
        &["-regex", "\\(a"],
        &["-newermt", "not a date"],
    ] {
        let mut find = gnu("find");
        find.current_dir(tmp.path()).arg("tree").args(bad);
        let want = run(find, None);
        let mut ours = canopy();
        ours.current_dir(tmp.path()).args(["find", "tree"]).args(bad);
        let got = run(ours, None);
        assert_eq!(want.status.code(), Some(1), "GNU find: {bad:?}");
        assert_eq!(got.status.code(), Some(1), "{bad:?}: {}", String::from_utf8_lossy(&got.stderr));
        assert!(got.stdout.is_empty());
        assert!(String::from_utf8_lossy(&got.stderr).starts_with("canopy find: "));
    }
    same(&tmp.path().join("tree"), &[], &a(&["/nonexistent-root"]));
}

#[test]
fn unreadable_directory_as_an_unprivileged_user() {
    if !root_or_skip("switch to an unprivileged user with setpriv") {
        return;
    }
    let (tmp, root) = tree();
    std::fs::set_permissions(tmp.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let locked = root.join("locked");
    std::fs::create_dir_all(locked.join("inside")).unwrap();
    std::fs::write(locked.join("secret"), b"x").unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let as_nobody = |program: &str, args: &[&str]| {
        let mut c = as_nobody(program);
        c.current_dir(tmp.path()).args(args);
        run(c, None)
    };
    for expr in [&[][..], &["-type", "d"], &["-depth"], &["-name", "locked", "-printf", "%p %m\\n"]] {
        let mut find_args = vec!["tree"];
        find_args.extend_from_slice(expr);
        let want = as_nobody("find", &find_args);
        let mut ours_args = vec!["find"];
        ours_args.extend_from_slice(&find_args);
        let got = as_nobody(env!("CARGO_BIN_EXE_canopy"), &ours_args);
        assert_eq!(want.status.code(), Some(1), "GNU find reports the locked directory");
        assert_eq!(got.status.code(), Some(1), "{}", String::from_utf8_lossy(&got.stderr));
        assert_same_records(
            &records(&got.stdout, b'\n'),
            &records(&want.stdout, b'\n'),
            &format!("as nobody {expr:?}"),
        );
        assert_eq!(messages(&got.stderr, "canopy find: "), messages(&want.stderr, "find: "));
    }
}

#[test]
fn files_vanishing_during_the_walk_are_reported_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("churn");
    for d in 0..20 {
        std::fs::create_dir_all(dir.join(format!("d{d}"))).unwrap();
        for f in 0..500 {
            std::fs::write(dir.join(format!("d{d}/f{f}")), b"").unwrap();
        }
    }
    let remover = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            for d in (0..20).rev() {
                let _ = std::fs::remove_dir_all(dir.join(format!("d{d}")));
            }
        })
    };
    let mut ours = canopy();
    ours.args(["find", "-j", "4"]).arg(&dir).args(["-printf", "%s %p\\n"]);
    let out = run(ours, None);
    remover.join().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "no crash: {:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in stderr.lines() {
        assert!(
            line.starts_with("canopy find: '") && line.ends_with("No such file or directory"),
            "unexpected: {line}"
        );
    }
    assert_eq!(out.status.code() == Some(1), !stderr.is_empty(), "exit 1 exactly when errors were shown");
    // With -ignore_readdir_race vanished files are not errors.
    let mut quiet = canopy();
    quiet.args(["find", "-j", "4"]).arg(tmp.path()).args(["-ignore_readdir_race", "-printf", "%s\\n"]);
    assert!(run(quiet, None).status.success());
}

#[test]
fn sort_gives_path_order() {
    let (tmp, _root) = tree();
    for threads in ["1", "8"] {
        let mut ours = canopy();
        ours.current_dir(tmp.path()).args(["find", "--sort", "-j", threads, "tree", "-print0"]);
        let out = run(ours, None);
        let got: Vec<&[u8]> = out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()).collect();
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(got, sorted, "--sort at -j {threads}");
        assert!(got.len() > 80);
    }
}
