use canopy_util::size::parse_size;
use clap::{Args, ValueEnum};

/// The smallest `--chunk-size`: below it a big file would become millions of jobs, each costing
/// more to schedule than its bytes take to copy.
pub const MIN_CHUNK_SIZE: u64 = 64 << 10;

/// Flags `cp` and `sync` share that neither cp nor rsync has.
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

    /// Files bigger than this are copied in chunks of this size, by all workers at once (at least
    /// 64K). Suffixes K, M, G, T (powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_chunk_size)]
    pub chunk_size: u64,
}

/// cp's `--reflink`: whether copies may share the source's blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Reflink {
    /// Share blocks where the file system can (`copy_file_range`), copy them otherwise.
    #[default]
    Auto,
    /// Share the source's blocks (`FICLONE`) or fail.
    Always,
    /// Always copy the bytes.
    Never,
}

/// A size of at least [`MIN_CHUNK_SIZE`].
pub fn parse_chunk_size(text: &str) -> Result<u64, String> {
    let size = parse_size(text)?;
    if size < MIN_CHUNK_SIZE {
        return Err(format!("'{text}' is too small: chunks are at least 64K"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes_have_a_floor() {
        assert_eq!(parse_chunk_size("64K"), Ok(MIN_CHUNK_SIZE));
        assert!(parse_chunk_size("1").unwrap_err().contains("at least 64K"));
        assert!(parse_chunk_size("63K").is_err());
    }
}
