//! The command line of `canopy du` and the settings it decides: what is measured, whether GNU du's
//! lines are printed (list mode) or the chart is drawn, and which files are written.

use super::exclude::Excludes;
use super::time::{TimeFormat, time_field};
use super::tree::Shape;
use super::units::{Units, parse_threshold};
use super::usage::{Metric, TimeField};
use crate::common::WalkArgs;
use canopy_engine::Follow;
use clap::{ArgAction, Args, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

const EXAMPLES: &str = "\
canopy du PATH draws a chart: the tree of directories, largest first, with bars and percentages of
the total. Any of GNU du's options (-s -a -c -b -B -k -m -h --si -d/--max-depth -0 -S -t --time
--apparent-size --inodes -l -x -L -P -H --exclude -X, or --list) prints GNU du's lines instead: the
same lines du prints, the arguments one after another in the order given, each one's lines as its
directories finish (--sort: a fixed order, each directory after its contents). The measuring
options (--apparent-size --inodes -l -x -L -P -H --exclude) also work with the chart: add --chart
or any chart option (--depth --min-ratio --top --top-down --files).

Hard links are counted once, for the first name: the first PATH holding one of the names and,
within it, the name whose path sorts first component by component — the same on every run, with
any number of threads or ranks. GNU du takes the name its directory reading meets first, so a
line can differ when one file has several names (-a, or names in several listed directories);
totals agree.

Examples:
  canopy du ~/src                           chart of the largest directories
  canopy du --files --top 5 --depth 2 /data the 5 largest entries per directory, 2 levels
  canopy du --chart --inodes /scratch       chart of entry counts instead of bytes
  canopy du -sh /data/*                     like du -sh, in the order given
  canopy du -ah -t 1G --time /data          files and directories of 1 GiB or more, with times
  canopy du -B1 --max-depth=2 --sort /data  like du -B1 --max-depth=2, in a fixed order
  canopy du --json /data | jq .total        the tree as JSON (canopy.du v1)
  canopy du --html report.html /data        an interactive treemap in one HTML file
  canopy du --ncdu-json scan.json /data && ncdu -f scan.json
  mpirun -n 16 canopy du -s /lustre/project
  canopy du -s --max-rate 2000 /data        at most 2,000 file-system calls a second

Exit status: 0 if everything was read, 1 if any error was reported, 2 on usage errors.";

const LIST: &str = "GNU du's lines (list mode)";
/// pdu's defaults: ten levels, entries of at least 1 % of the total.
const DEFAULT_DEPTH: u32 = 10;
const DEFAULT_MIN_RATIO: f64 = 0.01;
const MEASURE: &str = "What is measured";
const CHART: &str = "The chart";
const FILES: &str = "Data outputs";

/// Disk usage: a chart of the largest directories, or GNU du's lines; hard links counted once.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES, disable_help_flag = true)]
pub struct DuArgs {
    /// Files and directories to measure (default: the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<OsString>,

    /// Display only a total for each argument.
    #[arg(short = 's', long, help_heading = LIST)]
    pub summarize: bool,

    /// Write counts for all files, not just directories.
    #[arg(short = 'a', long, help_heading = LIST)]
    pub all: bool,

    /// Produce a grand total.
    #[arg(short = 'c', long, help_heading = LIST)]
    pub total: bool,

    /// Print a directory (or a file, with --all) only N or fewer levels below its argument.
    #[arg(short = 'd', long = "max-depth", value_name = "N", help_heading = LIST)]
    pub max_depth: Option<u32>,

    /// End each output line with NUL, not newline.
    #[arg(short = '0', long = "null", help_heading = LIST)]
    pub null: bool,

    /// Apparent sizes in bytes: --apparent-size --block-size=1.
    #[arg(short = 'b', long = "bytes", help_heading = LIST,
          overrides_with_all = ["block_size", "kibibytes", "mebibytes", "human_readable", "si"])]
    pub bytes: bool,

    /// Scale sizes by SIZE: 1K, 1M, K (adds the unit), KB (powers of 1000), KiB…
    #[arg(short = 'B', long = "block-size", value_name = "SIZE", help_heading = LIST,
          overrides_with_all = ["bytes", "kibibytes", "mebibytes", "human_readable", "si"])]
    pub block_size: Option<String>,

    /// Like --block-size=1K.
    #[arg(short = 'k', help_heading = LIST,
          overrides_with_all = ["bytes", "block_size", "mebibytes", "human_readable", "si"])]
    pub kibibytes: bool,

    /// Like --block-size=1M.
    #[arg(short = 'm', help_heading = LIST,
          overrides_with_all = ["bytes", "block_size", "kibibytes", "human_readable", "si"])]
    pub mebibytes: bool,

    /// Sizes in human-readable form (1K 234M 2G).
    #[arg(short = 'h', long = "human-readable", help_heading = LIST,
          overrides_with_all = ["bytes", "block_size", "kibibytes", "mebibytes", "si"])]
    pub human_readable: bool,

    /// Like -h, but in powers of 1000.
    #[arg(long, help_heading = LIST,
          overrides_with_all = ["bytes", "block_size", "kibibytes", "mebibytes", "human_readable"])]
    pub si: bool,

    /// GNU du's lines with no other option.
    #[arg(long, help_heading = LIST)]
    pub list: bool,

    /// Print the lines in a fixed order (each argument's, each directory after its contents,
    /// names in byte order) instead of as the directories finish.
    #[arg(long, help_heading = LIST)]
    pub sort: bool,

    /// For directories do not include the size of subdirectories.
    #[arg(short = 'S', long = "separate-dirs", help_heading = LIST)]
    pub separate_dirs: bool,

    /// Exclude entries smaller than SIZE if positive, or entries greater than SIZE if negative.
    #[arg(short = 't', long, value_name = "SIZE", allow_hyphen_values = true, help_heading = LIST)]
    pub threshold: Option<String>,

    /// Show the time of the last modification of anything in the directory (or the file); with
    /// WORD, the time WORD names instead: atime, access, use, ctime or status.
    #[arg(long, value_name = "WORD", num_args = 0..=1, require_equals = true, default_missing_value = "",
          help_heading = LIST)]
    pub time: Option<String>,

    /// Show times using STYLE: full-iso, long-iso (default), iso, or +FORMAT (as date's).
    #[arg(long = "time-style", value_name = "STYLE", help_heading = LIST)]
    pub time_style: Option<String>,

    /// Apparent sizes (st_size) rather than disk usage.
    #[arg(long = "apparent-size", help_heading = MEASURE)]
    pub apparent_size: bool,

    /// Count entries (inodes) instead of bytes.
    #[arg(long, help_heading = MEASURE)]
    pub inodes: bool,

    /// Count sizes many times if hard linked (and arguments that overlap, each time).
    #[arg(short = 'l', long = "count-links", help_heading = MEASURE)]
    pub count_links: bool,

    /// Skip directories on other file systems.
    #[arg(short = 'x', long = "one-file-system", help_heading = MEASURE)]
    pub one_file_system: bool,

    /// Follow all symbolic links.
    #[arg(short = 'L', long = "dereference", help_heading = MEASURE,
          overrides_with_all = ["no_dereference", "dereference_args"])]
    pub dereference: bool,

    /// Follow no symbolic links (the default).
    #[arg(short = 'P', long = "no-dereference", help_heading = MEASURE,
          overrides_with_all = ["dereference", "dereference_args"])]
    pub no_dereference: bool,

    /// Follow symbolic links given on the command line only.
    #[arg(short = 'D', short_alias = 'H', long = "dereference-args", help_heading = MEASURE,
          overrides_with_all = ["dereference", "no_dereference"])]
    pub dereference_args: bool,

    /// Leave out entries whose path, or any tail of it after a `/`, matches the shell PATTERN.
    #[arg(long, value_name = "PATTERN", help_heading = MEASURE)]
    pub exclude: Vec<OsString>,

    /// Like --exclude, for every pattern in FILE (one per line).
    #[arg(short = 'X', long = "exclude-from", value_name = "FILE", help_heading = MEASURE)]
    pub exclude_from: Vec<PathBuf>,

    /// Draw the chart even with du's measuring options (--inodes, -x…).
    #[arg(long, help_heading = CHART)]
    pub chart: bool,

    /// Levels shown below each argument [default: 10].
    #[arg(long, value_name = "N", help_heading = CHART)]
    pub depth: Option<u32>,

    /// Leave out entries smaller than this share of the total (0.01 = 1 %) [default: 0.01].
    #[arg(long = "min-ratio", value_name = "RATIO", help_heading = CHART)]
    pub min_ratio: Option<f64>,

    /// Show at most N entries per directory, largest first.
    #[arg(long, value_name = "N", help_heading = CHART)]
    pub top: Option<usize>,

    /// Root at the top, children below it (default: root at the bottom, as pdu and dust draw).
    #[arg(long = "top-down", help_heading = CHART)]
    pub top_down: bool,

    /// Show files too, not only directories.
    #[arg(long, help_heading = CHART)]
    pub files: bool,

    /// Colors: auto (when stdout is the user's terminal — never under mpirun — and NO_COLOR is
    /// unset), always or never.
    #[arg(long, value_name = "WHEN", default_value = "auto", help_heading = CHART)]
    pub color: ColorWhen,

    /// Width of the chart in columns (default: the terminal's, else COLUMNS, else 100).
    #[arg(long, value_name = "COLUMNS", help_heading = CHART)]
    pub width: Option<usize>,

    /// Print the tree as JSON (schema canopy.du, version 1) instead of the chart.
    #[arg(long, help_heading = FILES)]
    pub json: bool,

    /// Write every entry in ncdu's export format (browse with `ncdu -f FILE`).
    #[arg(long = "ncdu-json", value_name = "FILE", help_heading = FILES)]
    pub ncdu_json: Option<PathBuf>,

    /// Write an interactive treemap (one self-contained HTML file).
    #[arg(long, value_name = "FILE", help_heading = FILES)]
    pub html: Option<PathBuf>,

    /// Also write one record per entry, as `canopy walk -o`: Parquet (.parquet), JSON Lines
    /// (.jsonl), or a Parquet dataset (DIR/, one part per rank).
    #[arg(short = 'o', long, value_name = "FILE", help_heading = FILES)]
    pub output: Option<PathBuf>,

    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,

    #[command(flatten)]
    pub walk: WalkArgs,
}

/// `--exclude` patterns, and the lines of the `-X` files.
fn exclude_patterns(args: &DuArgs) -> Result<Vec<OsString>, String> {
    use std::os::unix::ffi::OsStringExt;
    let mut patterns = args.exclude.clone();
    for file in &args.exclude_from {
        let text = std::fs::read(file)
            .map_err(|e| format!("{}: {}", file.display(), canopy_util::errors::io_error_message(&e)))?;
        patterns.extend(
            text.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| OsString::from_vec(l.to_vec())),
        );
    }
    Ok(patterns)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// GNU du's lines.
#[derive(Clone, Debug)]
pub struct ListPlan {
    /// Deepest level printed (`-s`: 0).
    pub max_depth: u32,
    /// `-a`: files too.
    pub all: bool,
    /// `-c`.
    pub total: bool,
    /// `-0`.
    pub nul: bool,
    pub units: Units,
    pub sorted: bool,
    /// `-S`: a directory's line counts only itself and the files directly in it.
    pub separate: bool,
    /// `-t`: lines of at least this size (negative: at most its absolute value).
    pub threshold: i64,
    /// `--time`: the time stamp shown, and how.
    pub time: Option<(TimeField, TimeFormat)>,
}

impl ListPlan {
    /// Whether a line of this size passes `--threshold` (the total always does).
    pub fn passes(&self, size: u64) -> bool {
        match self.threshold {
            t if t < 0 => size <= t.unsigned_abs(),
            t => size >= t as u64,
        }
    }
}

/// Everything the walk and the outputs need to know, decided once from the arguments.
pub struct Settings {
    pub metric: Metric,
    pub follow: Follow,
    pub one_file_system: bool,
    pub excludes: Option<Excludes>,
    /// `-L`: every inode may be met twice, so every inode is counted once (GNU du hashes all).
    pub count_every_inode_once: bool,
    /// `-l`: every name of a file counts, and so does every argument, overlapping or repeated.
    pub count_links: bool,
    pub list: Option<ListPlan>,
    /// The tree the chart, `--json` and `--html` show.
    pub shape: Option<Shape>,
    pub chart: bool,
}

impl Settings {
    pub fn new(args: &DuArgs) -> Result<Settings, String> {
        let list_output = args.summarize
            || args.all
            || args.total
            || args.max_depth.is_some()
            || args.null
            || args.bytes
            || args.block_size.is_some()
            || args.kibibytes
            || args.mebibytes
            || args.human_readable
            || args.si
            || args.list
            || args.sort
            || args.separate_dirs
            || args.threshold.is_some()
            || args.time.is_some();
        let measuring = args.apparent_size
            || args.inodes
            || args.one_file_system
            || args.dereference
            || args.no_dereference
            || args.dereference_args
            || args.count_links
            || !args.exclude.is_empty()
            || !args.exclude_from.is_empty();
        let chart_asked = args.chart
            || args.depth.is_some()
            || args.min_ratio.is_some()
            || args.top.is_some()
            || args.top_down
            || args.files;
        if list_output && (chart_asked || args.json) {
            return Err("du's list options (-s -a -c -b -B -k -m -h --si -d -0 -S -t --time --list --sort) print lines; \
                        the chart's (--chart --depth --min-ratio --top --top-down --files) and --json \
                        draw the tree: choose one"
                .into());
        }
        let list_mode = list_output || (measuring && !chart_asked && !args.json);
        if args.summarize && args.all {
            return Err("cannot both summarize and show all entries".into());
        }
        if args.summarize && args.max_depth.is_some_and(|d| d != 0) {
            return Err(format!("summarizing conflicts with --max-depth={}", args.max_depth.unwrap_or(0)));
        }
        let min_ratio = args.min_ratio.unwrap_or(DEFAULT_MIN_RATIO);
        if !(0.0..1.0).contains(&min_ratio) {
            return Err(format!("--min-ratio {min_ratio}: give a share from 0 to below 1"));
        }
        if args.ncdu_json.is_some() && args.paths.len() > 1 {
            return Err("--ncdu-json: ncdu's format holds one tree; give one PATH".into());
        }
        let apparent = args.apparent_size || args.bytes;
        let metric = match (args.inodes, apparent) {
            (true, _) => Metric::Inodes,
            (false, true) => Metric::Apparent,
            (false, false) => Metric::Allocated,
        };
        let follow = if args.dereference {
            Follow::Always
        } else if args.dereference_args {
            Follow::Roots
        } else {
            Follow::Never
        };
        let list = list_mode.then(|| -> Result<ListPlan, String> {
            let mut units = if args.bytes {
                Units::bytes()
            } else if let Some(spec) = &args.block_size {
                Units::parse(spec)?
            } else if args.kibibytes {
                Units::kibibytes()
            } else if args.mebibytes {
                Units::mebibytes()
            } else if args.human_readable {
                Units::human()
            } else if args.si {
                Units::si()
            } else {
                Units::from_env()
            };
            if args.inodes {
                units = units.for_counts();
            }
            let time = match &args.time {
                Some(word) => Some((time_field(word)?, TimeFormat::new(args.time_style.as_deref())?)),
                None => None,
            };
            Ok(ListPlan {
                max_depth: if args.summarize { 0 } else { args.max_depth.unwrap_or(u32::MAX) },
                all: args.all,
                total: args.total,
                nul: args.null,
                units,
                sorted: args.sort,
                separate: args.separate_dirs,
                threshold: args.threshold.as_deref().map(parse_threshold).transpose()?.unwrap_or(0),
                time,
            })
        });
        let list = list.transpose()?;
        let chart = list.is_none() && !args.json;
        let shape = (chart || args.json || args.html.is_some()).then_some(Shape {
            depth: args.depth.unwrap_or(DEFAULT_DEPTH),
            min_ratio,
            top: args.top,
            files: args.files,
            metric,
        });
        Ok(Settings {
            metric,
            follow,
            one_file_system: args.one_file_system,
            excludes: Excludes::new(&exclude_patterns(args)?),
            count_every_inode_once: follow == Follow::Always && !args.count_links,
            count_links: args.count_links,
            list,
            shape,
            chart,
        })
    }

    /// The time stamp `--time` collects.
    pub fn time_field(&self) -> Option<TimeField> {
        self.list.as_ref().and_then(|list| list.time.as_ref()).map(|(field, _)| *field)
    }

    /// Warnings GNU du gives for the same options.
    pub fn warnings(args: &DuArgs) -> Vec<&'static str> {
        let mut warnings = Vec::new();
        if args.inodes && (args.apparent_size || args.bytes) {
            warnings.push("warning: options --apparent-size and -b are ineffective with --inodes");
        }
        if args.summarize && args.max_depth == Some(0) {
            warnings.push("warning: summarizing is the same as using --max-depth=0");
        }
        warnings
    }
}
