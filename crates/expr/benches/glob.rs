//! find's `-name` and `-iname` matcher: one compiled pattern of each shape (literal, `*suffix`,
//! `prefix*`, `*infix*`, general) against 1,000 names like those of a generated bench tree, in the C
//! locale (bytes) and in a UTF-8 one. `cargo bench -p canopy-expr --bench glob`.

use canopy_expr::Glob;
use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const PATTERNS: [&str; 6] = ["Makefile", "*.json", "report_00*", "*_0001*", "*[0-9].t?t", "[!.]*.[ch]"];

/// `report_0001234.json`, `Data_0000007.TXT`, `Makefile`…: a dozen extensions, some upper case.
fn names() -> Vec<Vec<u8>> {
    const STEMS: [&str; 4] = ["report", "Data", "core", "main"];
    const EXTENSIONS: [&str; 12] =
        ["json", "TXT", "txt", "c", "h", "rs", "log", "csv", "h5", "tar.gz", "py", "md"];
    (0..1000)
        .map(|i| match i % 97 {
            0 => b"Makefile".to_vec(),
            _ => format!("{}_{:07}.{}", STEMS[i % 4], i * 7919 % 10_000_000, EXTENSIONS[i % 12]).into_bytes(),
        })
        .collect()
}

/// One `-name` or `-iname` pattern in the C locale (bytes) or a UTF-8 one (ASCII names: the byte
/// paths still apply).
#[derive(Clone, Copy)]
struct Test {
    pattern: &'static str,
    case_insensitive: bool,
    utf8: bool,
}

impl std::fmt::Display for Test {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let primary = if self.case_insensitive { "-iname" } else { "-name" };
        let locale = if self.utf8 { "UTF-8" } else { "C" };
        write!(f, "{primary} {} ({locale})", self.pattern)
    }
}

fn tests() -> Vec<Test> {
    let mut tests = Vec::new();
    for utf8 in [false, true] {
        for case_insensitive in [false, true] {
            tests.extend(PATTERNS.map(|pattern| Test { pattern, case_insensitive, utf8 }));
        }
    }
    tests
}

#[divan::bench(args = tests())]
fn matches(bencher: Bencher, test: Test) {
    let glob = Glob::with_charset(test.pattern.as_bytes(), test.case_insensitive, test.utf8);
    let names = names();
    bencher
        .counter(ItemsCount::new(names.len()))
        .bench(|| names.iter().filter(|name| glob.matches(black_box(name))).count());
}

/// Compiling a pattern, done once per `-name` when the expression is parsed.
#[divan::bench(args = PATTERNS)]
fn compile(pattern: &str) -> Glob {
    Glob::with_charset(black_box(pattern.as_bytes()), false, true)
}
