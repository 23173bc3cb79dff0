//! Sizes printed the way GNU du prints them: the output block size (`-B SIZE`, `-k`, `-m`, `-b`,
//! `DU_BLOCK_SIZE`, `BLOCK_SIZE`, `BLOCKSIZE`, `POSIXLY_CORRECT`) and the human-readable forms of
//! `-h` and `--si`. A port of gnulib's `humblock` and of the integer path of `human_readable`
//! (du always converts from bytes), so every number equals du's: rounded up, one decimal below 10
//! when scaled, `k` for a thousand and `K` for 1024, `iB`/`B` suffixes when the block size said so.

/// How sizes are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    /// Bytes per printed unit (ignored when scaling automatically).
    block: u64,
    /// `-h`/`--si`: pick the power that keeps the number small.
    autoscale: bool,
    /// Append the power's letter (`K`, `M`, `k`…): set by `-h`, `--si` and block sizes given as a
    /// bare unit (`-BK`, `-BMB`).
    suffix: bool,
    /// Powers of 1024 (otherwise 1000).
    base_1024: bool,
    /// Append `B` (or `iB` with powers of 1024) after the letter (`-BKB`, `-BKiB`).
    suffix_b: bool,
}

/// The power letters after k/K: mega, giga, tera, peta, exa, zetta, yotta.
const POWER_LETTERS: &[u8; 8] = b"KMGTPEZY";

impl Units {
    fn plain(block: u64) -> Units {
        Units { block, autoscale: false, suffix: false, base_1024: true, suffix_b: false }
    }

    /// `-b` (and `--inodes`): plain numbers, no scaling.
    pub fn bytes() -> Units {
        Units::plain(1)
    }

    /// `-k`.
    pub fn kibibytes() -> Units {
        Units::plain(1024)
    }

    /// `-m`.
    pub fn mebibytes() -> Units {
        Units::plain(1024 * 1024)
    }

    /// `-h`: powers of 1024, `K M G…`.
    pub fn human() -> Units {
        Units { block: 1, autoscale: true, suffix: true, base_1024: true, suffix_b: false }
    }

    /// `--si`: powers of 1000, `k M G…`.
    pub fn si() -> Units {
        Units { block: 1, autoscale: true, suffix: true, base_1024: false, suffix_b: false }
    }

    /// `--inodes` counts with the formatting options chosen (`-h` still scales), one per unit.
    pub fn for_counts(self) -> Units {
        Units { block: 1, ..self }
    }

    /// What du uses when no size option is given: `DU_BLOCK_SIZE`, then `BLOCK_SIZE`, then
    /// `BLOCKSIZE` from the environment, else 1024 (512 under `POSIXLY_CORRECT`).
    pub fn from_env() -> Units {
        let var = |name: &str| std::env::var(name).ok();
        let spec = var("DU_BLOCK_SIZE").or_else(|| var("BLOCK_SIZE")).or_else(|| var("BLOCKSIZE"));
        spec.and_then(|s| Units::parse(&s).ok()).unwrap_or_else(|| Units::plain(default_block()))
    }

    /// A `-B`/`--block-size` argument: `1K`, `K`, `KB`, `KiB`, `1M`, `human-readable`, `si`…
    pub fn parse(spec: &str) -> Result<Units, String> {
        let invalid = || format!("invalid -B argument '{spec}'");
        // A leading quote asks for digit grouping, which the C locale does not do.
        let text = spec.strip_prefix('\'').unwrap_or(spec);
        if !text.is_empty() {
            if "human-readable".starts_with(text) {
                return Ok(Units::human());
            }
            if "si".starts_with(text) {
                return Ok(Units::si());
            }
        }
        let (number, rest) = leading_number(text).ok_or_else(invalid)?;
        let (block, suffix_len) = match (number, rest.chars().next()) {
            (number, None) => (number.ok_or_else(invalid)?, 0),
            (number, Some(letter)) => {
                let power = power_of(letter).ok_or_else(invalid)?;
                let (base, len) = match &rest[letter.len_utf8()..] {
                    "iB" => (1024u64, 3),
                    after if after.starts_with('B') || after.starts_with('D') => (1000, 2),
                    _ => (1024, 1),
                };
                if rest.len() != len {
                    return Err(invalid());
                }
                let scale = base.checked_pow(power).ok_or_else(invalid)?;
                (number.unwrap_or(1).checked_mul(scale).ok_or_else(invalid)?, len)
            }
        };
        if block == 0 {
            return Err(invalid());
        }
        let mut units = Units::plain(block);
        if !text.starts_with(|c: char| c.is_ascii_digit()) && suffix_len > 0 {
            // A bare unit (`K`, `MiB`, `GB`) is printed after every number.
            let last = text.as_bytes()[text.len() - 1];
            units.suffix = true;
            units.suffix_b = last == b'B';
            units.base_1024 = last != b'B' || text.ends_with("iB");
        }
        Ok(units)
    }

    /// `n` (bytes, or entries for `--inodes`) as du prints it.
    pub fn format(&self, n: u64) -> String {
        let base: u128 = if self.base_1024 { 1024 } else { 1000 };
        let divisor = u128::from(self.block.max(1));
        let n = u128::from(n);
        // amount.tenths, with `rounding` telling what lies beyond the tenths: 0 nothing, 1 less
        // than half a tenth, 2 exactly half, 3 more than half.
        let mut amount = n / divisor;
        let r10 = (n % divisor) * 10;
        let r2 = (r10 % divisor) * 2;
        let mut tenths = r10 / divisor;
        let mut rounding = if r2 < divisor { u128::from(r2 > 0) } else { 2 + u128::from(divisor < r2) };
        let mut exponent: Option<u32> = None;
        let mut fraction = String::new();
        if self.autoscale {
            let mut power = 0;
            if base <= amount {
                loop {
                    let r10 = (amount % base) * 10 + tenths;
                    let r2 = (r10 % base) * 2 + (rounding >> 1);
                    amount /= base;
                    tenths = r10 / base;
                    rounding = if r2 < base {
                        u128::from(r2 + rounding != 0)
                    } else {
                        2 + u128::from(base < r2 + rounding)
                    };
                    power += 1;
                    if !(base <= amount && power < POWER_LETTERS.len() as u32) {
                        break;
                    }
                }
                if amount < 10 {
                    if rounding > 0 {
                        tenths += 1;
                        rounding = 0;
                        if tenths == 10 {
                            amount += 1;
                            tenths = 0;
                        }
                    }
                    if amount < 10 {
                        fraction = format!(".{tenths}");
                        tenths = 0;
                        rounding = 0;
                    }
                }
            }
            exponent = Some(power);
        }
        if tenths + rounding > 0 {
            amount += 1;
            if let Some(power) = exponent.as_mut()
                && amount == base
                && *power < POWER_LETTERS.len() as u32
            {
                *power += 1;
                fraction = ".0".to_string();
                amount = 1;
            }
        }
        let mut out = format!("{amount}{fraction}");
        if self.suffix {
            let power = exponent.unwrap_or_else(|| self.power_of_block(base));
            if power > 0 {
                let letter = if !self.base_1024 && power == 1 {
                    'k'
                } else {
                    POWER_LETTERS[power as usize - 1] as char
                };
                out.push(letter);
            }
            if self.suffix_b {
                if self.base_1024 && power > 0 {
                    out.push('i');
                }
                out.push('B');
            }
        }
        out
    }

    /// The power of the base the block size is (1 for 1K, 2 for 1M…), for the suffix of `-BK`.
    fn power_of_block(&self, base: u128) -> u32 {
        let mut power = 0;
        let mut value: u128 = 1;
        while value < u128::from(self.block) {
            value *= base;
            power += 1;
            if power == POWER_LETTERS.len() as u32 {
                break;
            }
        }
        power
    }
}

/// A `--threshold` argument as gnulib's `xstrtoimax` reads it for du: a signed number (base 0) or
/// none (1), an optional power letter `k K m M G T P E Z Y`, then `B` or `D` (powers of 1000) or
/// `iB`. `-0` is refused: a negative threshold keeps entries at most that large.
pub fn parse_threshold(spec: &str) -> Result<i64, String> {
    let invalid = |what: &str| format!("invalid {what}--threshold argument '{spec}'");
    let (negative, text) = match spec.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, spec.strip_prefix('+').unwrap_or(spec)),
    };
    let (number, rest) = leading_number(text).ok_or_else(|| invalid(""))?;
    let mut value = match (number, rest.chars().next()) {
        (None, None) => return Err(invalid("")),
        (None, Some(letter)) if !"kKmMGTPEZY".contains(letter) => return Err(invalid("")),
        (number, _) => number.unwrap_or(1),
    };
    if let Some(letter) = rest.chars().next() {
        let power = power_of(letter)
            .filter(|_| "kKmMGTPEZY".contains(letter))
            .ok_or_else(|| invalid("suffix in "))?;
        let base = match &rest[1..] {
            "iB" | "" => 1024u64,
            "B" | "D" => 1000,
            _ => return Err(invalid("suffix in ")),
        };
        value =
            base.checked_pow(power).and_then(|scale| value.checked_mul(scale)).ok_or_else(|| invalid(""))?;
    }
    let value = i64::try_from(value).map_err(|_| invalid(""))?;
    if negative && value == 0 {
        return Err(format!("invalid --threshold argument '{spec}'"));
    }
    Ok(if negative { -value } else { value })
}

fn default_block() -> u64 {
    if std::env::var_os("POSIXLY_CORRECT").is_some() { 512 } else { 1024 }
}

/// The number at the start of `text` (C's base 0: `0x` hex, leading `0` octal, else decimal), or
/// `None` when there are no digits, and the rest. `None` overall on overflow.
fn leading_number(text: &str) -> Option<(Option<u64>, &str)> {
    let (radix, digits_start) = if text.starts_with("0x") || text.starts_with("0X") {
        (16, 2)
    } else if text.starts_with('0') && text.len() > 1 {
        (8, 1)
    } else {
        (10, 0)
    };
    let body = &text[digits_start..];
    let end = body.find(|c: char| !c.is_digit(radix)).unwrap_or(body.len());
    if end == 0 {
        return if digits_start == 0 { Some((None, text)) } else { Some((Some(0), &text[1..])) };
    }
    let value = u64::from_str_radix(&body[..end], radix).ok()?;
    Some((Some(value), &body[end..]))
}

/// The power a size letter stands for (`k`/`K` 1, `M` 2 … `Y` 8), as du's `-B` accepts them.
fn power_of(letter: char) -> Option<u32> {
    Some(match letter {
        'k' | 'K' => 1,
        'm' | 'M' => 2,
        'g' | 'G' => 3,
        't' | 'T' => 4,
        'p' | 'P' => 5,
        'e' | 'E' => 6,
        'z' | 'Z' => 7,
        'y' | 'Y' => 8,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected strings are GNU du 9.1's for the same sizes.
    #[test]
    fn human_readable_like_gnu() {
        let h = Units::human();
        let cases = [
            (0, "0"),
            (1, "1"),
            (1020, "1020"),
            (1023, "1023"),
            (1024, "1.0K"),
            (1025, "1.1K"),
            (4096, "4.0K"),
            (10_239, "10K"),
            (10_240, "10K"),
            (10_241, "11K"),
            (20_480, "20K"),
            (1_048_575, "1.0M"),
            (1_048_576, "1.0M"),
            (1_048_577, "1.1M"),
            (10_485_760, "10M"),
            (u64::MAX, "16E"),
        ];
        for (n, want) in cases {
            assert_eq!(h.format(n), want, "-h {n}");
        }
        let si = Units::si();
        for (n, want) in
            [(999, "999"), (1000, "1.0k"), (20_480, "21k"), (999_999, "1.0M"), (1_500_000, "1.5M")]
        {
            assert_eq!(si.format(n), want, "--si {n}");
        }
    }

    #[test]
    fn thresholds_like_gnu() {
        for (spec, want) in [
            ("5k", 5120),
            ("5K", 5120),
            ("-5k", -5120),
            ("5KB", 5000),
            ("5KiB", 5120),
            ("0x10", 16),
            ("010", 8),
            ("1M", 1 << 20),
            ("M", 1 << 20),
            ("7", 7),
            ("0", 0),
        ] {
            assert_eq!(parse_threshold(spec), Ok(want), "{spec}");
        }
        assert_eq!(parse_threshold("-0").unwrap_err(), "invalid --threshold argument '-0'");
        assert_eq!(parse_threshold("1x").unwrap_err(), "invalid suffix in --threshold argument '1x'");
        for bad in ["", "x", "1g", "1KBB", "99999999999999999999", "16E"] {
            assert!(parse_threshold(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn block_sizes_round_up() {
        assert_eq!(Units::kibibytes().format(20_480), "20");
        assert_eq!(Units::kibibytes().format(1), "1");
        assert_eq!(Units::kibibytes().format(0), "0");
        assert_eq!(Units::mebibytes().format(20_480), "1");
        assert_eq!(Units::parse("3").unwrap().format(20_480), "6827");
        assert_eq!(Units::bytes().format(10_502_147), "10502147");
    }

    #[test]
    fn block_size_arguments_like_gnu() {
        let show = |spec: &str, n: u64| Units::parse(spec).unwrap().format(n);
        assert_eq!(show("1K", 20_480), "20");
        assert_eq!(show("K", 20_480), "20K");
        assert_eq!(show("k", 20_480), "20K");
        assert_eq!(show("KB", 20_480), "21kB");
        assert_eq!(show("1KB", 20_480), "21");
        assert_eq!(show("KiB", 20_480), "20KiB");
        assert_eq!(show("M", 20_480), "1M");
        assert_eq!(show("MB", 20_480), "1MB");
        assert_eq!(show("1", 20_480), "20480");
        assert_eq!(show("0x10", 32), "2");
        assert_eq!(show("010", 16), "2");
        assert_eq!(show("'1", 1_234_567), "1234567");
        assert_eq!(Units::parse("human").unwrap(), Units::human());
        assert_eq!(Units::parse("si").unwrap(), Units::si());
        for bad in ["", "0", "x", "1x", "K1", "1KBB", "-1", "99999999999999999999", "1Y"] {
            assert!(Units::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
