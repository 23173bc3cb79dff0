//! What a mount is made of, independent of the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::synthetic::Spec;

/// Settings of one latency-injecting mount.
#[derive(Clone, Debug)]
pub struct Options {
    /// Directory mirrored.
    pub source: PathBuf,
    /// Where the mirror appears.
    pub mountpoint: PathBuf,
    /// Added to every metadata request (lookup, getattr, readdir, open, create, …).
    pub delay: Duration,
    /// Added to every data request (read, write, fsync).
    pub data_delay: Duration,
    /// FUSE worker threads: how many requests are served (and sleep) at the same time.
    pub threads: usize,
    /// How long the kernel may cache attributes and names; zero sends every access to the mount.
    pub ttl: Duration,
    /// Kernel limit on outstanding background requests (readahead, async writes and releases).
    pub max_background: u16,
    /// Answer directory reads with attributes (READDIRPLUS), as NFS and Lustre can.
    pub readdirplus: bool,
    pub read_only: bool,
    /// Let other users in; the kernel then checks permission bits itself.
    pub allow_other: bool,
    /// Serve this generated tree, read-only, instead of mirroring `source` (then unused).
    pub synthetic: Option<Spec>,
}

/// The most worker threads a mount accepts.
pub const MAX_THREADS: usize = 4096;

impl Options {
    /// Defaults: 500 µs per metadata request, no data delay, 64 threads, no kernel caching.
    pub fn new(source: impl Into<PathBuf>, mountpoint: impl Into<PathBuf>) -> Self {
        Options {
            source: source.into(),
            mountpoint: mountpoint.into(),
            delay: Duration::from_micros(500),
            data_delay: Duration::ZERO,
            threads: 64,
            ttl: Duration::ZERO,
            max_background: 64,
            readdirplus: false,
            read_only: false,
            allow_other: false,
            synthetic: None,
        }
    }

    /// A mount of the tree `spec` generates, with the same defaults.
    pub fn synthetic(spec: Spec, mountpoint: impl Into<PathBuf>) -> Self {
        Options { synthetic: Some(spec), ..Options::new(PathBuf::new(), mountpoint) }
    }

    /// Checks what would otherwise fail late or hang: both directories exist, and the mount is not
    /// inside its own source (the server would walk into itself).
    pub fn validate(&self) -> Result<(), String> {
        let source = match self.synthetic {
            Some(_) => None,
            None => Some(canonical_dir(&self.source, "source")?),
        };
        let mountpoint = canonical_dir(&self.mountpoint, "mountpoint")?;
        if let Some(source) = source.filter(|source| mountpoint.starts_with(source)) {
            return Err(format!(
                "mountpoint {} is inside the source {}: mount it elsewhere",
                mountpoint.display(),
                source.display()
            ));
        }
        if !(1..=MAX_THREADS).contains(&self.threads) {
            return Err(format!("--threads must be between 1 and {MAX_THREADS}"));
        }
        if self.max_background == 0 {
            return Err("--max-background must be at least 1".to_string());
        }
        Ok(())
    }
}

fn canonical_dir(path: &Path, what: &str) -> Result<PathBuf, String> {
    let canonical = path.canonicalize().map_err(|error| format!("{what} {}: {error}", path.display()))?;
    if !canonical.is_dir() {
        return Err(format!("{what} {} is not a directory", path.display()));
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_a_mountpoint_inside_the_source_and_missing_directories() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let outside = tempfile::tempdir().unwrap();

        assert!(Options::new(dir.path(), outside.path()).validate().is_ok());
        let inside = Options::new(dir.path(), &inner).validate().unwrap_err();
        assert!(inside.contains("inside the source"), "{inside}");
        assert!(Options::new(dir.path(), dir.path()).validate().is_err());
        let missing = Options::new(dir.path().join("nope"), outside.path()).validate().unwrap_err();
        assert!(missing.starts_with("source "), "{missing}");
        std::fs::write(dir.path().join("file"), "").unwrap();
        let file = Options::new(dir.path(), dir.path().join("file")).validate().unwrap_err();
        assert!(file.starts_with("mountpoint ") && file.ends_with("not a directory"), "{file}");
        let not_dir = Options::new(dir.path().join("file"), outside.path()).validate().unwrap_err();
        assert!(not_dir.contains("not a directory"), "{not_dir}");

        let mut zero_threads = Options::new(dir.path(), outside.path());
        zero_threads.threads = 0;
        assert!(zero_threads.validate().is_err());
    }
}
