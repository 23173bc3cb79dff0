//! The error every client operation returns: a kind that maps to an errno (for the FUSE mount and the
//! CLI's exit status) and a message for people.

use std::fmt;

use crate::proto::{Failure, FailureKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    Exists,
    NotEmpty,
    NotDirectory,
    IsDirectory,
    /// A bad argument: an invalid name, a directory moved into itself, an option out of range.
    Invalid,
    NameTooLong,
    /// A split or a removal kept the partition busy for longer than the client waits.
    Busy,
    /// The entry changed between the steps of a multi-step operation (rename, rmdir).
    Changed,
    /// Not allowed on this object: a hard link to a directory, removing the root.
    NotPermitted,
    /// The file has as many names as it may have.
    TooManyLinks,
    /// The server refused the request: missing or wrong cluster secret.
    Unauthenticated,
    /// The server could not be reached or did not answer in time.
    Unavailable,
    /// The peer sent something this side does not understand, or refused it as malformed.
    Protocol,
    /// Local I/O: cluster files, the store, spawning servers.
    Io,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, message)
    }

    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Io, message)
    }

    /// The errno a file system would return for this error.
    pub fn errno(&self) -> i32 {
        match self.kind {
            ErrorKind::NotFound => libc::ENOENT,
            ErrorKind::Exists => libc::EEXIST,
            ErrorKind::NotEmpty => libc::ENOTEMPTY,
            ErrorKind::NotDirectory => libc::ENOTDIR,
            ErrorKind::IsDirectory => libc::EISDIR,
            ErrorKind::Invalid => libc::EINVAL,
            ErrorKind::NameTooLong => libc::ENAMETOOLONG,
            ErrorKind::Busy => libc::EBUSY,
            ErrorKind::Changed => libc::EAGAIN,
            ErrorKind::NotPermitted => libc::EPERM,
            ErrorKind::TooManyLinks => libc::EMLINK,
            ErrorKind::Unauthenticated => libc::EACCES,
            ErrorKind::Unavailable | ErrorKind::Protocol | ErrorKind::Io => libc::EIO,
        }
    }

    /// Whether the request may have been carried out although it failed: the server did not
    /// answer, or answered something unreadable. Every other failure means nothing happened.
    pub fn may_have_happened(&self) -> bool {
        matches!(self.kind, ErrorKind::Unavailable | ErrorKind::Protocol | ErrorKind::Io)
    }

    /// Converts an in-band failure from a server (other than a redirect, which routing handles).
    pub fn from_failure(failure: &Failure) -> Self {
        let kind = match failure.kind() {
            FailureKind::NotFound => ErrorKind::NotFound,
            FailureKind::Exists => ErrorKind::Exists,
            FailureKind::NotEmpty => ErrorKind::NotEmpty,
            FailureKind::NotDirectory => ErrorKind::NotDirectory,
            FailureKind::IsDirectory => ErrorKind::IsDirectory,
            FailureKind::Busy => ErrorKind::Busy,
            FailureKind::Changed => ErrorKind::Changed,
            FailureKind::NotPermitted => ErrorKind::NotPermitted,
            FailureKind::TooManyLinks => ErrorKind::TooManyLinks,
            FailureKind::WrongPartition | FailureKind::FailureUnspecified => ErrorKind::Protocol,
        };
        Self::new(kind, failure.message.clone())
    }

    /// Converts a gRPC status from a server or the transport.
    pub fn from_status(server: &str, status: &tonic::Status) -> Self {
        use tonic::Code;
        let kind = match status.code() {
            Code::Unauthenticated | Code::PermissionDenied => ErrorKind::Unauthenticated,
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled => ErrorKind::Unavailable,
            Code::InvalidArgument => ErrorKind::Invalid,
            _ => ErrorKind::Protocol,
        };
        Self::new(kind, format!("server {server}: {}", status.message()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
