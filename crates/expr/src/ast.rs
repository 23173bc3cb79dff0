//! The expression tree: operators, tests (pure, reorderable) and actions (side effects, fixed).

use crate::glob::Glob;
use crate::gnu_regex::PathRegex;
use crate::mode::Perm;
use crate::time::{TimeField, TimeWindow, UsedWindow};
use canopy_engine::{FileKind, Timestamp};

#[derive(Clone, Debug)]
pub enum Expr {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    /// `,`: evaluate all, the value is the last one's.
    List(Vec<Expr>),
    Not(Box<Expr>),
    Test(Test),
    /// An action from [`crate::Program::actions`], by index.
    Action(usize),
    /// `-prune`: true; do not descend into this directory.
    Prune,
    /// `-quit`: true; stop the whole walk.
    Quit,
}

/// How a numeric argument compares: `+N`, `-N` or `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Less,
    Equal,
    Greater,
}

/// A numeric test argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Num {
    pub cmp: Cmp,
    pub value: u64,
}

impl Num {
    pub fn matches(self, n: u64) -> bool {
        match self.cmp {
            Cmp::Less => n < self.value,
            Cmp::Equal => n == self.value,
            Cmp::Greater => n > self.value,
        }
    }
}

/// Tests have no side effects, so the optimiser may reorder them by cost.
#[derive(Clone, Debug)]
pub enum Test {
    True,
    False,
    Name(Glob),
    Path(Glob),
    Regex(PathRegex),
    LinkName(Glob),
    /// `-type`; with `follow_opposite`, `-xtype` (the other view of symlinks).
    Type {
        kinds: Vec<FileKind>,
        follow_opposite: bool,
    },
    /// `-size`: the size rounded up to `unit` bytes, compared.
    Size {
        num: Num,
        unit: u64,
    },
    Empty,
    Time {
        field: TimeField,
        window: TimeWindow,
    },
    /// `-used N`: days from the last status change to the last access.
    Used(UsedWindow),
    /// `-newer`, `-anewer`, `-cnewer`, `-newerXY`: strictly after the reference.
    Newer {
        field: TimeField,
        reference: Timestamp,
    },
    User(u32),
    Group(u32),
    Uid(Num),
    Gid(Num),
    NoUser,
    NoGroup,
    Perm(Perm),
    Links(Num),
    Inum(Num),
    SameFile {
        dev: u64,
        ino: u64,
    },
    Readable,
    Writable,
    Executable,
    FsType(Vec<u8>),
}

/// Relative evaluation cost, cheapest first: the optimiser orders runs of tests by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cost {
    /// Needs only the name or path.
    Name,
    /// Needs the type, which `d_type` usually gives for free.
    Type,
    /// Needs a stat.
    Stat,
    /// Needs another system call (readlink, access, reading a directory).
    Syscall,
    /// Regular expressions are slower than globs but still stat-free.
    Pattern,
}

impl Test {
    pub fn cost(&self) -> Cost {
        match self {
            Test::True | Test::False | Test::Name(_) | Test::Path(_) => Cost::Name,
            Test::Regex(_) => Cost::Pattern,
            Test::Type { follow_opposite: false, .. } => Cost::Type,
            Test::LinkName(_) | Test::Empty | Test::Readable | Test::Writable | Test::Executable => {
                Cost::Syscall
            }
            _ => Cost::Stat,
        }
    }
}

impl Expr {
    /// Whether evaluating this expression can have a side effect (so it must stay in place).
    pub fn has_side_effects(&self) -> bool {
        match self {
            Expr::Test(_) => false,
            Expr::Action(_) | Expr::Prune | Expr::Quit => true,
            Expr::Not(e) => e.has_side_effects(),
            Expr::And(v) | Expr::Or(v) | Expr::List(v) => v.iter().any(Expr::has_side_effects),
        }
    }

    /// The cost of evaluating this expression in the worst case (the most expensive part).
    pub fn cost(&self) -> Cost {
        match self {
            Expr::Test(t) => t.cost(),
            Expr::Action(_) | Expr::Prune | Expr::Quit => Cost::Syscall,
            Expr::Not(e) => e.cost(),
            Expr::And(v) | Expr::Or(v) | Expr::List(v) => {
                v.iter().map(Expr::cost).max().unwrap_or(Cost::Name)
            }
        }
    }

    pub fn contains(&self, pred: &dyn Fn(&Expr) -> bool) -> bool {
        pred(self)
            || match self {
                Expr::Not(e) => e.contains(pred),
                Expr::And(v) | Expr::Or(v) | Expr::List(v) => v.iter().any(|e| e.contains(pred)),
                _ => false,
            }
    }
}
