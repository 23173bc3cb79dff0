//! The arguments of find's primaries read as GNU find reads them (numbers like `strtoumax`, sizes
//! and their units, file types, `PATH` for `-execdir`), and its wording for the errors.

use crate::ast::{Cmp, Num};
use crate::parse::ParseError;
use canopy_engine::FileKind;
use std::os::unix::ffi::OsStrExt;

/// GNU refuses `-execdir` and `-okdir` when `PATH` has a relative entry (`.`, an empty one, `bin`):
/// the command would be looked up in each directory visited.
pub fn check_path_safety(primary: &str, path: Option<&std::ffi::OsStr>) -> Result<(), ParseError> {
    let Some(path) = path else { return Ok(()) };
    for entry in path.as_bytes().split(|&b| b == b':') {
        if entry.is_empty() || entry == b"." {
            return Err(ParseError(format!(
                "The current directory is included in the PATH environment variable, which is insecure in \
                 combination with the {primary} action of find.  Please remove the current directory from your \
                 $PATH (that is, remove \".\", doubled colons, or leading or trailing colons)"
            )));
        }
        if entry[0] != b'/' {
            return Err(ParseError(format!(
                "The relative path '{}' is included in the PATH environment variable, which is insecure in \
                 combination with the {primary} action of find.  Please remove that entry from $PATH",
                String::from_utf8_lossy(entry)
            )));
        }
    }
    Ok(())
}

/// GNU find's wording (its own quotes, whatever the locale).
pub fn missing_argument(primary: &str) -> ParseError {
    ParseError(format!("missing argument to `{primary}'"))
}

pub fn invalid_argument(arg: &str, primary: &str) -> ParseError {
    ParseError(format!("invalid argument `{arg}' to `{primary}'"))
}

pub fn unsupported_newer(name: &str) -> ParseError {
    ParseError(format!(
        "invalid predicate `{name}' (canopy supports -newerXY with X in a,c,m and Y in a,c,m,t)"
    ))
}

pub fn parse_types(arg: &str, primary: &str) -> Result<Vec<FileKind>, ParseError> {
    let mut kinds = Vec::new();
    for part in arg.split(',') {
        let kind = match part {
            "f" => FileKind::File,
            "d" => FileKind::Dir,
            "l" => FileKind::Symlink,
            "p" => FileKind::Fifo,
            "s" => FileKind::Socket,
            "b" => FileKind::BlockDevice,
            "c" => FileKind::CharDevice,
            "D" => continue, // doors do not exist on Linux
            "" => {
                return Err(ParseError(format!("Arguments to {primary} should contain at least one letter")));
            }
            _ => return Err(ParseError(format!("Unknown argument to {primary}: {part}"))),
        };
        if kinds.contains(&kind) {
            return Err(ParseError(format!(
                "Duplicate file type '{part}' in the argument list to {primary}."
            )));
        }
        kinds.push(kind);
    }
    Ok(kinds)
}

/// `N`, `+N`, `-N`. After the comparison the number is read like C's `strtoumax` (GNU's
/// `xstrtoumax`): leading blanks and one `+` are allowed, so `-+5` is "less than 5".
pub fn parse_num(arg: &str) -> Option<Num> {
    let (cmp, number) = match arg.as_bytes().first()? {
        b'+' => (Cmp::Greater, &arg[1..]),
        b'-' => (Cmp::Less, &arg[1..]),
        _ => (Cmp::Equal, arg),
    };
    let number = number.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
    let digits = number.strip_prefix('+').unwrap_or(number);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Num { cmp, value: digits.parse().ok()? })
}

/// `-size [+-]N[bcwkMG]`: the number and the unit the size is rounded up to before comparing;
/// errors in GNU find's words.
pub fn parse_size(arg: &str) -> Result<(Num, u64), String> {
    let last = arg.chars().last().unwrap_or('0');
    let (number, unit) = match last {
        'b' => (&arg[..arg.len() - 1], 512),
        'c' => (&arg[..arg.len() - 1], 1),
        'w' => (&arg[..arg.len() - 1], 2),
        'k' => (&arg[..arg.len() - 1], 1024),
        'M' => (&arg[..arg.len() - 1], 1 << 20),
        'G' => (&arg[..arg.len() - 1], 1 << 30),
        '0'..='9' => (arg, 512),
        _ if arg.len() > 1 && arg[..arg.len() - last.len_utf8()].ends_with(|c: char| c.is_ascii_digit()) => {
            return Err(format!("invalid -size type `{last}'"));
        }
        _ if arg.len() == 1 => return Err(format!("invalid -size type `{last}'")),
        _ => return Err(format!("Invalid argument `{arg}' to -size")),
    };
    parse_num(number).map(|num| (num, unit)).ok_or_else(|| format!("Invalid argument `{arg}' to -size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_numbers() {
        assert_eq!(parse_size("+1M"), Ok((Num { cmp: Cmp::Greater, value: 1 }, 1 << 20)));
        assert_eq!(parse_size("10"), Ok((Num { cmp: Cmp::Equal, value: 10 }, 512)));
        assert_eq!(parse_size("-3c"), Ok((Num { cmp: Cmp::Less, value: 3 }, 1)));
        assert_eq!(parse_num("+"), None);
        assert_eq!(parse_num("-+5"), Some(Num { cmp: Cmp::Less, value: 5 }));
        assert_eq!(parse_num("++5"), Some(Num { cmp: Cmp::Greater, value: 5 }));
        assert_eq!(parse_num(" 5"), Some(Num { cmp: Cmp::Equal, value: 5 }));
        assert_eq!(parse_num("+-5"), None);
        assert_eq!(parse_num("5 "), None);
    }

    #[test]
    fn execdir_refuses_a_relative_path() {
        let check = |path: &str| check_path_safety("-execdir", Some(std::ffi::OsStr::new(path)));
        assert!(check("/usr/bin:/bin").is_ok());
        assert!(check(".:/bin").unwrap_err().0.contains("current directory is included"));
        assert!(check("/bin::/usr/bin").unwrap_err().0.contains("current directory is included"));
        assert!(check("/bin:").unwrap_err().0.contains("current directory is included"));
        assert!(check("bin:/usr/bin").unwrap_err().0.contains("relative path 'bin'"));
        assert!(check_path_safety("-execdir", None).is_ok());
    }
}
