use std::fmt;
use std::path::Path;

/// The file format of a record output, chosen by the file name's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordFormat {
    /// `.parquet`: zstd-compressed Parquet with the Arrow schema of this module.
    Parquet,
    /// `.jsonl`: one JSON object per line.
    JsonLines,
}

impl RecordFormat {
    /// The format `path`'s extension names, or `None` for any other extension.
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "parquet" => Some(RecordFormat::Parquet),
            "jsonl" => Some(RecordFormat::JsonLines),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RecordFormat::Parquet => "parquet",
            RecordFormat::JsonLines => "jsonl",
        }
    }
}

impl fmt::Display for RecordFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_follows_the_extension() {
        let of = |p: &str| RecordFormat::from_path(Path::new(p));
        assert_eq!(of("/tmp/usr.parquet"), Some(RecordFormat::Parquet));
        assert_eq!(of("out/part-3.jsonl"), Some(RecordFormat::JsonLines));
        assert_eq!(of("x.csv"), None);
        assert_eq!(of("parquet"), None);
    }
}
