//! The command line of `canopy latfs`.

use std::path::PathBuf;
use std::time::Duration;

use crate::options::Options;
use crate::synthetic::Spec;
use canopy_fusekit::duration::parse_duration;

const USAGE: &str = "canopy latfs [OPTIONS] SOURCE MOUNTPOINT
       canopy latfs [OPTIONS] --synthetic SPEC MOUNTPOINT
       canopy latfs --synthetic SPEC --describe";

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
  # no source: a generated tree of 10^8 entries, served from memory at 1ms per request
  canopy latfs --synthetic irregular:1e8 /mnt/big --delay 1ms
  # 1000 directories of 100 files beside one directory of a million, and what that holds
  canopy latfs --synthetic wide:1000x100+flat:1M --describe

Every request sleeps its delay on its own worker thread: N clients calling at once wait
about one delay, not N. The kernel caches nothing by default (--ttl 0), so every access
reaches the mount and pays. Counters (requests per kind, most in flight at once) are
printed at exit; --stats-file writes them as JSON at exit and on SIGUSR1 (with the
most in flight since the previous SIGUSR1, to measure one client run at a time).";

/// Mirror SOURCE at MOUNTPOINT, adding a fixed latency to every request: a local tree that behaves like
/// a network or parallel file system (NFS, Lustre, GPFS), to measure how tools cope with slow metadata.
/// With --synthetic, serve a generated tree of any size from memory instead.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES, override_usage = USAGE)]
pub struct Args {
    /// Directory to mirror (none with --synthetic)
    pub source: Option<PathBuf>,

    /// Directory to mount the mirror on (outside SOURCE)
    pub mountpoint: Option<PathBuf>,

    /// Serve a generated tree, read-only, instead of a SOURCE: wide:DIRSxFILES, deep:FANOUTxDEPTH[xFILES],
    /// flat:N, irregular:N, joined with + (each a directory under the root), then options total=N,
    /// seed=N, symlinks=P%, hardlinks=P% (e.g. irregular:1e8,seed=2); see crates/latfs/README.md
    #[arg(long, value_name = "SPEC", value_parser = |text: &str| text.parse::<Spec>())]
    pub synthetic: Option<Spec>,

    /// With --synthetic: print what the tree holds (entries, directories, files, depth, largest
    /// directory) as JSON and exit, without mounting
    #[arg(long, requires = "synthetic", conflicts_with_all = ["source", "mountpoint", "daemon", "ready_file"])]
    pub describe: bool,

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
    /// The mount's settings; a usage error when the directories given do not fit the mode.
    pub fn options(&self) -> Result<Options, String> {
        let (source, mountpoint) = match (&self.synthetic, &self.source, &self.mountpoint) {
            (None, Some(source), Some(mountpoint)) => (source.clone(), mountpoint.clone()),
            // The one directory given is the mountpoint.
            (Some(_), Some(mountpoint), None) => (PathBuf::new(), mountpoint.clone()),
            (None, _, _) => {
                return Err("needs a SOURCE directory and a MOUNTPOINT (or --synthetic SPEC)".into());
            }
            (Some(_), _, Some(_)) => {
                return Err("--synthetic takes the place of SOURCE: give only the MOUNTPOINT".into());
            }
            (Some(_), None, None) => return Err("--synthetic needs a MOUNTPOINT (or --describe)".into()),
        };
        let threads = self.threads;
        Ok(Options {
            source,
            mountpoint,
            delay: self.delay,
            data_delay: self.data_delay,
            threads,
            ttl: self.ttl,
            max_background: self.max_background.unwrap_or_else(|| u16::try_from(threads).unwrap_or(u16::MAX)),
            readdirplus: self.readdirplus,
            read_only: self.read_only,
            allow_other: self.allow_other,
            synthetic: self.synthetic.clone(),
        })
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
        let options = parse(&["src", "mnt"]).unwrap().options().unwrap();
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
        let options = parse(&argv).unwrap().options().unwrap();
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
        assert!(parse(&["s"]).unwrap().options().is_err());
        assert!(parse(&["s", "m", "--log", "x"]).is_err(), "--log needs --daemon");
    }

    #[test]
    fn a_synthetic_tree_takes_the_place_of_the_source() {
        let options =
            parse(&["--synthetic", "wide:10x10", "mnt", "--delay", "1ms"]).unwrap().options().unwrap();
        assert_eq!(options.mountpoint, std::path::PathBuf::from("mnt"));
        assert_eq!(options.synthetic.map(|spec| spec.entries()), Some(111));
        assert_eq!(options.delay, Duration::from_millis(1));
        let both = parse(&["--synthetic", "flat:5", "src", "mnt"]).unwrap().options().unwrap_err();
        assert!(both.contains("only the MOUNTPOINT"), "{both}");
        assert!(parse(&["--synthetic", "flat:5"]).unwrap().options().is_err());
        assert!(parse(&["--synthetic", "flat:5", "--describe"]).is_ok());
        assert!(parse(&["--synthetic", "flat:5", "--describe", "mnt"]).is_err(), "--describe mounts nothing");
        assert!(parse(&["src", "mnt", "--describe"]).is_err(), "--describe needs --synthetic");
        let bad = parse(&["--synthetic", "wide:0x5", "mnt"]).unwrap_err().to_string();
        assert!(bad.contains("at least 1") && bad.contains("the forms are"), "{bad}");
    }
}
