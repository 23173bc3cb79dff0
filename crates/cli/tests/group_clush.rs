//! `canopy group read` and `canopy pgrep` against ClusterShell's clush itself. On random host sets (NodeSets
//! with several prefixes, zero padding, two-dimensional names and indices past 2^64) whose files hold random
//! lines, are empty, lack a final newline or are missing, `clush -R exec -w HOSTS -b cat|grep …` over the
//! same host roots is the oracle: stdout byte for byte (`-b` blocks and `-bL` lines), the hosts that failed,
//! and the exit status with `-S` (clush's is always 0 without it, and so is ours).
//!
//! clush comes from the test venv of `scripts/setup` (`CANOPY_TEST_PYTHON`, as `scripts/test` sets it);
//! without it the test says it is skipped.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;

fn clush() -> Option<PathBuf> {
    let python = PathBuf::from(std::env::var_os("CANOPY_TEST_PYTHON")?);
    let clush = python.with_file_name("clush");
    assert!(clush.exists(), "{} is missing: run scripts/setup", clush.display());
    Some(clush)
}

/// A random host set: names in one or two families.
fn host_names(rng: &mut fastrand::Rng) -> Vec<String> {
    let mut names = Vec::new();
    for _ in 0..rng.usize(1..=2) {
        let count = rng.usize(1..=8);
        match rng.usize(0..4) {
            0 => {
                let prefix = ["node", "n", "cn", "gpu-"][rng.usize(0..4)];
                let width = [0, 2, 3][rng.usize(0..3)];
                names.extend((0..count).map(|_| format!("{prefix}{:0width$}", rng.usize(0..40))));
            }
            1 => names.extend(
                (0..count).map(|_| format!("big{}", 18_446_744_073_709_551_610u128 + rng.u128(0..12))),
            ),
            2 => names.extend((0..count).map(|_| format!("r{}n{}", rng.usize(1..3), rng.usize(1..7)))),
            _ => names.extend((0..count).map(|_| format!("login{}", rng.usize(1..4)))),
        }
    }
    names.sort();
    names.dedup();
    names
}

const WORDS: [&str; 6] = ["alpha", "beta", "gamma", "Alpha", "alphabet", ""];

/// A file's contents: a few lines from a small vocabulary (so hosts often agree), or an odd case.
fn contents(rng: &mut fastrand::Rng) -> Option<String> {
    match rng.usize(0..10) {
        0 | 1 => None,
        2 => Some(String::new()),
        3 => Some("alpha".into()),
        _ => {
            let lines: Vec<&str> = (0..rng.usize(1..4)).map(|_| WORDS[rng.usize(0..WORDS.len())]).collect();
            Some(lines.join("\n") + "\n")
        }
    }
}

fn text(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The hosts clush says exited with `code`, as it folds them (`clush: HOSTS (N): exited with exit code 1`).
fn clush_exited(stderr: &str, code: u8) -> Vec<String> {
    let tail = format!(": exited with exit code {code}");
    let mut hosts: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("clush: ")?.strip_suffix(&tail))
        .map(|hosts| hosts.split(" (").next().unwrap().to_owned())
        .collect();
    hosts.sort();
    hosts
}

/// The hosts of our failure lines (`canopy TOOL: HOSTS…`), as we fold them.
fn our_failed(stderr: &str, prefix: &str) -> Vec<String> {
    let mut hosts: Vec<String> = stderr
        .lines()
        .map(|l| l.strip_prefix(prefix).unwrap_or_else(|| panic!("unexpected stderr line {l:?}")))
        .map(|rest| rest.split([':', ' ']).next().unwrap().to_owned())
        .collect();
    hosts.sort();
    hosts
}

struct Case {
    dir: tempfile::TempDir,
    hosts: String,
    fanout: &'static str,
}

impl Case {
    fn random(rng: &mut fastrand::Rng) -> Case {
        let dir = tempfile::tempdir().unwrap();
        let names = host_names(rng);
        for name in &names {
            let etc = dir.path().join("hosts").join(name).join("etc");
            std::fs::create_dir_all(&etc).unwrap();
            if let Some(text) = contents(rng) {
                std::fs::write(etc.join("motd"), text).unwrap();
            }
        }
        let fanout = ["1", "2", "3", "64"][rng.usize(0..4)];
        Case { dir, hosts: names.join(","), fanout }
    }

    fn file(&self) -> String {
        format!("{}/hosts/%h/etc/motd", self.dir.path().display())
    }

    fn ours(&self, tool: &[&str]) -> Output {
        let root = format!("{}/hosts/{{host}}", self.dir.path().display());
        let mut c = canopy();
        c.args(tool).args(["--hosts", &self.hosts, "--host-root", &root, "--fanout", self.fanout]);
        run(c, None)
    }

    fn clush(&self, clush: &Path, flags: &[&str], command: &[&str]) -> Output {
        let mut c = gnu(clush.to_str().unwrap());
        c.args(["-R", "exec", "-w", &self.hosts]).args(flags).args(command);
        run(c, None)
    }
}

#[test]
fn group_read_and_pgrep_print_what_clush_prints_on_random_hosts() {
    let Some(clush) = clush() else {
        canopy_testkit::skip(
            "CANOPY_TEST_PYTHON is not set (scripts/test sets it to a venv with ClusterShell)",
        );
        return;
    };
    let mut rng = fastrand::Rng::with_seed(0x5eed_c1a5);
    let (mut cases, mut blocks, mut failed_hosts) = (0, 0, 0);
    for _ in 0..24 {
        let case = Case::random(&mut rng);
        let context = format!("hosts {} fan-out {}", case.hosts, case.fanout);

        // canopy group read vs clush -b cat.
        let theirs = text(&case.clush(&clush, &["-b", "-S"], &["cat", &case.file()]));
        let ours = text(&case.ours(&["group", "read", "/etc/motd"]));
        assert_eq!(ours.1, theirs.1, "group read, {context}");
        assert_eq!(ours.0, Some(0), "group read exits 0 as clush does, {context}: {}", ours.2);
        assert_eq!(our_failed(&ours.2, "canopy group: "), clush_exited(&theirs.2, 1), "{context}");
        let ours_s = text(&case.ours(&["group", "read", "-S", "/etc/motd"]));
        assert_eq!((ours_s.0, &ours_s.1), (theirs.0, &theirs.1), "group read -S vs clush -S, {context}");
        blocks += theirs.1.matches("---------------\n").count() / 2;
        failed_hosts += clush_exited(&theirs.2, 1).len();

        // canopy pgrep vs clush -b grep, and -L vs clush -bL.
        let pattern = ["alpha", "gamma", "beta", "zeta"][rng.usize(0..4)];
        let flags: &[&str] = [&[][..], &["-c"], &["-v"], &["-i"], &["-w"]][rng.usize(0..5)];
        let file = case.file();
        let grep = [&["grep"][..], flags, &[pattern, &file]].concat();
        let mode = if rng.bool() { "-b" } else { "-bL" };
        let theirs = text(&case.clush(&clush, &[mode, "-S"], &grep));
        let mut ours_args = vec!["pgrep", "-S"];
        if mode == "-bL" {
            ours_args.push("-L");
        }
        ours_args.extend(flags);
        ours_args.extend([pattern, "/etc/motd"]);
        let ours = text(&case.ours(&ours_args));
        let context = format!("clush {mode} grep {flags:?} {pattern}, {context}");
        assert_eq!((ours.0, &ours.1), (theirs.0, &theirs.1), "pgrep -S, {context}");
        assert_eq!(our_failed(&ours.2, "canopy pgrep: "), clush_exited(&theirs.2, 2), "{context}");
        ours_args.remove(1);
        let plain = text(&case.ours(&ours_args));
        assert_eq!((plain.0, &plain.1), (Some(0), &ours.1), "pgrep without -S exits 0, {context}");
        cases += 1;
    }
    eprintln!(
        "compared with clush on {cases} random host sets: {blocks} clush -b blocks of group read, \
         {failed_hosts} failed hosts, and pgrep in -b and -bL modes"
    );
}
