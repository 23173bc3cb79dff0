//! GNU find as the oracle of the `canopy walk` end-to-end tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

pub const DAY: Duration = Duration::from_secs(86_400);

/// The `canopy` binary under test.
pub fn canopy() -> Command {
    Command::new(env!("CARGO_BIN_EXE_canopy"))
}

pub fn run_canopy(args: &[&OsStr]) -> Output {
    canopy().args(args).output().expect("canopy runs")
}

#[allow(unused_imports)] // each test binary uses some of them
pub use canopy_testkit::{hostile_tree, is_root, root_or_skip};

pub fn write_file(path: &Path, size: u64) {
    fs::write(path, vec![b'x'; size as usize]).unwrap();
}

/// One line of GNU find's `-printf`: what `stat` says about a path.
#[derive(Clone, Debug)]
pub struct Found {
    pub path: Vec<u8>,
    /// `%y`: f d l p s b c.
    pub letter: char,
    pub size: u64,
    pub blocks: u64,
    pub uid: u32,
    pub gid: u32,
    pub inode: u64,
    pub nlink: u64,
    pub dev: u64,
    pub depth: u32,
    /// `%m`: permission bits.
    pub perm: u32,
    pub atime_ns: i64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl Found {
    /// The type name canopy's outputs use.
    pub fn type_name(&self) -> &'static str {
        match self.letter {
            'f' => "file",
            'd' => "dir",
            'l' => "symlink",
            'p' => "fifo",
            's' => "socket",
            'b' => "block",
            'c' => "char",
            other => panic!("unexpected find type {other}"),
        }
    }

    /// The full `st_mode`: type bits from `%y`, permissions from `%m`.
    pub fn mode(&self) -> u32 {
        let type_bits = match self.letter {
            'f' => 0o100000,
            'd' => 0o040000,
            'l' => 0o120000,
            'p' => 0o010000,
            's' => 0o140000,
            'b' => 0o060000,
            'c' => 0o020000,
            other => panic!("unexpected find type {other}"),
        };
        type_bits | self.perm
    }

    /// The directory containing this entry (for depth ≥ 1).
    pub fn parent(&self) -> &[u8] {
        let cut = self.path.iter().rposition(|&b| b == b'/').unwrap();
        &self.path[..cut]
    }
}

const FIELDS: usize = 14;
const FORMAT: &str = "%y\\0%s\\0%b\\0%U\\0%G\\0%i\\0%n\\0%D\\0%d\\0%m\\0%A@\\0%T@\\0%C@\\0%p\\0";

/// Runs `find ROOTS -printf …` (through `wrapper`, e.g. setpriv, when given) and parses every line.
/// Returns the entries and find's exit status.
pub fn find(roots: &[&Path], wrapper: &[&str]) -> (Vec<Found>, i32) {
    let mut cmd = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg("find");
            c
        }
        None => Command::new("find"),
    };
    let out = cmd.args(roots).args(["-printf", FORMAT]).output().expect("GNU find runs");
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    // The output ends with NUL, so the split leaves one empty field at the end.
    assert_eq!((fields.len() - 1) % FIELDS, 0, "find output is whole records");
    let entries = fields[..fields.len() - 1]
        .chunks(FIELDS)
        .map(|f| {
            let text = |i: usize| std::str::from_utf8(f[i]).unwrap();
            let num = |i: usize| text(i).parse::<u64>().unwrap();
            Found {
                letter: text(0).chars().next().unwrap(),
                size: num(1),
                blocks: num(2),
                uid: num(3) as u32,
                gid: num(4) as u32,
                inode: num(5),
                nlink: num(6),
                dev: num(7),
                depth: num(8) as u32,
                perm: u32::from_str_radix(text(9), 8).unwrap(),
                atime_ns: seconds_to_ns(text(10)),
                mtime_ns: seconds_to_ns(text(11)),
                ctime_ns: seconds_to_ns(text(12)),
                path: f[13].to_vec(),
            }
        })
        .collect();
    (entries, out.status.code().unwrap_or(-1))
}

/// find's `%T@` (`1700000000.1234567890`) as nanoseconds.
fn seconds_to_ns(text: &str) -> i64 {
    let (sec, frac) = text.split_once('.').unwrap_or((text, "0"));
    let nanos = format!("{frac:0<9}")[..9].parse::<i64>().unwrap();
    sec.parse::<i64>().unwrap() * 1_000_000_000 + nanos
}
