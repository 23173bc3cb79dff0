use clap::Args;

/// Flags `cp` and `sync` share.
#[derive(Args, Clone, Debug)]
pub struct CopyFlags {
    /// Check every copied byte: the source is hashed (xxh3) as it is read, the copy is read back
    /// and hashed, and a mismatch is an error (the copy is not renamed into place). The read-back
    /// comes from the page cache while the written data is still there.
    #[arg(long)]
    pub verify: bool,

    /// Flush each file to stable storage before renaming it into place, and each directory after
    /// its entries: the restart guarantee then also holds after a power loss or kernel crash. Costs
    /// one disk flush per file.
    #[arg(long)]
    pub fsync: bool,

    /// Files bigger than this are copied in chunks of this size, by all workers at once.
    /// Suffixes K, M, G, T (powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub chunk_size: u64,
}

/// `4096`, `64K`, `64M`, `1G`…
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
    use super::parse_size;

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
