//! The command line of `canopy grep`: GNU grep's options (and ripgrep's `-g`/`--glob`), with
//! grep's precedence — the last of `-l`/`-L` wins, `-q` over them, them over `-c`; `-A`/`-B` over
//! `-C`; `-x` over `-w`.

use super::colors::When;
use super::output::{BinaryFiles, Mode};
use super::pattern::Dialect;
use super::select::Rule;
use crate::common::WalkArgs;
use clap::{ArgAction, ArgMatches, Args, FromArgMatches, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
As GNU grep: PATTERNS are basic regular expressions (-G) unless -E, -F or -P says otherwise; -e and
-f give several, one per line. Exit status 0 when a line is selected, 1 when none is, 2 on an error
(even with a selected line, unless -q).

-P is PCRE2's dialect (as GNU grep's -P). Basic and extended patterns are translated to the regex
crate, or to PCRE2 when they use back-references; the matches -o and --color show are leftmost-
longest, as GNU grep shows them (leftmost-first for -P and back-references).

Differences from GNU grep: a directory is searched recursively whether -r is given or not (-d skip
or -d read otherwise); -r and -R are accepted (with no FILE, -r searches '.'; without -r, stdin).
Files are searched in parallel and each file's lines are printed together, files in the order they
finish. -0 is --null (as ripgrep's; GNU's -NUM context shorthand is not supported: use -C NUM).
Binary files are detected by a NUL in each 64 KiB read (GNU: 32 KiB).
--group folds identical results across files: each distinct line once, under the folded set of the
files that contain it (ClusterShell syntax, as clush -b prints hosts). --json prints JSON Lines.
Under mpirun every rank searches and rank 0 prints.

Examples:
  canopy grep -rn 'TODO\\|FIXME' src
  canopy grep -rniw --include='*.conf' listen /etc
  canopy grep -rlZ secret_key . | xargs -0 chmod go-r
  canopy grep -rC2 --color=always -E 'panic|abort' src | less -R
  canopy grep -rc ERROR /var/log/app
  canopy grep --group -F 'MaxSessions' /srv/nodes/*/etc/ssh/sshd_config
  mpirun -n 16 canopy grep -rlF 'deprecated_api(' /lustre/project/src";

const SELECT: &str = "Pattern selection and interpretation";
const MISC: &str = "Miscellaneous";
const OUTPUT: &str = "Output control";
const CONTEXT: &str = "Context control";
const CANOPY: &str = "Canopy";

/// Search file contents in parallel, like GNU grep (recursively for directories).
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP, disable_help_flag = true)]
pub struct GrepOptions {
    /// PATTERNS are extended regular expressions.
    #[arg(short = 'E', long, help_heading = SELECT)]
    pub extended_regexp: bool,

    /// PATTERNS are strings.
    #[arg(short = 'F', long, help_heading = SELECT)]
    pub fixed_strings: bool,

    /// PATTERNS are basic regular expressions (the default).
    #[arg(short = 'G', long, help_heading = SELECT)]
    pub basic_regexp: bool,

    /// PATTERNS are Perl regular expressions (PCRE2).
    #[arg(short = 'P', long, help_heading = SELECT)]
    pub perl_regexp: bool,

    /// Use PATTERNS for matching.
    #[arg(short = 'e', long = "regexp", value_name = "PATTERNS", allow_hyphen_values = true, help_heading = SELECT)]
    pub regexp: Vec<OsString>,

    /// Take PATTERNS from FILE (one per line; - is standard input).
    #[arg(short = 'f', long = "file", value_name = "FILE", help_heading = SELECT)]
    pub file: Vec<PathBuf>,

    /// Ignore case distinctions in patterns and data.
    #[arg(short = 'i', visible_short_alias = 'y', long, overrides_with = "no_ignore_case", help_heading = SELECT)]
    pub ignore_case: bool,

    /// Do not ignore case distinctions (the default).
    #[arg(long, overrides_with = "ignore_case", help_heading = SELECT)]
    pub no_ignore_case: bool,

    /// Match only whole words.
    #[arg(short = 'w', long, help_heading = SELECT)]
    pub word_regexp: bool,

    /// Match only whole lines.
    #[arg(short = 'x', long, help_heading = SELECT)]
    pub line_regexp: bool,

    /// A data line ends in a NUL byte, not a newline.
    #[arg(short = 'z', long, help_heading = SELECT)]
    pub null_data: bool,

    /// Suppress error messages about files that cannot be read.
    #[arg(short = 's', long, help_heading = MISC)]
    pub no_messages: bool,

    /// Select non-matching lines.
    #[arg(short = 'v', long, help_heading = MISC)]
    pub invert_match: bool,

    /// Print help.
    #[arg(long, action = ArgAction::Help, help_heading = MISC)]
    pub help: Option<bool>,

    /// Stop after NUM selected lines (per file).
    #[arg(short = 'm', long, value_name = "NUM", allow_hyphen_values = true, help_heading = OUTPUT)]
    pub max_count: Option<i64>,

    /// Print line numbers with output lines.
    #[arg(short = 'n', long, help_heading = OUTPUT)]
    pub line_number: bool,

    /// Write each file's output as soon as it is complete.
    #[arg(long, help_heading = OUTPUT)]
    pub line_buffered: bool,

    /// Print the file name for each match (the default with several files or a directory).
    #[arg(short = 'H', long, overrides_with = "no_filename", help_heading = OUTPUT)]
    pub with_filename: bool,

    /// Suppress the file name prefix on output.
    #[arg(short = 'h', long, overrides_with = "with_filename", help_heading = OUTPUT)]
    pub no_filename: bool,

    /// Use LABEL as the file name of standard input.
    #[arg(long, value_name = "LABEL", help_heading = OUTPUT)]
    pub label: Option<OsString>,

    /// Show only the nonempty parts of lines that match.
    #[arg(short = 'o', long, help_heading = OUTPUT)]
    pub only_matching: bool,

    /// Suppress all normal output; exit 0 at the first selected line.
    #[arg(short = 'q', long, alias = "silent", help_heading = OUTPUT)]
    pub quiet: bool,

    /// Binary files: binary (say a file matches), text (-a), without-match (-I).
    #[arg(long, value_name = "TYPE", overrides_with_all = ["text", "no_binary"], help_heading = OUTPUT)]
    pub binary_files: Option<BinaryFiles>,

    /// Equivalent to --binary-files=text.
    #[arg(short = 'a', long, overrides_with_all = ["binary_files", "no_binary"], help_heading = OUTPUT)]
    pub text: bool,

    /// Equivalent to --binary-files=without-match.
    #[arg(short = 'I', overrides_with_all = ["binary_files", "text"], help_heading = OUTPUT)]
    pub no_binary: bool,

    /// What to do with directories: recurse (the default here), skip, or read ("Is a directory").
    #[arg(short = 'd', long, value_name = "ACTION", help_heading = OUTPUT)]
    pub directories: Option<Directories>,

    /// What to do with devices, FIFOs and sockets named on the command line: read or skip.
    #[arg(short = 'D', long, value_name = "ACTION", help_heading = OUTPUT)]
    pub devices: Option<Devices>,

    /// Accepted: directories are searched recursively anyway; with no FILE, search '.'.
    #[arg(short = 'r', long, help_heading = OUTPUT)]
    pub recursive: bool,

    /// Likewise, following all symlinks.
    #[arg(short = 'R', long, help_heading = OUTPUT)]
    pub dereference_recursive: bool,

    /// Search only files whose base name matches GLOB.
    #[arg(long, value_name = "GLOB", action = ArgAction::Append, help_heading = OUTPUT)]
    pub include: Vec<String>,

    /// Skip files whose base name matches GLOB.
    #[arg(long, value_name = "GLOB", action = ArgAction::Append, help_heading = OUTPUT)]
    pub exclude: Vec<String>,

    /// Skip directories whose base name matches GLOB.
    #[arg(long, value_name = "GLOB", help_heading = OUTPUT)]
    pub exclude_dir: Vec<String>,

    /// Print only names of files with no selected lines.
    #[arg(short = 'L', long, overrides_with = "files_with_matches", help_heading = OUTPUT)]
    pub files_without_match: bool,

    /// Print only names of files with selected lines.
    #[arg(short = 'l', long, overrides_with = "files_without_match", help_heading = OUTPUT)]
    pub files_with_matches: bool,

    /// Print only a count of selected lines per file.
    #[arg(short = 'c', long, help_heading = OUTPUT)]
    pub count: bool,

    /// Print a NUL byte after file names (-0 as in ripgrep).
    #[arg(short = 'Z', long, short_alias = '0', help_heading = OUTPUT)]
    pub null: bool,

    /// Print NUM lines of leading context.
    #[arg(short = 'B', long, value_name = "NUM", help_heading = CONTEXT)]
    pub before_context: Option<usize>,

    /// Print NUM lines of trailing context.
    #[arg(short = 'A', long, value_name = "NUM", help_heading = CONTEXT)]
    pub after_context: Option<usize>,

    /// Print NUM lines of output context.
    #[arg(short = 'C', long, value_name = "NUM", help_heading = CONTEXT)]
    pub context: Option<usize>,

    /// Print SEP on the line between context groups.
    #[arg(long, value_name = "SEP", allow_hyphen_values = true, help_heading = CONTEXT)]
    pub group_separator: Option<OsString>,

    /// Do not print a separator between context groups.
    #[arg(long, help_heading = CONTEXT)]
    pub no_group_separator: bool,

    /// Highlight matches, file names and separators: always, never or auto (the default: on a
    /// terminal, unless NO_COLOR is set; off under mpirun); GREP_COLORS changes the colors.
    #[arg(long, alias = "colour", value_name = "WHEN", num_args = 0..=1, require_equals = true,
          default_missing_value = "auto", help_heading = CONTEXT)]
    pub color: Option<When>,

    /// Like --include (GLOB) and --exclude (!GLOB), in order with them (ripgrep's spelling).
    #[arg(short = 'g', long, value_name = "GLOB", action = ArgAction::Append, help_heading = CANOPY)]
    pub glob: Vec<String>,

    /// Print JSON Lines: one object per line, count or file (paths that are not UTF-8 also as base64).
    #[arg(long, help_heading = CANOPY)]
    pub json: bool,

    /// Fold identical results across files: each distinct line once, with the set of files holding it.
    #[arg(long, help_heading = CANOPY)]
    pub group: bool,

    #[command(flatten)]
    pub walk: WalkArgs,

    /// PATTERNS (unless -e or -f gives them), then the files and directories to search.
    #[arg(value_name = "PATTERNS] [FILE")]
    pub args: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Directories {
    Recurse,
    Skip,
    Read,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Devices {
    Read,
    Skip,
}

/// The options, and the file rules in command-line order (clap keeps each option's values apart;
/// their indices tell the order).
#[derive(Debug)]
pub struct GrepArgs {
    pub options: GrepOptions,
    /// `--include`, `--exclude` and `--glob` in the order given.
    pub file_rules: Vec<Rule>,
}

impl FromArgMatches for GrepArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(GrepArgs { options: GrepOptions::from_arg_matches(matches)?, file_rules: rules_in_order(matches) })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.options.update_from_arg_matches(matches)?;
        self.file_rules = rules_in_order(matches);
        Ok(())
    }
}

impl Args for GrepArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        GrepOptions::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        GrepOptions::augment_args_for_update(cmd)
    }
}

fn rules_in_order(matches: &ArgMatches) -> Vec<Rule> {
    let mut rules: Vec<(usize, Rule)> = Vec::new();
    for (id, make) in [("include", 0), ("exclude", 1), ("glob", 2)] {
        let (Some(values), Some(indices)) = (matches.get_many::<String>(id), matches.indices_of(id)) else {
            continue;
        };
        for (value, index) in values.zip(indices) {
            let rule = match (make, value.strip_prefix('!')) {
                (0, _) => Rule::Include(value.clone()),
                (1, _) => Rule::Exclude(value.clone()),
                (_, Some(excluded)) => Rule::Exclude(excluded.to_string()),
                (_, None) => Rule::Include(value.clone()),
            };
            rules.push((index, rule));
        }
    }
    rules.sort_by_key(|(index, _)| *index);
    rules.into_iter().map(|(_, rule)| rule).collect()
}

impl GrepOptions {
    /// The one of -E -F -G -P given (GNU refuses two different ones).
    pub fn dialect(&self) -> Result<Dialect, String> {
        let given: Vec<Dialect> = [
            (self.extended_regexp, Dialect::Extended),
            (self.fixed_strings, Dialect::Fixed),
            (self.basic_regexp, Dialect::Basic),
            (self.perl_regexp, Dialect::Perl),
        ]
        .into_iter()
        .filter_map(|(set, dialect)| set.then_some(dialect))
        .collect();
        match given.as_slice() {
            [] => Ok(Dialect::Basic),
            [one] => Ok(*one),
            _ => Err("conflicting matchers specified".into()),
        }
    }

    /// What each file prints: -q, then -l/-L (the last given), then -c.
    pub fn mode(&self) -> Mode {
        if self.quiet {
            Mode::Quiet
        } else if self.files_with_matches {
            Mode::FilesWith
        } else if self.files_without_match {
            Mode::FilesWithout
        } else if self.count {
            Mode::Count
        } else {
            Mode::Lines
        }
    }

    pub fn binary(&self) -> BinaryFiles {
        if self.text {
            BinaryFiles::Text
        } else if self.no_binary {
            BinaryFiles::WithoutMatch
        } else {
            self.binary_files.unwrap_or(BinaryFiles::Binary)
        }
    }

    /// Lines of context before and after (`-A`/`-B` over `-C`); `None` without any.
    pub fn context(&self) -> Option<(usize, usize)> {
        let default = self.context;
        if default.is_none() && self.before_context.is_none() && self.after_context.is_none() {
            return None;
        }
        let before = self.before_context.or(default).unwrap_or(0);
        let after = self.after_context.or(default).unwrap_or(0);
        Some((before, after))
    }
}
