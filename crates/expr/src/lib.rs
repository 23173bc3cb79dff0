//! find expressions, shared by `canopy find` and the tools that take a find filter (rm, cp, sync,
//! grep): GNU-compatible parsing of the whole command line, cost-based reordering (stat only when a
//! test needs it), evaluation against the engine's entries, and `-printf`/`-ls` rendering.

mod args;
mod ast;
mod clock;
mod eval;
mod fstype;
mod glob;
mod gnu_regex;
mod locale;
mod ls;
mod mode;
mod optimize;
mod parse;
mod printf;
mod program;
mod time;

// User and group names for -user, -group, -nouser, -nogroup, %u, %g and -ls.
use canopy_util::owners as ids;

pub use ast::{Cmp, Cost, Expr, Num, Test};
pub use eval::{Actions, Flow, eval};
pub use glob::Glob;
pub use ls::LsWidths;
pub use parse::{ParseError, parse, parse_filter};
pub use printf::{Format, RenderError};
pub use program::{Action, Exec, GlobalOptions, Output, Program, StartList};

/// The pieces of an `ls -l` line, for other listings (`canopy group stat`).
pub mod listing {
    pub use crate::clock::{local_tm, strftime};
    pub use crate::printf::mode_string;
}
