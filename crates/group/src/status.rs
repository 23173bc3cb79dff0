//! Per-member status of an operation: what `gstatus` reports.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An `errno` value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Errno(pub i32);

impl Errno {
    pub(crate) fn of(error: &std::io::Error) -> Errno {
        Errno(error.raw_os_error().unwrap_or(libc::EIO))
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = std::io::Error::from_raw_os_error(self.0).to_string();
        // std adds " (os error N)"; the strerror text is what people expect next to a path.
        f.write_str(text.split(" (os error").next().unwrap_or(&text))
    }
}

/// One member's status for the last operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MemberStatus {
    /// The operation's return value: bytes transferred, an offset, or 0.
    Ok(i64),
    /// The operation failed on the member.
    Failed(Errno),
    /// The member's host did not answer within the timeout (now or in an earlier operation).
    Unreachable,
}

impl MemberStatus {
    /// True for [`MemberStatus::Ok`].
    pub fn is_ok(&self) -> bool {
        matches!(self, MemberStatus::Ok(_))
    }
}

impl fmt::Display for MemberStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemberStatus::Ok(v) => write!(f, "{v}"),
            MemberStatus::Failed(errno) => write!(f, "{errno}"),
            MemberStatus::Unreachable => f.write_str("host did not answer"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_prints_like_strerror() {
        assert_eq!(Errno(libc::ENOENT).to_string(), "No such file or directory");
        assert_eq!(Errno(libc::EACCES).to_string(), "Permission denied");
        assert_eq!(MemberStatus::Failed(Errno(libc::EACCES)).to_string(), "Permission denied");
    }
}
