//! The command line of `canopy latfs`.

use std::path::PathBuf;
use std::time::Duration;

use crate::options::Options;
use canopy_fusekit::duration::parse_duration;

const EXAMPLES: &str = "\
Examples:
  # serve in the foreground, 500us per metadata call, until Ctrl-C
  canopy latfs /data /mnt/slow
  # slower, more concurrent server
  canopy latfs /data /mnt/slow --delay 2ms --threads 256
  # scripts: return once mounted; stop with kill $pid or fusermount3 -u /mnt/slow
  pid=$(canopy latfs /data /mnt/slow --daemon)
  # or run it in the background and wait until the ready file exists
  canopy latfs /data /mnt/slow --ready-file /tmp/latfs.ready &

Every request sleeps its delay on its own worker thread: N clients calling at once wait
about one delay, not N. The kernel caches nothing by default (--ttl 0), so every access
reaches the mount and pays. Counters (requests per kind, most in flight at once) are
printed at exit; --stats-file writes them as JSON at exit and on SIGUSR1 (with the
most in flight since the previous SIGUSR1, to measure one client run at a time).";

/// Mirror SOURCE at MOUNTPOINT, adding a fixed latency to every request: a local tree that behaves like
/// a network or parallel file system (NFS, Lustre, GPFS), to measure how tools cope with slow metadata.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Directory to mirror
    pub source: PathBuf,

    /// Directory to mount the mirror on (outside SOURCE)
    pub mountpoint: PathBuf,

    /// Latency of each metadata request (lookup, getattr, readdir, open, create, unlink, …): 500us, 2ms, 0
    #[arg(long, default_value = "500us", value_parser = parse_duration, value_name = "DURATION")]
    pub delay: Duration,

    /// Latency of each data request (read, write, fsync)
    #[arg(long, default_value = "0", value_parser = parse_duration, value_name = "DURATION")]
    pub data_delay: Duration,

    /// Worker threads: how many requests are served, and sleep, at the same time
    #[arg(short = 'j', long, default_value_t = 64, value_name = "N")]
    pub threads: usize,

    /// How long the kernel may cache attributes and names (0: every access reaches the mount)
    #[arg(long, default_value = "0", value_parser = parse_duration, value_name = "DURATION")]
    pub ttl: Duration,

    /// Kernel limit on outstanding background requests (readahead, async writes); default: --threads
    #[arg(long, value_name = "N")]
    pub max_background: Option<u16>,

    /// Answer directory reads with attributes (READDIRPLUS), as NFS and Lustre can
    #[arg(long)]
    pub readdirplus: bool,

    /// Mount read-only (by default writes go through to SOURCE)
    #[arg(long)]
    pub read_only: bool,

    /// Let other users use the mount (root, or user_allow_other in /etc/fuse.conf); the kernel then
    /// checks permission bits
    #[arg(long)]
    pub allow_other: bool,

    /// Create FILE (holding the server's pid) once mounted; removed at exit
    #[arg(long, value_name = "FILE")]
    pub ready_file: Option<PathBuf>,

    /// Write the request counters as JSON to FILE at exit and on SIGUSR1
    #[arg(long, value_name = "FILE")]
    pub stats_file: Option<PathBuf>,

    /// Return once mounted, serving from a background process whose pid is printed
    #[arg(long)]
    pub daemon: bool,

    /// With --daemon: append the background server's messages to FILE (default: discard them)
    #[arg(long, value_name = "FILE", requires = "daemon")]
    pub log: Option<PathBuf>,
}

impl Args {
    pub fn options(&self) -> Options {
        let threads = self.threads;
        Options {
            source: self.source.clone(),
            mountpoint: self.mountpoint.clone(),
            delay: self.delay,
            data_delay: self.data_delay,
            threads,
            ttl: self.ttl,
            max_background: self.max_background.unwrap_or_else(|| u16::try_from(threads).unwrap_or(u16::MAX)),
            readdirplus: self.readdirplus,
            read_only: self.read_only,
            allow_other: self.allow_other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        Command::try_parse_from(std::iter::once("latfs").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn defaults_match_a_500us_uncached_mount() {
        let options = parse(&["src", "mnt"]).unwrap().options();
        assert_eq!(options.delay, Duration::from_micros(500));
        assert_eq!(options.data_delay, Duration::ZERO);
        assert_eq!(options.ttl, Duration::ZERO);
        assert_eq!(options.threads, 64);
        assert_eq!(options.max_background, 64);
        assert!(!options.read_only && !options.readdirplus && !options.allow_other);
    }

    #[test]
    fn options_follow_the_flags() {
        let argv =
            ["s", "m", "--delay", "2ms", "--data-delay", "1ms", "-j", "8", "--ttl", "1s", "--read-only"];
        let options = parse(&argv).unwrap().options();
        assert_eq!(options.delay, Duration::from_millis(2));
        assert_eq!(options.data_delay, Duration::from_millis(1));
        assert_eq!(options.threads, 8);
        assert_eq!(options.max_background, 8);
        assert_eq!(options.ttl, Duration::from_secs(1));
        assert!(options.read_only);
    }

    #[test]
    fn bad_values_are_usage_errors() {
        assert!(parse(&["s", "m", "--delay", "500"]).is_err());
        assert!(parse(&["s"]).is_err());
        assert!(parse(&["s", "m", "--log", "x"]).is_err(), "--log needs --daemon");
    }
}
