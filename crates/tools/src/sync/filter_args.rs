//! `--exclude`, `--include` and `--exclude-from` in the order given: rsync applies the first rule
//! that matches, so the order across the three flags matters (`--include='*/' --include='*.c'
//! --exclude='*'`). clap's derive keeps each flag's values apart; the matches keep their indices.

use crate::transfer::Filter;
use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    Exclude(OsString),
    Include(OsString),
    ExcludeFrom(PathBuf),
}

#[derive(Clone, Debug, Default)]
pub struct FilterArgs {
    pub rules: Vec<Rule>,
}

const EXCLUDE: &str = "exclude";
const INCLUDE: &str = "include";
const EXCLUDE_FROM: &str = "exclude_from";

impl FilterArgs {
    /// The rules, with `--exclude-from` files read; the error names the file that could not be.
    pub fn filter(&self) -> Result<Filter, String> {
        let mut filter = Filter::default();
        for rule in &self.rules {
            match rule {
                Rule::Exclude(pattern) => filter.exclude(pattern.as_bytes()),
                Rule::Include(pattern) => filter.include(pattern.as_bytes()),
                Rule::ExcludeFrom(path) => {
                    let read = if path.as_os_str() == "-" {
                        filter.read_excludes(std::io::stdin().lock())
                    } else {
                        std::fs::File::open(path)
                            .and_then(|file| filter.read_excludes(std::io::BufReader::new(file)))
                    };
                    read.map_err(|e| {
                        format!(
                            "failed to open exclude file {}: {}",
                            path.display(),
                            canopy_util::errors::io_error_message(&e)
                        )
                    })?;
                }
            }
        }
        Ok(filter)
    }
}

impl clap::FromArgMatches for FilterArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut rules: Vec<(usize, Rule)> = Vec::new();
        let mut gather = |id: &str, make: &dyn Fn(&OsString) -> Rule| {
            if let (Some(values), Some(indices)) = (matches.get_many::<OsString>(id), matches.indices_of(id))
            {
                rules.extend(indices.zip(values).map(|(index, value)| (index, make(value))));
            }
        };
        gather(EXCLUDE, &|v| Rule::Exclude(v.clone()));
        gather(INCLUDE, &|v| Rule::Include(v.clone()));
        gather(EXCLUDE_FROM, &|v| Rule::ExcludeFrom(PathBuf::from(v)));
        rules.sort_by_key(|(index, _)| *index);
        Ok(FilterArgs { rules: rules.into_iter().map(|(_, rule)| rule).collect() })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for FilterArgs {
    fn augment_args(cmd: Command) -> Command {
        let rule = |id: &'static str, long: &'static str, value: &'static str, help: &'static str| {
            Arg::new(id)
                .long(long)
                .value_name(value)
                .help(help)
                .action(ArgAction::Append)
                .allow_hyphen_values(true)
                .value_parser(value_parser!(OsString))
        };
        cmd.arg(rule(
            EXCLUDE,
            "exclude",
            "PATTERN",
            "Exclude entries matching PATTERN (rsync's rules, below)",
        ))
        .arg(rule(INCLUDE, "include", "PATTERN", "Don't exclude entries matching PATTERN"))
        .arg(rule(
            EXCLUDE_FROM,
            "exclude-from",
            "FILE",
            "Read exclude patterns from FILE ('-' for stdin; '+ '/'- ' prefixes, # comments)",
        ))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, FromArgMatches};

    #[test]
    fn rules_keep_their_command_line_order() {
        let cmd = FilterArgs::augment_args(Command::new("sync"));
        let matches = cmd
            .try_get_matches_from([
                "sync",
                "--include=*/",
                "--exclude",
                "-dash*",
                "--exclude-from=list",
                "--include=*.c",
                "--exclude=*",
            ])
            .unwrap();
        let args = FilterArgs::from_arg_matches(&matches).unwrap();
        assert_eq!(
            args.rules,
            [
                Rule::Include("*/".into()),
                Rule::Exclude("-dash*".into()),
                Rule::ExcludeFrom("list".into()),
                Rule::Include("*.c".into()),
                Rule::Exclude("*".into()),
            ]
        );
    }
}
