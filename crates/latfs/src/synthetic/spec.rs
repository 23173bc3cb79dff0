//! The SPEC language of `canopy latfs --synthetic`: which tree to generate.
//!
//! ```text
//! SPEC   = PART[+PART…][,OPTION…]
//! PART   = wide[:DIRSxFILES] | deep[:FANOUTxDEPTH[xFILES]] | flat[:N] | irregular[:N]
//! OPTION = total=N | seed=N | symlinks=P% | hardlinks=P%
//! ```
//!
//! The shapes are those of the benchmarks' generated trees (`bench/lib/treespec.py`). Numbers take
//! `_` separators and decimal suffixes: `1e8`, `10^8`, `100M`, `250k`, `1_000_000`.

use std::fmt;
use std::str::FromStr;

/// The most entries a synthetic tree may have (2^48, about 2.8 × 10^14).
pub const MAX_ENTRIES: u64 = 1 << 48;

/// The deepest `deep:` tree: every request walks down from the root, one step per level.
pub const MAX_DEPTH: u32 = 1 << 16;

const FORMS: &str = "the forms are PART[+PART…][,OPTION…] with
  PART   wide[:DIRSxFILES]              DIRS directories of FILES files (default 1000x100)
         deep[:FANOUTxDEPTH[xFILES]]    a balanced tree, FILES in every directory (default 5x7x2)
         flat[:N]                       one directory of N files (default 1000000)
         irregular[:N]                  N entries, power-law directory sizes (default 1000000)
  OPTION total=N  seed=N  symlinks=P%  hardlinks=P%
  numbers: 1000000, 1_000_000, 1e6, 10^6, 1M (k, M, G, T)";

/// The shape of one part of the tree; the numbers are those written in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Wide { dirs: u64, files: u64 },
    Deep { fanout: u64, depth: u32, files: u64 },
    Flat { files: u64 },
    Irregular { entries: u64 },
}

/// One part of the tree: the whole tree when it is the only one, else a directory under the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub shape: Shape,
    /// The part's directory name under the root (unused when it is the only part).
    pub name: String,
    /// Entries in the part, its top directory included.
    pub entries: u64,
}

/// A share of the file slots, in parts per million.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share(pub u32);

/// A parsed SPEC: everything the generated tree depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub parts: Vec<Part>,
    /// The entry count asked with `total=`, if any.
    pub total: Option<u64>,
    pub seed: u64,
    pub symlinks: Share,
    pub hardlinks: Share,
}

impl Spec {
    /// Entries in the whole tree, the root included: what `find MOUNTPOINT | wc -l` prints.
    pub fn entries(&self) -> u64 {
        match self.parts.as_slice() {
            [only] => only.entries,
            parts => 1 + parts.iter().map(|p| p.entries).sum::<u64>(),
        }
    }

    /// Whether the root is made of several parts, each a directory below it.
    pub fn is_composed(&self) -> bool {
        self.parts.len() > 1
    }
}

impl Shape {
    fn parse(text: &str) -> Result<Shape, String> {
        let (kind, params) = text.split_once(':').unwrap_or((text, ""));
        let numbers = |default: &str, min: usize, max: usize| -> Result<Vec<u64>, String> {
            let params = if params.is_empty() { default } else { params };
            let numbers = params.split('x').map(parse_count).collect::<Result<Vec<u64>, String>>()?;
            if !(min..=max).contains(&numbers.len()) {
                return Err(format!("'{text}' needs {min} to {max} numbers separated by 'x'"));
            }
            Ok(numbers)
        };
        let shape = match kind {
            "wide" => {
                let n = numbers("1000x100", 2, 2)?;
                Shape::Wide { dirs: n[0], files: n[1] }
            }
            "deep" => {
                let n = numbers("5x7x2", 2, 3)?;
                let depth = u32::try_from(n[1]).ok().filter(|&d| d <= MAX_DEPTH);
                let depth = depth.ok_or(format!("'{text}': the depth must be at most {MAX_DEPTH}"))?;
                Shape::Deep { fanout: n[0], depth, files: n.get(2).copied().unwrap_or(2) }
            }
            "flat" => Shape::Flat { files: numbers("1000000", 1, 1)?[0] },
            "irregular" => Shape::Irregular { entries: numbers("1000000", 1, 1)?[0] },
            _ => return Err(format!("unknown shape '{kind}'")),
        };
        let positive = match shape {
            Shape::Wide { dirs, .. } => dirs > 0,
            Shape::Deep { fanout, depth, .. } => fanout > 0 && depth > 0,
            Shape::Flat { .. } => true,
            Shape::Irregular { entries } => entries > 0,
        };
        if !positive {
            return Err(format!("'{text}': directory counts, fanout, depth and sizes must be at least 1"));
        }
        Ok(shape)
    }

    /// Entries the shape has as written, its top directory included (saturating far above
    /// [`MAX_ENTRIES`]).
    pub fn natural_entries(&self) -> u128 {
        match *self {
            Shape::Wide { dirs, files } => 1 + u128::from(dirs) * (1 + u128::from(files)),
            Shape::Deep { fanout, depth, files } => {
                (1 + u128::from(files)).saturating_mul(geometric_sum(fanout, depth + 1))
            }
            Shape::Flat { files } => 1 + u128::from(files),
            Shape::Irregular { entries } => u128::from(entries),
        }
    }

    /// The name of a part of this shape, as the benchmarks name their generated trees.
    fn name(&self) -> String {
        self.to_string().replacen(':', "-", 1)
    }
}

/// 1 + f + f² + … + f^(terms-1), saturating far above [`MAX_ENTRIES`].
pub(crate) fn geometric_sum(fanout: u64, terms: u32) -> u128 {
    let (mut sum, mut power) = (0u128, 1u128);
    for _ in 0..terms {
        sum = sum.saturating_add(power);
        power = power.saturating_mul(u128::from(fanout));
        if sum > u128::from(u64::MAX) {
            return sum;
        }
    }
    sum
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Wide { dirs, files } => write!(f, "wide:{dirs}x{files}"),
            Shape::Deep { fanout, depth, files } => write!(f, "deep:{fanout}x{depth}x{files}"),
            Shape::Flat { files } => write!(f, "flat:{files}"),
            Shape::Irregular { entries } => write!(f, "irregular:{entries}"),
        }
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, fraction) = (self.0 / 10_000, self.0 % 10_000);
        if fraction == 0 {
            write!(f, "{whole}%")
        } else {
            write!(f, "{whole}.{}%", format!("{fraction:04}").trim_end_matches('0'))
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.parts.iter().map(|p| p.shape.to_string()).collect();
        write!(f, "{}", parts.join("+"))?;
        if let Some(total) = self.total {
            write!(f, ",total={total}")?;
        }
        write!(f, ",seed={},symlinks={},hardlinks={}", self.seed, self.symlinks, self.hardlinks)
    }
}

impl FromStr for Spec {
    type Err = String;

    fn from_str(text: &str) -> Result<Spec, String> {
        parse(text).map_err(|reason| format!("{reason}\n{FORMS}"))
    }
}

fn parse(text: &str) -> Result<Spec, String> {
    let mut items = text.split(',');
    let shapes = items.next().unwrap_or("").split('+').map(Shape::parse).collect::<Result<Vec<_>, _>>()?;
    let mut spec =
        Spec { parts: Vec::new(), total: None, seed: 1, symlinks: Share(10_000), hardlinks: Share(10_000) };
    for option in items {
        let (key, value) = option.split_once('=').ok_or(format!("option '{option}' is not KEY=VALUE"))?;
        match key {
            "total" => spec.total = Some(parse_count(value)?),
            "seed" => spec.seed = value.parse().map_err(|_| format!("seed '{value}' is not a number"))?,
            "symlinks" => spec.symlinks = parse_share(value)?,
            "hardlinks" => spec.hardlinks = parse_share(value)?,
            _ => return Err(format!("unknown option '{key}'")),
        }
    }
    if spec.symlinks.0 + spec.hardlinks.0 > 1_000_000 {
        return Err("symlinks and hardlinks together exceed 100%".to_string());
    }
    let sizes = part_sizes(&shapes, spec.total)?;
    let mut names: Vec<String> = Vec::new();
    for (shape, entries) in shapes.into_iter().zip(sizes) {
        let base = shape.name();
        let taken = names.iter().filter(|n| **n == base || n.starts_with(&format!("{base}."))).count();
        let name = if taken == 0 { base } else { format!("{base}.{}", taken + 1) };
        names.push(name.clone());
        spec.parts.push(Part { shape, name, entries });
    }
    Ok(spec)
}

/// Each part's entries: as written, or scaled in proportion so the whole tree has `total`.
fn part_sizes(shapes: &[Shape], total: Option<u64>) -> Result<Vec<u64>, String> {
    let too_many = || format!("the tree would have more than {MAX_ENTRIES} entries (2^48)");
    let naturals: Vec<u128> = shapes.iter().map(Shape::natural_entries).collect();
    if let [natural] = naturals[..] {
        let entries = total.map_or(natural, u128::from);
        if entries == 0 {
            return Err("total=0: a tree has at least its root".to_string());
        }
        return u64::try_from(entries)
            .ok()
            .filter(|&n| n <= MAX_ENTRIES)
            .map(|n| vec![n])
            .ok_or_else(too_many);
    }
    let Some(total) = total else {
        let sum = naturals.iter().fold(1u128, |sum, n| sum.saturating_add(*n));
        if sum > u128::from(MAX_ENTRIES) {
            return Err(too_many());
        }
        return Ok(naturals.iter().map(|&n| n as u64).collect());
    };
    if total > MAX_ENTRIES {
        return Err(too_many());
    }
    let budget = total.checked_sub(1).filter(|&b| b >= shapes.len() as u64);
    let budget =
        budget.ok_or(format!("total={total} is too small for the root and {} parts", shapes.len()))?;
    let weight = naturals.iter().fold(0u128, |sum, n| sum.saturating_add(*n));
    let mut sizes: Vec<u64> =
        naturals.iter().map(|&n| ((n.saturating_mul(u128::from(budget)) / weight) as u64).max(1)).collect();
    // Rounding left a few entries over (or, after raising empty parts to 1, short): the largest part
    // absorbs the difference, and stays at least 1 since it holds at least budget / parts.
    let largest = (0..sizes.len()).max_by_key(|&i| sizes[i]).unwrap_or(0);
    let others: u64 = sizes.iter().sum::<u64>() - sizes[largest];
    sizes[largest] = budget - others;
    Ok(sizes)
}

/// A count: digits with optional `_`, an exponent (`1e6`, `10^6`) or a decimal suffix (k M G T).
pub(crate) fn parse_count(text: &str) -> Result<u64, String> {
    let bad = || format!("'{text}' is not a count (e.g. 1000, 1e6, 10^6, 1M)");
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let (number, scale) = match clean.chars().last() {
        Some('k' | 'K') => (&clean[..clean.len() - 1], 1_000),
        Some('M') => (&clean[..clean.len() - 1], 1_000_000),
        Some('G') => (&clean[..clean.len() - 1], 1_000_000_000),
        Some('T') => (&clean[..clean.len() - 1], 1_000_000_000_000),
        _ => (clean.as_str(), 1),
    };
    let digits = |s: &str| -> Result<u64, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let value = if let Some((mantissa, exponent)) = number.split_once(['e', 'E']) {
        let exponent = u32::try_from(digits(exponent)?).map_err(|_| bad())?;
        10u64.checked_pow(exponent).and_then(|power| digits(mantissa).ok()?.checked_mul(power))
    } else if let Some((base, exponent)) = number.split_once('^') {
        digits(base)?.checked_pow(u32::try_from(digits(exponent)?).map_err(|_| bad())?)
    } else {
        Some(digits(number)?)
    };
    value.and_then(|v| v.checked_mul(scale)).ok_or_else(bad)
}

/// A percentage with up to four decimals (`1%`, `0.25%`), or `0`.
fn parse_share(text: &str) -> Result<Share, String> {
    let bad = || format!("'{text}' is not a percentage between 0% and 100% (e.g. 1%, 0.5%)");
    if text == "0" {
        return Ok(Share(0));
    }
    let number = text.strip_suffix('%').ok_or_else(bad)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) || fraction.len() > 4 {
        return Err(bad());
    }
    let whole: u32 = whole.parse().map_err(|_| bad())?;
    let fraction: u32 = format!("{fraction:0<4}").parse().map_err(|_| bad())?;
    let ppm = whole.checked_mul(10_000).and_then(|w| w.checked_add(fraction)).filter(|&p| p <= 1_000_000);
    ppm.map(Share).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Spec {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn counts_take_separators_exponents_and_suffixes() {
        for (text, value) in [
            ("1000", 1000),
            ("1_000_000", 1_000_000),
            ("1e8", 100_000_000),
            ("25E5", 2_500_000),
            ("10^9", 1_000_000_000),
            ("250k", 250_000),
            ("100M", 100_000_000),
            ("1G", 1_000_000_000),
            ("2T", 2_000_000_000_000),
        ] {
            assert_eq!(parse_count(text), Ok(value), "{text}");
        }
        for bad in ["", "x", "-1", "1.5e6", "1e", "e6", "10^", "1e30", "99999999999999999999", "5Q"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shares_are_percentages() {
        assert_eq!(parse_share("1%"), Ok(Share(10_000)));
        assert_eq!(parse_share("0.25%"), Ok(Share(2_500)));
        assert_eq!(parse_share("100%"), Ok(Share(1_000_000)));
        assert_eq!(parse_share("0"), Ok(Share(0)));
        for bad in ["1", "101%", "0.12345%", "%", "a%", "-1%"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
        assert_eq!(Share(2_500).to_string(), "0.25%");
        assert_eq!(Share(10_000).to_string(), "1%");
    }

    #[test]
    fn shapes_count_their_entries_as_the_bench_trees_do() {
        // wide: the root and 1000 directories of 100 files.
        assert_eq!(spec("wide").entries(), 1 + 1000 * 101);
        assert_eq!(spec("wide:20x50").entries(), 1 + 20 * 51);
        // deep:5x7x2: 97,656 directories (the root included), each with 2 files.
        assert_eq!(spec("deep").entries(), 97_656 * 3);
        assert_eq!(spec("deep:1x10x0").entries(), 11, "a chain: the root and 10 levels");
        assert_eq!(spec("flat:1000").entries(), 1001);
        assert_eq!(spec("irregular:12345").entries(), 12345);
    }

    #[test]
    fn composed_parts_are_directories_under_the_root() {
        let composed = spec("wide:10x10+flat:100+flat:100");
        assert!(composed.is_composed());
        let names: Vec<&str> = composed.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["wide-10x10", "flat-100", "flat-100.2"]);
        assert_eq!(composed.entries(), 1 + 111 + 101 + 101);
    }

    #[test]
    fn a_total_scales_the_parts_in_proportion_and_is_exact() {
        let single = spec("wide:1000x100,total=1e8");
        assert_eq!(single.entries(), 100_000_000);
        let composed = spec("wide:10x10+irregular:333+flat:1000,total=10^7");
        assert_eq!(composed.entries(), 10_000_000);
        let sizes: Vec<u64> = composed.parts.iter().map(|p| p.entries).collect();
        // In proportion to 111 : 333 : 1001, to within the rounding the largest part absorbs.
        assert_eq!(sizes[0], 111 * 9_999_999 / 1445);
        assert_eq!(sizes[1], 333 * 9_999_999 / 1445);
        assert_eq!(sizes.iter().sum::<u64>(), 9_999_999);
        let tiny = spec("flat:1+flat:1000000,total=3");
        assert_eq!(tiny.parts.iter().map(|p| p.entries).collect::<Vec<_>>(), [1, 1]);
    }

    #[test]
    fn options_and_their_canonical_form() {
        let parsed = spec("deep:3x4+irregular:1M,total=1e6,seed=7,symlinks=0.5%,hardlinks=0");
        assert_eq!((parsed.seed, parsed.symlinks, parsed.hardlinks), (7, Share(5_000), Share(0)));
        let canonical = "deep:3x4x2+irregular:1000000,total=1000000,seed=7,symlinks=0.5%,hardlinks=0%";
        assert_eq!(parsed.to_string(), canonical);
        assert_eq!(spec(canonical), parsed, "the canonical form parses back to the same spec");
        assert_eq!(spec("flat:5").to_string(), "flat:5,seed=1,symlinks=1%,hardlinks=1%");
    }

    #[test]
    fn bad_specs_say_why_and_show_the_forms() {
        for (text, reason) in [
            ("round:5", "unknown shape 'round'"),
            ("wide:5", "needs 2 to 2 numbers"),
            ("wide:0x5", "at least 1"),
            ("deep:2x100000", "depth must be at most"),
            ("deep:10x30", "more than 281474976710656 entries"),
            ("flat:10,colour=red", "unknown option 'colour'"),
            ("flat:10,seed", "not KEY=VALUE"),
            ("flat:10,symlinks=60%,hardlinks=50%", "exceed 100%"),
            ("flat:1+flat:1,total=2", "too small"),
            ("flat:1,total=0", "at least its root"),
            ("", "unknown shape ''"),
        ] {
            let error = text.parse::<Spec>().unwrap_err();
            assert!(error.contains(reason) && error.contains("the forms are"), "{text}: {error}");
        }
        assert!(spec("deep:10x30,total=1e6").entries() == 1_000_000, "a total bounds a huge shape");
    }
}
