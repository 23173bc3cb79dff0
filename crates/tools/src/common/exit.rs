use std::process::ExitCode;

/// Exit statuses like find's and du's: 0 when everything went fine, 1 when any error was reported
/// (the run still finished), 2 for usage errors. Comparisons speak like cmp and diff: 0 identical,
/// 1 different, 2 when trouble kept the comparison from being complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok,
    Errors,
    Usage,
    /// A comparison found differences.
    Different,
    /// A search selected nothing (grep's status 1).
    NothingSelected,
    /// A comparison could not read everything it had to compare.
    Trouble,
}

impl Exit {
    /// `Errors` when `errors > 0`, else `Ok`.
    pub fn from_errors(errors: u64) -> Self {
        if errors > 0 { Exit::Errors } else { Exit::Ok }
    }

    /// The worse of two outcomes.
    pub fn max(self, other: Exit) -> Exit {
        if self.code() >= other.code() { self } else { other }
    }

    pub fn from_code(code: u8) -> Self {
        match code {
            0 => Exit::Ok,
            1 => Exit::Errors,
            _ => Exit::Usage,
        }
    }

    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::Errors | Exit::Different | Exit::NothingSelected => 1,
            Exit::Usage | Exit::Trouble => 2,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}
