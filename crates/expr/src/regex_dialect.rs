//! find's `-regex` dialects translated to the `regex` crate. The match is against the whole path
//! (anchored at both ends), `.` matches any character including newline — and, so that names that
//! are not UTF-8 still match, any single byte that is not part of a UTF-8 character.

use regex::bytes::{Regex, RegexBuilder};

/// The `-regextype` families: in the basic one `\(` `\)` `\|` group and alternate and parentheses
/// are literal; in the extended one it is the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// findutils-default / emacs: `+` and `?` are operators, no intervals, `\|` alternation.
    Emacs,
    /// posix-basic / grep / ed / sed: `\+` `\?` `\{m,n\}` operators, `+` and `?` literal.
    PosixBasic,
    /// posix-extended / egrep / awk: `( ) | + ? {m,n}` operators.
    PosixExtended,
}

impl Dialect {
    /// The dialect for a `-regextype` name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "findutils-default" | "emacs" | "gnu-awk" => Dialect::Emacs,
            "posix-basic" | "grep" | "ed" | "sed" => Dialect::PosixBasic,
            "posix-extended" | "posix-egrep" | "egrep" | "posix-awk" | "awk" | "posix-minimal-basic" => {
                Dialect::PosixExtended
            }
            _ => return None,
        })
    }

    pub const NAMES: &'static str = "findutils-default, emacs, gnu-awk, posix-basic, grep, ed, sed, posix-extended, posix-egrep, egrep, posix-awk, awk";
}

/// Compiles a find regex for whole-path matching.
pub fn compile(pattern: &[u8], dialect: Dialect, case_insensitive: bool) -> Result<Regex, String> {
    let translated = translate(pattern, dialect)?;
    RegexBuilder::new(&format!(r"\A(?:{translated})\z"))
        .case_insensitive(case_insensitive)
        .dot_matches_new_line(true)
        .unicode(true)
        .size_limit(64 << 20)
        .build()
        .map_err(|e| e.to_string())
}

const ANY: &str = r"(?:(?s:.)|(?s-u:.))";

fn translate(pat: &[u8], dialect: Dialect) -> Result<String, String> {
    let text = String::from_utf8_lossy(pat);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\\' => {
                let Some(&next) = chars.get(i) else { return Err("trailing backslash".into()) };
                i += 1;
                out.push_str(&escaped(next, dialect)?);
            }
            '[' => i = bracket(&chars, i, &mut out)?,
            '.' => out.push_str(ANY),
            '*' | '^' | '$' => out.push(c),
            '+' | '?' => match dialect {
                Dialect::PosixBasic => push_literal(&mut out, c),
                _ => out.push(c),
            },
            '(' | ')' | '|' | '{' | '}' => match dialect {
                Dialect::PosixExtended => out.push(c),
                _ => push_literal(&mut out, c),
            },
            _ => push_literal(&mut out, c),
        }
    }
    Ok(out)
}

fn escaped(c: char, dialect: Dialect) -> Result<String, String> {
    Ok(match c {
        '(' | ')' | '|' if dialect != Dialect::PosixExtended => c.to_string(),
        '{' | '}' if dialect == Dialect::PosixBasic => c.to_string(),
        '+' | '?' if dialect == Dialect::PosixBasic => c.to_string(),
        'w' | 'W' | 'b' | 'B' | 's' | 'S' => format!("\\{c}"),
        '<' => r"\b(?=\w)".to_string(),
        '>' => r"\b(?<=\w)".to_string(),
        '`' => r"\A".to_string(),
        '\'' => r"\z".to_string(),
        '1'..='9' => return Err("back-references (\\1 … \\9) are not supported".into()),
        'n' => "\n".to_string(),
        't' => "\t".to_string(),
        other => {
            let mut s = String::new();
            push_literal(&mut s, other);
            s
        }
    })
}

/// Copies a POSIX bracket expression starting after `[` (backslash is literal inside), returning the
/// index after its closing `]`.
fn bracket(chars: &[char], mut i: usize, out: &mut String) -> Result<usize, String> {
    out.push('[');
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else { return Err("unmatched [".into()) };
        if c == ']' && !first {
            out.push(']');
            return Ok(i + 1);
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '.' | '=')) {
            let close = chars.get(i + 1).copied().unwrap_or(':');
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&k| chars[k] == close && chars[k + 1] == ']')
                .ok_or("unterminated character class")?;
            let name: String = chars[i + 2..end].iter().collect();
            match close {
                ':' => out.push_str(&format!("[:{name}:]")),
                _ => name.chars().for_each(|ch| push_class_literal(out, ch)),
            }
            i = end + 2;
            continue;
        }
        if c == '-' && chars.get(i + 1) != Some(&']') && !out.ends_with('[') && !out.ends_with("[^") {
            out.push('-');
        } else {
            push_class_literal(out, c);
        }
        i += 1;
    }
}

fn push_literal(out: &mut String, c: char) {
    out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
}

fn push_class_literal(out: &mut String, c: char) {
    if matches!(c, '\\' | '[' | ']' | '^' | '-' | '&' | '~') {
        out.push('\\');
    }
    out.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, d: Dialect, s: &[u8]) -> bool {
        compile(p.as_bytes(), d, false).unwrap().is_match(s)
    }

    #[test]
    fn emacs_default() {
        assert!(m(".*/foo\\(bar\\|baz\\)", Dialect::Emacs, b"./x/foobaz"));
        assert!(!m("foo", Dialect::Emacs, b"./foo"), "anchored to the whole path");
        assert!(m(".*(x)", Dialect::Emacs, b"a(x)"), "parentheses are literal");
        assert!(m(".*a+", Dialect::Emacs, b"./aaa"));
        assert!(m(".*[0-9]", Dialect::Emacs, b"f7"));
        assert!(m(".*x{2}", Dialect::Emacs, b"ax{2}"), "no intervals");
        assert!(m("a.b", Dialect::Emacs, b"a\nb"), "dot matches newline");
        assert!(m("a.b", Dialect::Emacs, b"a\xffb"), "dot matches a stray byte");
        assert!(m("a.b", Dialect::Emacs, "aéb".as_bytes()), "dot matches one character");
    }

    #[test]
    fn posix_flavours() {
        assert!(m(".*\\.(c|h)", Dialect::PosixExtended, b"x.h"));
        assert!(m("a{2}", Dialect::PosixExtended, b"aa"));
        assert!(m("a\\{2\\}", Dialect::PosixBasic, b"aa"));
        assert!(m("a+", Dialect::PosixBasic, b"a+"), "+ is literal in BRE");
        assert!(m("[[:digit:]]\\+", Dialect::PosixBasic, b"123"));
        assert!(m("[\\]", Dialect::PosixExtended, b"\\"), "backslash literal in brackets");
        assert!(m("[]a]", Dialect::PosixExtended, b"]"));
    }

    #[test]
    fn errors_are_reported() {
        assert!(compile(b"\\(a\\)\\1", Dialect::Emacs, false).is_err());
        assert!(compile(b"[abc", Dialect::Emacs, false).is_err());
    }
}
