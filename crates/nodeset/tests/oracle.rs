//! NodeSet/RangeSet against ClusterShell itself on a few thousand generated expressions, indices past 64 bits
//! included.
//!
//! ClusterShell comes from the test venv `scripts/setup` makes (`CANOPY_TEST_PYTHON`, as `scripts/test` sets
//! it); without it the test says it is skipped. The static golden vectors in `src/golden.rs` cover
//! the same ground without Python.

use canopy_nodeset::{NodeSet, RangeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn clustershell_python() -> Option<PathBuf> {
    let python = PathBuf::from(std::env::var_os("CANOPY_TEST_PYTHON")?);
    let ready = Command::new(&python).args(["-c", "import ClusterShell"]).status().is_ok_and(|s| s.success());
    assert!(ready, "{} has no ClusterShell: run scripts/setup", python.display());
    Some(python)
}

/// Runs ClusterShell over JSON-lines requests `[kind, input]`, answering `[folded, folded_autostep3, len]`
/// or `["error", message]`.
fn ask_clustershell(python: &PathBuf, requests: &[(String, String)]) -> Vec<serde_json::Value> {
    const SCRIPT: &str = r#"
import sys, json
from ClusterShell.NodeSet import NodeSet
from ClusterShell.RangeSet import RangeSet
for line in sys.stdin:
    kind, text = json.loads(line)
    try:
        if kind == "nodeset":
            a, b = NodeSet(text), NodeSet(text, autostep=3)
        elif kind == "names":
            a, b = NodeSet.fromlist(text.split(" ")), NodeSet.fromlist(text.split(" "), autostep=3)
        else:
            a, b = RangeSet(text), RangeSet(text, autostep=3)
        print(json.dumps([str(a), str(b), len(a)]))
    except Exception as e:
        print(json.dumps(["error", str(e)]))
"#;
    let mut child = Command::new(python)
        .args(["-c", SCRIPT])
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start python");
    let mut input = String::new();
    for (kind, text) in requests {
        input += &serde_json::to_string(&(kind, text)).unwrap();
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("python output");
    writer.join().unwrap().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Gen(u64);

/// Where indices start: small, or around 2^64 and beyond (ClusterShell's indices have no size limit).
const BASES: [u128; 6] = [0, 0, 0, 18_446_744_073_709_551_610, 99_999_999_999_999_999_995, 10u128.pow(29)];

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn base(&mut self) -> u128 {
        BASES[self.below(BASES.len() as u64) as usize]
    }

    /// A padding width for indices from `base`: none, or a little wider than the base's digits.
    fn width(&mut self, base: u128) -> usize {
        let digits = base.checked_ilog10().map_or(1, |d| d as usize + 1);
        [0, 0, digits + 1, digits + 2][self.below(4) as usize]
    }

    fn index(&mut self, base: u128, width: usize) -> String {
        format!("{:0width$}", base + u128::from(self.below(14)))
    }

    fn range_item(&mut self, base: u128, width: usize) -> String {
        let (a, b) = (base + u128::from(self.below(14)), base + u128::from(self.below(14)));
        let (lo, hi) = (a.min(b), a.max(b));
        let fmt = |v: u128| format!("{v:0width$}");
        match self.below(4) {
            0 => fmt(lo),
            1 if hi > lo => format!("{}-{}/{}", fmt(lo), fmt(hi), 1 + self.below(4)),
            _ => format!("{}-{}", fmt(lo), fmt(hi)),
        }
    }

    fn axis(&mut self) -> String {
        let base = self.base();
        let width = self.width(base);
        if self.below(3) == 0 {
            return self.index(base, width);
        }
        let items: Vec<String> = (0..1 + self.below(3)).map(|_| self.range_item(base, width)).collect();
        format!("[{}]", items.join(","))
    }

    fn term(&mut self) -> String {
        let prefixes = ["n", "node", "x"];
        let infixes = ["b", "-ib", "c"];
        let mut term = self.pick(&prefixes).to_owned() + &self.axis();
        for _ in 0..self.below(3) {
            term += self.pick(&infixes);
            term += &self.axis();
        }
        term
    }

    fn expression(&mut self) -> String {
        let mut expr = self.term();
        for _ in 0..self.below(4) {
            expr += self.pick(&[",", ",", "!", "&", "^"]);
            expr += &self.term();
        }
        expr
    }

    fn rangeset(&mut self) -> String {
        let base = self.base();
        let width = self.width(base);
        (0..1 + self.below(5)).map(|_| self.range_item(base, width)).collect::<Vec<_>>().join(",")
    }

    fn names(&mut self) -> String {
        let shape: &[&str] = &["a{}", "a{}b{}", "r{}n{}c{}"];
        let shape = self.pick(shape);
        let base = self.base();
        let mut names = Vec::new();
        for _ in 0..1 + self.below(20) {
            let mut name = String::new();
            for (i, piece) in shape.split("{}").enumerate() {
                if i > 0 {
                    name += &(base + u128::from(self.below(5))).to_string();
                }
                name += piece;
            }
            names.push(name);
        }
        names.join(" ")
    }
}

#[test]
fn agrees_with_clustershell_on_generated_inputs() {
    let Some(python) = clustershell_python() else {
        canopy_testkit::skip(
            "CANOPY_TEST_PYTHON is not set (scripts/test sets it to a venv with ClusterShell)",
        );
        return;
    };
    let mut generator = Gen(0x9e37_79b9_7f4a_7c15);
    let mut requests = Vec::new();
    for _ in 0..1000 {
        requests.push(("nodeset".to_owned(), generator.expression()));
        requests.push(("names".to_owned(), generator.names()));
        requests.push(("rangeset".to_owned(), generator.rangeset()));
    }
    let answers = ask_clustershell(&python, &requests);
    assert_eq!(answers.len(), requests.len());
    let valid = answers.iter().filter(|a| a[0] != "error").count();
    assert!(valid * 10 > answers.len() * 8, "the generator must mostly produce valid inputs ({valid} valid)");
    let wide = requests.iter().zip(&answers).filter(|((_, text), answer)| {
        answer[0] != "error" && text.split(|c: char| !c.is_ascii_digit()).any(|digits| digits.len() > 19)
    });
    assert!(wide.count() * 4 > requests.len(), "a good share of the valid inputs has indices past 64 bits");
    let mut mismatches = Vec::new();
    for ((kind, text), answer) in requests.iter().zip(&answers) {
        let ours: Result<(String, String, u64), String> = match kind.as_str() {
            "nodeset" => NodeSet::parse(text).map(|s| (s.to_string(), s.folded(Some(3)), s.len())),
            "names" => {
                let set = NodeSet::from_names(text.split(' '));
                Ok((set.to_string(), set.folded(Some(3)), set.len()))
            }
            _ => RangeSet::parse(text).map(|s| (s.to_string(), s.folded(Some(3)), s.len())),
        }
        .map_err(|e| e.to_string());
        let theirs = answer.as_array().unwrap();
        let agree = match (&ours, theirs[0].as_str()) {
            (Err(_), Some("error")) => true,
            (Ok((folded, stepped, len)), Some(their_folded)) => {
                folded == their_folded && theirs[1] == stepped.as_str() && theirs[2] == *len
            }
            _ => false,
        };
        if !agree {
            mismatches.push(format!("{kind} {text:?}: ours {ours:?}, ClusterShell {answer}"));
        }
    }
    assert!(mismatches.is_empty(), "{} mismatches:\n{}", mismatches.len(), mismatches.join("\n"));
}
