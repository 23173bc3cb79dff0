use std::process::ExitCode;

/// Exit statuses like find's and du's: 0 when everything went fine, 1 when any error was reported
/// (the run still finished), 2 for usage errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok,
    Errors,
    Usage,
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
            Exit::Errors => 1,
            Exit::Usage => 2,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}
