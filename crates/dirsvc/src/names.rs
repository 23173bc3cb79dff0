//! What a directory entry name may be: what a POSIX file system accepts in one path component.

use crate::error::{Error, ErrorKind};

/// The longest name, in bytes (NAME_MAX on Linux).
pub const NAME_MAX: usize = 255;

pub fn validate_name(name: &[u8]) -> Result<(), Error> {
    let shown = || String::from_utf8_lossy(name).into_owned();
    if name.is_empty() {
        return Err(Error::invalid("empty entry name"));
    }
    if name.len() > NAME_MAX {
        return Err(Error::new(
            ErrorKind::NameTooLong,
            format!("name of {} bytes is longer than {NAME_MAX}", name.len()),
        ));
    }
    if name == b"." || name == b".." {
        return Err(Error::invalid(format!("'{}' cannot be an entry name", shown())));
    }
    if name.contains(&b'/') || name.contains(&0) {
        return Err(Error::invalid(format!("entry name {:?} contains '/' or NUL", shown())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names_and_rejects_path_syntax() {
        assert!(validate_name(b"file.0001").is_ok());
        assert!(validate_name("naïve \u{1F600}".as_bytes()).is_ok());
        assert!(validate_name(&[0xff, 0xfe]).is_ok(), "names are bytes, not UTF-8");
        for bad in [&b""[..], b".", b"..", b"a/b", b"a\0b"] {
            assert_eq!(validate_name(bad).unwrap_err().kind, ErrorKind::Invalid, "{bad:?}");
        }
        let long = vec![b'x'; NAME_MAX + 1];
        assert_eq!(validate_name(&long).unwrap_err().kind, ErrorKind::NameTooLong);
        assert!(validate_name(&long[..NAME_MAX]).is_ok());
    }
}
