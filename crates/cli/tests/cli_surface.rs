//! The command line as a whole: every subcommand reachable with its help and version, and shell
//! completions that describe the whole tree. Subcommands' arguments are built only when that
//! subcommand runs (a start-up cost), so these check nothing went missing on the way.

mod common;

use common::canopy;

const SUBCOMMANDS: [&str; 19] = [
    "find",
    "dirsvc",
    "grep",
    "group",
    "pcp",
    "pgrep",
    "psync",
    "ptail",
    "ptop",
    "monitor",
    "latfs",
    "walk",
    "du",
    "cmp",
    "cp",
    "sync",
    "rm",
    "report",
    "completions",
];

fn stdout_of(args: &[&str]) -> String {
    let out = canopy().args(args).output().unwrap();
    assert!(out.status.success(), "canopy {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn top_level_help_lists_every_subcommand() {
    let help = stdout_of(&["--help"]);
    for name in SUBCOMMANDS {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(name)),
            "{name} missing from --help:\n{help}"
        );
    }
}

#[test]
fn every_subcommand_has_its_help_and_the_version() {
    let version = format!("{}\n", env!("CARGO_PKG_VERSION"));
    for name in SUBCOMMANDS {
        let help = stdout_of(&[name, "--help"]);
        assert!(help.contains(&format!("Usage: canopy {name}")), "canopy {name} --help:\n{help}");
        assert!(stdout_of(&[name, "--version"]).ends_with(&version), "canopy {name} --version");
    }
    assert!(stdout_of(&["dirsvc", "bench", "--help"]).contains("Usage: canopy dirsvc bench"));
}

#[test]
fn a_usage_error_names_the_subcommand_and_exits_2() {
    let out = canopy().args(["du", "--no-such-flag"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--no-such-flag") && stderr.contains("Usage: canopy du"), "{stderr}");
}

#[test]
fn completions_cover_nested_subcommands_and_their_options() {
    let bash = stdout_of(&["completions", "bash"]);
    // Options of a tool's arguments, the subcommands nested under dirsvc, and `canopy help dirsvc bench`.
    for needle in [
        "--apparent-size",
        "--max-depth",
        "canopy__subcmd__dirsvc__subcmd__bench",
        "canopy__subcmd__help__subcmd__dirsvc__subcmd__bench",
        "--posix-only",
    ] {
        assert!(bash.contains(needle), "bash completions lack {needle}");
    }
    let zsh = stdout_of(&["completions", "zsh"]);
    assert!(zsh.contains("--apparent-size") && zsh.contains("(bench)"), "zsh completions incomplete");
    let fish = stdout_of(&["completions", "fish"]);
    assert!(fish.contains("__fish_seen_subcommand_from bench"), "fish completions incomplete");
    for shell in ["elvish", "powershell"] {
        assert!(!stdout_of(&["completions", shell]).is_empty());
    }
}

/// Admins run canopy as root to remove and copy trees: it keeps ASLR, so the binary is a
/// position-independent executable (ELF type ET_DYN), not linked `-no-pie` (ET_EXEC).
#[test]
fn the_binary_is_a_position_independent_executable() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_canopy")).unwrap();
    assert_eq!(&binary[..4], b"\x7fELF");
    const ET_DYN: u16 = 3;
    assert_eq!(u16::from_le_bytes([binary[16], binary[17]]), ET_DYN, "e_type of target/…/canopy");
}
