//! The politeness budget (`--max-rate`, `--max-in-flight`) on every tree tool: the results are
//! exactly the classic tools' (GNU find, du, grep; cp's copy compared with `diff -r`; rm leaves
//! nothing), and absurd limits are refused with exit status 2. How fast a limited walk goes is a
//! benchmark (bench/politeness), not a test; the limiter's accounting is unit-tested on a fake clock
//! in canopy-engine.

mod common;

use common::{canopy, gnu, small_tree, sorted_lines};
use std::process::Output;

const LIMITS: [&str; 4] = ["--max-rate", "20000", "--max-in-flight", "2"];

#[track_caller]
fn succeeded(out: &Output, context: &str) {
    assert_eq!(out.status.code(), Some(0), "{context}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn limited_tools_give_the_classic_tools_results() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    small_tree(&src);

    let out = canopy().arg("find").args(LIMITS).arg(&src).args(["-name", "f1*"]).output().unwrap();
    succeeded(&out, "find");
    let want = gnu("find").arg(&src).args(["-name", "f1*"]).output().unwrap();
    assert_eq!(sorted_lines(&out.stdout), sorted_lines(&want.stdout), "find");

    let out = canopy().arg("du").args(LIMITS).arg("-a").arg(&src).output().unwrap();
    succeeded(&out, "du");
    assert_eq!(
        sorted_lines(&out.stdout),
        sorted_lines(&gnu("du").arg("-a").arg(&src).output().unwrap().stdout)
    );

    let out = canopy().arg("grep").args(LIMITS).args(["-r", "line 7"]).arg(&src).output().unwrap();
    succeeded(&out, "grep");
    let want = gnu("grep").args(["-r", "line 7"]).arg(&src).output().unwrap();
    assert_eq!(sorted_lines(&out.stdout), sorted_lines(&want.stdout), "grep");

    let copy = tmp.path().join("copy");
    let out = canopy().arg("cp").args(LIMITS).arg("-a").arg(&src).arg(&copy).output().unwrap();
    succeeded(&out, "cp");
    let diff = gnu("diff").arg("-r").arg(&src).arg(&copy).output().unwrap();
    assert_eq!(diff.status.code(), Some(0), "cp -a: {}", String::from_utf8_lossy(&diff.stdout));

    let out = canopy().arg("rm").args(LIMITS).arg("-r").arg(&copy).output().unwrap();
    succeeded(&out, "rm");
    assert!(!copy.exists(), "rm -r left {copy:?}");
}

#[test]
fn absurd_limits_are_refused_with_exit_status_2() {
    let tmp = tempfile::tempdir().unwrap();
    for (flag, value) in [
        ("--max-rate", "0"),
        ("--max-rate", "-5"),
        ("--max-rate", "fast"),
        ("--max-rate", "1e12"),
        ("--max-in-flight", "0"),
        ("--max-in-flight", "many"),
    ] {
        for tool in ["find", "du", "walk", "rm"] {
            let out = canopy().args([tool, flag, value]).arg(tmp.path()).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{tool} {flag} {value}: {stderr}");
            assert!(stderr.contains(&format!("'{value}'")), "{tool} {flag} {value}: {stderr}");
        }
        assert!(tmp.path().exists(), "nothing removed");
    }
}
