//! Error texts as the classic tools print them.

/// The C library's text for an I/O error, without Rust's " (os error N)" suffix: `Permission denied`.
pub fn io_error_message(error: &std::io::Error) -> String {
    let text = error.to_string();
    match error.raw_os_error().and_then(|_| text.rfind(" (os error")) {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

/// The C library's text for an errno value: `No such file or directory` for `ENOENT`.
pub fn errno_message(code: i32) -> String {
    io_error_message(&std::io::Error::from_raw_os_error(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_like_strerror() {
        assert_eq!(errno_message(libc::ENOENT), "No such file or directory");
        assert_eq!(errno_message(libc::EACCES), "Permission denied");
        let other = std::io::Error::other("bad header (os error 5)");
        assert_eq!(io_error_message(&other), "bad header (os error 5)", "only system errors lose the suffix");
    }
}
