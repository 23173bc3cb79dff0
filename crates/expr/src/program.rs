//! A parsed find command line: starting points, options, the expression and its actions.

use crate::ast::Expr;
use crate::printf::Format;
use canopy_engine::{Follow, Timestamp};
use std::path::PathBuf;

/// Where an action writes: standard output, or one of the files named by `-fprint` & co.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Stdout,
    /// Index into [`Program::output_files`].
    File(usize),
}

/// Side-effecting primaries.
#[derive(Clone, Debug)]
pub enum Action {
    /// `-print` (`\n`), `-print0` (`\0`), `-fprint`, `-fprint0`.
    Print {
        terminator: u8,
        output: Output,
    },
    /// `-printf`, `-fprintf`.
    Printf {
        format: Format,
        output: Output,
    },
    /// `-ls`, `-fls`.
    Ls {
        output: Output,
    },
    /// `-exec`, `-execdir`, `-ok`, `-okdir`; `batch` for the `{} +` form.
    Exec(Exec),
    Delete,
}

#[derive(Clone, Debug)]
pub struct Exec {
    /// Command and arguments; `{}` is replaced by the path (or `./name` for the *dir forms).
    pub argv: Vec<Vec<u8>>,
    pub batch: bool,
    pub in_dir: bool,
    pub confirm: bool,
}

/// Options that apply to the whole walk wherever they appear.
#[derive(Clone, Debug, Default)]
pub struct GlobalOptions {
    pub max_depth: Option<u32>,
    pub min_depth: u32,
    /// `-depth` (or implied by `-delete`): directories are evaluated after their contents.
    pub depth_first: bool,
    pub same_file_system: bool,
    pub ignore_readdir_race: bool,
}

/// Where `-files0-from` reads the starting points: NUL-separated names from a file or stdin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartList {
    Stdin,
    File(PathBuf),
}

#[derive(Clone, Debug)]
pub struct Program {
    pub follow: Follow,
    /// The starting points on the command line (`.` if none and no `-files0-from`).
    pub roots: Vec<Vec<u8>>,
    /// `-files0-from`: starting points to read instead of taking them from the command line.
    pub start_list: Option<StartList>,
    pub expr: Expr,
    pub actions: Vec<Action>,
    pub output_files: Vec<PathBuf>,
    pub options: GlobalOptions,
    /// When find started: the reference for `-ls` dates.
    pub start: Timestamp,
}

impl Program {
    pub fn has_quit(&self) -> bool {
        self.expr.contains(&|e| matches!(e, Expr::Quit))
    }

    pub fn has_delete(&self) -> bool {
        self.actions.iter().any(|a| matches!(a, Action::Delete))
    }
}
