//! File names quoted the way coreutils quotes them in messages (`rm -v`, `rm: cannot remove …`):
//! gnulib's shell-escape-always style, so a name can be pasted back into a shell whatever bytes it
//! holds — `'a b'`, `"it's"`, `'new'$'\n''line'`, `'caf'$'\303\251'` (C locale).

/// `name` quoted for the current locale (printable UTF-8 characters are kept as they are in a
/// UTF-8 locale, escaped in the C locale).
pub fn quote(name: &[u8]) -> String {
    quote_for(name, super::utf8_locale())
}

/// `name` quoted, with multibyte characters printable (`utf8`) or not.
pub fn quote_for(name: &[u8], utf8: bool) -> String {
    let mut quoted = Quoted::default();
    let mut double_quotable = true;
    let mut single_quote_seen = false;
    let mut i = 0;
    while i < name.len() {
        let byte = name[i];
        let compatible = match byte {
            b'\n' => quoted.escape("n"),
            b'\r' => quoted.escape("r"),
            b'\t' => quoted.escape("t"),
            0x07 => quoted.escape("a"),
            0x08 => quoted.escape("b"),
            0x0c => quoted.escape("f"),
            0x0b => quoted.escape("v"),
            b'\'' => {
                single_quote_seen = true;
                quoted.out.push_str("'\\''");
                quoted.escaping = false;
                true
            }
            // Inside double quotes these would mean something to the shell.
            b'{' | b'}' if name.len() == 1 => quoted.plain(byte),
            b'#' | b'~' if i == 0 => quoted.plain(byte),
            b'!' | b'"' | b'$' | b'&' | b'(' | b')' | b'*' | b';' | b'<' | b'=' | b'>' | b'[' | b'^'
            | b'`' | b'|' | b'\\' | b'?' | b'{' | b'}' | b'#' | b'~' => !quoted.plain(byte),
            0x20..=0x7e => quoted.plain(byte),
            0x80.. if utf8 => match utf8_char(&name[i..]) {
                Some(c) if !c.is_control() => {
                    let len = c.len_utf8();
                    quoted.text(&name[i..i + len]);
                    i += len;
                    continue;
                }
                _ => quoted.octal(byte),
            },
            _ => quoted.octal(byte),
        };
        double_quotable &= compatible;
        i += 1;
    }
    if single_quote_seen && double_quotable {
        // Every other byte reads the same inside double quotes: "it's" rather than 'it'\''s'.
        return format!("\"{}\"", String::from_utf8_lossy(name));
    }
    quoted.out.push('\'');
    format!("'{}", quoted.out)
}

/// The quoted text after its opening quote, and whether it is inside a `$'…'` section.
#[derive(Default)]
struct Quoted {
    out: String,
    escaping: bool,
}

impl Quoted {
    /// A byte that needs no escape; returns true (it could also sit inside double quotes).
    fn plain(&mut self, byte: u8) -> bool {
        self.leave_escape();
        self.out.push(byte as char);
        true
    }

    fn text(&mut self, bytes: &[u8]) {
        self.leave_escape();
        self.out.push_str(&String::from_utf8_lossy(bytes));
    }

    /// A backslash escape (`\n`) inside `$'…'`; returns false (not double-quotable).
    fn escape(&mut self, letter: &str) -> bool {
        self.enter_escape();
        self.out.push('\\');
        self.out.push_str(letter);
        false
    }

    fn octal(&mut self, byte: u8) -> bool {
        self.enter_escape();
        self.out.push_str(&format!("\\{byte:03o}"));
        false
    }

    fn enter_escape(&mut self) {
        if !self.escaping {
            self.out.push_str("'$'");
            self.escaping = true;
        }
    }

    fn leave_escape(&mut self) {
        if self.escaping {
            self.out.push_str("''");
            self.escaping = false;
        }
    }
}

/// The UTF-8 character at the start of `bytes`, if it is one.
fn utf8_char(bytes: &[u8]) -> Option<char> {
    let len = match bytes[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    std::str::from_utf8(bytes.get(..len)?).ok()?.chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `ls --quoting-style=shell-escape-always` (the same gnulib code as rm's messages)
    /// prints for each name in the C locale.
    #[test]
    fn quotes_like_coreutils() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain_-.,:@%+", "'plain_-.,:@%+'"),
            (b"a b", "'a b'"),
            (b"it's", "\"it's\""),
            (b"x'", "\"x'\""),
            (b"''", "\"''\""),
            (b"it's $x", "'it'\\''s $x'"),
            (b"a$b", "'a$b'"),
            (b"q\"d", "'q\"d'"),
            (b"a\\b", "'a\\b'"),
            (b"a\x01\x02b", "'a'$'\\001\\002''b'"),
            (b"\ny", "''$'\\n''y'"),
            (b"x\n", "'x'$'\\n'"),
            (b"it's\nx", "'it'\\''s'$'\\n''x'"),
            (b"caf\xc3\xa9", "'caf'$'\\303\\251'"),
            (b"a\x7fb", "'a'$'\\177''b'"),
            (b"tab\tt", "'tab'$'\\t''t'"),
            (b"{a}", "'{a}'"),
            (b"-d", "'-d'"),
        ];
        for (name, want) in cases {
            assert_eq!(quote_for(name, false), *want, "{}", String::from_utf8_lossy(name));
        }
        assert_eq!(quote_for(b"#it's", false), "\"#it's\"");
        assert_eq!(quote_for(b"it's#x", false), "'it'\\''s#x'");
        assert_eq!(quote_for("café".as_bytes(), true), "'café'");
        assert_eq!(quote_for(b"caf\xff", true), "'caf'$'\\377'");
    }
}
