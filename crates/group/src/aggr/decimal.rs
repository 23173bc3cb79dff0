//! Exact decimal numbers for the numeric aggregations.
//!
//! Sums and averages must not depend on the shape of the aggregation tree, and floating-point addition is
//! not associative, so numbers are fixed-point with nine fractional digits in an `i128`: adding them is exact
//! in any order. Values parsed from file data with more than nine fractional digits are not numbers to the
//! aggregations (they are skipped, not rounded).

use serde::{Deserialize, Serialize};
use std::fmt;

const SCALE: i128 = 1_000_000_000;
const FRACTION_DIGITS: usize = 9;

/// A fixed-point decimal with nine fractional digits; sums saturate at about ±1.7e29.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Decimal {
    nanos: i128,
}

impl Decimal {
    /// Zero.
    pub const ZERO: Decimal = Decimal { nanos: 0 };

    /// An integer.
    pub fn from_int(value: i64) -> Decimal {
        Decimal { nanos: i128::from(value) * SCALE }
    }

    /// An unsigned integer.
    pub fn from_u64(value: u64) -> Decimal {
        Decimal { nanos: i128::from(value) * SCALE }
    }

    /// A time as seconds and nanoseconds since the epoch.
    pub fn from_seconds(seconds: i64, nanos: u32) -> Decimal {
        Decimal { nanos: i128::from(seconds) * SCALE + i128::from(nanos) }
    }

    /// Parses `[+-]digits[.digits]` (no exponent, at most nine fractional digits and 20 integer digits).
    pub fn parse(text: &str) -> Option<Decimal> {
        let (negative, unsigned) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int_part.is_empty()
            || int_part.len() > 20
            || frac_part.len() > FRACTION_DIGITS
            || !all_digits(int_part)
            || !all_digits(frac_part)
            || (unsigned.ends_with('.'))
        {
            return None;
        }
        let int: i128 = int_part.parse().ok()?;
        let frac: i128 = if frac_part.is_empty() {
            0
        } else {
            frac_part.parse::<i128>().ok()? * 10i128.pow((FRACTION_DIGITS - frac_part.len()) as u32)
        };
        let nanos = int * SCALE + frac;
        Some(Decimal { nanos: if negative { -nanos } else { nanos } })
    }

    /// Exact addition (saturating at the representable range).
    pub fn saturating_add(self, other: Decimal) -> Decimal {
        Decimal { nanos: self.nanos.saturating_add(other.nanos) }
    }

    /// `self / count`, rounded half away from zero to nine fractional digits.
    pub fn div_count(self, count: u64) -> Decimal {
        let count = i128::from(count.max(1));
        let quotient = self.nanos / count;
        let remainder = self.nanos % count;
        let round_away = remainder.abs() * 2 >= count;
        let nanos = if round_away { quotient + self.nanos.signum() } else { quotient };
        Decimal { nanos }
    }

    /// The value as an integer, when it is one and fits.
    pub fn to_i64(self) -> Option<i64> {
        (self.nanos % SCALE == 0).then(|| i64::try_from(self.nanos / SCALE).ok()).flatten()
    }

    /// The nearest `f64`, for display and JSON.
    pub fn to_f64(self) -> f64 {
        self.nanos as f64 / SCALE as f64
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.nanos < 0 { "-" } else { "" };
        let abs = self.nanos.unsigned_abs();
        let (int, frac) = (abs / SCALE as u128, abs % SCALE as u128);
        if frac == 0 {
            return write!(f, "{sign}{int}");
        }
        let frac = format!("{frac:09}");
        write!(f, "{sign}{int}.{}", frac.trim_end_matches('0'))
    }
}

/// The numbers in a text: whitespace-separated tokens, position by position; a token that is not a number
/// is `None` at its position (so `0.52 0.58 0.59 1/234 5678` is five columns, the fourth not numeric).
pub fn columns(text: &[u8]) -> Vec<Option<Decimal>> {
    text.split(|b| b.is_ascii_whitespace())
        .filter(|token| !token.is_empty())
        .map(|token| std::str::from_utf8(token).ok().and_then(Decimal::parse))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_exactly() {
        for (text, shown) in [
            ("0.52", "0.52"),
            ("-3", "-3"),
            ("+7.500", "7.5"),
            ("12345678901234567890", "12345678901234567890"),
            ("0.000000001", "0.000000001"),
        ] {
            assert_eq!(Decimal::parse(text).unwrap().to_string(), shown, "{text}");
        }
        for bad in
            ["", "-", "1e3", "1.", ".5", "0.0000000001", "1/234", "nan", "1,5", "123456789012345678901"]
        {
            assert_eq!(Decimal::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn sums_are_exact_where_floats_are_not() {
        let tenth = Decimal::parse("0.1").unwrap();
        let mut sum = Decimal::ZERO;
        for _ in 0..10 {
            sum = sum.saturating_add(tenth);
        }
        assert_eq!(sum, Decimal::from_int(1));
        assert_ne!((0..10).map(|_| 0.1f64).sum::<f64>(), 1.0);
    }

    #[test]
    fn division_rounds_half_away_from_zero() {
        assert_eq!(Decimal::from_int(2).div_count(3).to_string(), "0.666666667");
        assert_eq!(Decimal::from_int(-2).div_count(3).to_string(), "-0.666666667");
        assert_eq!(Decimal::from_int(1).div_count(3).to_string(), "0.333333333");
        assert_eq!(Decimal::from_int(9).div_count(4).to_string(), "2.25");
    }

    #[test]
    fn columns_keep_positions() {
        let cols = columns(b"0.52 0.58 0.59 1/234 5678\n");
        assert_eq!(cols.len(), 5);
        assert_eq!(cols[0], Decimal::parse("0.52"));
        assert_eq!(cols[3], None);
        assert_eq!(cols[4], Some(Decimal::from_int(5678)));
    }
}
