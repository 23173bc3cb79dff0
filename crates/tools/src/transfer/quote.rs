//! File names as GNU coreutils quotes them in `cp -v` (gnulib's `shell-escape-always` style, what
//! `ls --quoting-style=shell-escape-always` prints): in single quotes; bytes that are not printable
//! in `$'…'` with C escapes (`\n`, `\t`, `\303`); a name with a single quote and nothing else a
//! shell would read specially in double quotes instead.

/// The locale's character type is UTF-8 (else bytes above 0x7f are not printable, as in `C`).
pub fn locale_is_utf8() -> bool {
    let value = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    value.contains("utf-8") || value.contains("utf8")
}

/// One character of a name: a printable sequence (an ASCII byte, or in UTF-8 a whole character)
/// or a byte to escape.
enum Piece<'a> {
    Printable(&'a [u8]),
    Escaped(u8),
}

fn pieces(name: &[u8], utf8: bool) -> impl Iterator<Item = Piece<'_>> {
    let mut rest = name;
    std::iter::from_fn(move || {
        let (&b, _) = rest.split_first()?;
        let len = match b {
            0x20..=0x7e => 1,
            0x80.. if utf8 => printable_utf8_len(rest),
            _ => 0,
        };
        let piece = if len == 0 { Piece::Escaped(b) } else { Piece::Printable(&rest[..len]) };
        rest = &rest[len.max(1)..];
        Some(piece)
    })
}

/// The length of the printable UTF-8 character `bytes` starts with, or 0 if it is not one.
pub(super) fn printable_utf8_len(bytes: &[u8]) -> usize {
    let len = match bytes[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return 0,
    };
    match bytes.get(..len).and_then(|b| std::str::from_utf8(b).ok()) {
        Some(s) if !s.chars().any(char::is_control) => len,
        _ => 0,
    }
}

/// Whether a byte at `index` of the name reads the same in C-style double quotes as in a shell's
/// (gnulib's `c_and_shell_quote_compat`).
fn double_quote_compatible(name: &[u8], index: usize) -> bool {
    match name[index] {
        b'%' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b']' | b'_' | b'@' | b' ' | b'\'' => true,
        b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z' => true,
        b'#' | b'~' => index == 0,
        b'{' | b'}' => name.len() == 1,
        b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>' | b'?' | b'[' => false,
        b'\\' | b'^' | b'`' | b'|' => false,
        0x80.. => true, // reached only as part of a printable UTF-8 character
        _ => false,
    }
}

/// Appends `name` quoted as coreutils quotes it.
pub fn push_quoted(out: &mut Vec<u8>, name: &[u8], utf8: bool) {
    let all_printable = pieces(name, utf8).all(|p| matches!(p, Piece::Printable(_)));
    if all_printable && name.contains(&b'\'') && (0..name.len()).all(|i| double_quote_compatible(name, i)) {
        out.push(b'"');
        out.extend_from_slice(name);
        out.push(b'"');
        return;
    }
    out.push(b'\'');
    let mut in_escape = false;
    for piece in pieces(name, utf8) {
        match piece {
            Piece::Escaped(b) => {
                if !in_escape {
                    out.extend_from_slice(b"'$'");
                    in_escape = true;
                }
                push_c_escape(out, b);
            }
            Piece::Printable(b"'") => {
                out.extend_from_slice(b"'\\''");
                in_escape = false;
            }
            Piece::Printable(bytes) => {
                if in_escape {
                    out.extend_from_slice(b"''");
                    in_escape = false;
                }
                out.extend_from_slice(bytes);
            }
        }
    }
    out.push(b'\'');
}

fn push_c_escape(out: &mut Vec<u8>, b: u8) {
    let letter = match b {
        7 => b'a',
        8 => b'b',
        b'\t' => b't',
        b'\n' => b'n',
        11 => b'v',
        12 => b'f',
        b'\r' => b'r',
        _ => {
            out.extend_from_slice(format!("\\{b:03o}").as_bytes());
            return;
        }
    };
    out.extend_from_slice(&[b'\\', letter]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(name: &[u8]) -> String {
        let mut out = Vec::new();
        push_quoted(&mut out, name, false);
        String::from_utf8(out).unwrap()
    }

    /// Expected values are what `LC_ALL=C ls --quoting-style=shell-escape-always` prints.
    #[test]
    fn like_gnulib() {
        assert_eq!(quoted(b"odd/sp ace"), "'odd/sp ace'");
        assert_eq!(quoted(b"new\nline"), "'new'$'\\n''line'");
        assert_eq!(quoted(b"\nx"), "''$'\\n''x'");
        assert_eq!(quoted(b"\n'"), "''$'\\n'\\'''");
        assert_eq!(quoted(b"a'\nb"), "'a'\\'''$'\\n''b'");
        assert_eq!(quoted(b"it's"), "\"it's\"");
        assert_eq!(quoted(b"a'b c"), "\"a'b c\"");
        assert_eq!(quoted(b"#a'b"), "\"#a'b\"");
        assert_eq!(quoted(b"a'b#"), "'a'\\''b#'");
        assert_eq!(quoted(b"a'b?"), "'a'\\''b?'");
        assert_eq!(quoted(b"a'b@"), "\"a'b@\"");
        assert_eq!(quoted(b"x{'"), "'x{'\\'''");
        assert_eq!(quoted(b"a\x01b"), "'a'$'\\001''b'");
        assert_eq!(quoted(b"a\x7fb"), "'a'$'\\177''b'");
        assert_eq!(quoted("caf\u{e9}".as_bytes()), "'caf'$'\\303\\251'");
        assert_eq!(quoted(b"\xff\xfe x"), "''$'\\377\\376'' x'");
        assert_eq!(quoted(b"tab\there"), "'tab'$'\\t''here'");
        assert_eq!(quoted(b"back\\slash"), "'back\\slash'");
    }

    #[test]
    fn utf8_locale_keeps_printable_characters() {
        let mut out = Vec::new();
        push_quoted(&mut out, "caf\u{e9}\n".as_bytes(), true);
        assert_eq!(String::from_utf8(out).unwrap(), "'caf\u{e9}'$'\\n'");
    }
}
