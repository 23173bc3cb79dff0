//! Size arguments on the command line.

/// `4096`, `64K`, `64M`, `1G`, `2T` (powers of 1024, either case); zero and overflow are errors.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let shift = match unit {
        "" => 0,
        "K" | "k" => 10,
        "M" | "m" => 20,
        "G" | "g" => 30,
        "T" | "t" => 40,
        _ => return Err(format!("unknown size suffix '{unit}' (use K, M, G or T)")),
    };
    let n: u64 = digits.parse().map_err(|_| format!("'{text}' is not a size"))?;
    n.checked_shl(shift)
        .filter(|&v| v >> shift == n && v > 0)
        .ok_or_else(|| format!("'{text}' is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
