//! fnmatch(3) as glibc implements it for find's `-name`, `-path` and `-lname`: `*` and `?` match any
//! character including `/` and a leading `.`, `[...]` brackets with `!`/`^`, ranges and `[:class:]`,
//! backslash escapes; a pattern ending in a lone backslash matches nothing. In the C locale, and
//! for anything not UTF-8, names are matched byte by byte with ASCII folding. In a UTF-8 locale
//! glibc (2.36, measured) accepts a name that matches character by character, with Unicode
//! folding and classes, *or* byte by byte: `?` and `??` both match `é`.
//!
//! A pattern is compiled once, when the expression is parsed: the common shapes (`name`, `*.ext`,
//! `prefix*`, `*infix*`) compare bytes directly; everything else runs a compiled byte program.

mod bytes;
mod chars;
#[cfg(test)]
mod oracle;

use memchr::memmem;

/// A compiled glob pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    pattern: Vec<u8>,
    case_insensitive: bool,
    /// Whether names are read as UTF-8 (the locale's character set).
    utf8: bool,
    /// The pattern is ASCII: an ASCII name never needs the character matcher.
    ascii: bool,
    /// The pattern is valid UTF-8: a UTF-8 name may match it character by character.
    text: bool,
    shape: Shape,
    program: bytes::Program,
}

/// The pattern's shape, for the fast paths. Literal parts are ASCII-lowercased when matching
/// without case.
#[derive(Clone, Debug)]
enum Shape {
    /// No wildcard at all.
    Literal(Vec<u8>),
    /// `*literal`.
    Suffix(Vec<u8>),
    /// `literal*`.
    Prefix(Vec<u8>),
    /// `*literal*` (`*` alone is the empty infix).
    Infix(Box<memmem::Finder<'static>>),
    /// Anything else: the byte program.
    General,
}

impl Glob {
    /// A pattern matched in the environment's locale (see [`crate::locale`]).
    pub fn new(pattern: &[u8], case_insensitive: bool) -> Self {
        Self::with_charset(pattern, case_insensitive, crate::locale::utf8_ctype())
    }

    /// A pattern matched as UTF-8 characters (`utf8`) or as bytes, whatever the locale.
    pub fn with_charset(pattern: &[u8], case_insensitive: bool, utf8: bool) -> Self {
        Glob {
            pattern: pattern.to_vec(),
            case_insensitive,
            utf8,
            ascii: pattern.is_ascii(),
            text: std::str::from_utf8(pattern).is_ok(),
            shape: Shape::of(pattern, case_insensitive),
            program: bytes::Program::new(pattern, case_insensitive),
        }
    }

    pub fn matches(&self, name: &[u8]) -> bool {
        if self.utf8 && !(self.ascii && name.is_ascii()) && self.needs_chars() {
            let by_chars = self.text && std::str::from_utf8(name).is_ok();
            return (by_chars && chars::matches(&self.pattern, name, self.case_insensitive))
                || self.program.matches(name);
        }
        let fold = self.case_insensitive;
        match &self.shape {
            Shape::Literal(literal) => same(literal, name, fold),
            Shape::Suffix(suffix) => {
                name.len() >= suffix.len() && same(suffix, &name[name.len() - suffix.len()..], fold)
            }
            Shape::Prefix(prefix) => name.len() >= prefix.len() && same(prefix, &name[..prefix.len()], fold),
            Shape::Infix(finder) if fold => {
                let needle = finder.needle();
                needle.is_empty() || name.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
            }
            Shape::Infix(finder) => finder.find(name).is_some(),
            Shape::General => self.program.matches(name),
        }
    }

    /// Whether a name that is not ASCII may match character by character where it does not byte
    /// by byte: always with wildcards or brackets (`?` takes a whole character) and without
    /// case (Unicode folds `K`, the Kelvin sign, to `k`); a fast shape's bytes decide otherwise.
    fn needs_chars(&self) -> bool {
        self.case_insensitive || matches!(self.shape, Shape::General)
    }
}

/// `literal` (already folded if `fold`) equals `name`, ASCII-folding the name if `fold`.
fn same(literal: &[u8], name: &[u8], fold: bool) -> bool {
    if fold { literal.eq_ignore_ascii_case(name) } else { literal == name }
}

impl Shape {
    fn of(pattern: &[u8], fold: bool) -> Shape {
        let leading = pattern.iter().take_while(|&&b| b == b'*').count();
        let rest = &pattern[leading..];
        let trailing = rest.iter().rev().take_while(|&&b| b == b'*').count();
        let middle = &rest[..rest.len() - trailing];
        if middle.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\' | 0)) {
            return Shape::General;
        }
        let literal = if fold { middle.to_ascii_lowercase() } else { middle.to_vec() };
        match (leading > 0, trailing > 0 || (leading > 0 && middle.is_empty())) {
            (false, false) => Shape::Literal(literal),
            (true, false) => Shape::Suffix(literal),
            (false, true) => Shape::Prefix(literal),
            (true, true) => Shape::Infix(Box::new(memmem::Finder::new(&literal).into_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        Glob::with_charset(p.as_bytes(), false, true).matches(n.as_bytes())
    }

    #[test]
    fn wildcards() {
        assert!(m("*.rs", "main.rs"));
        assert!(m("*", ".hidden"), "no FNM_PERIOD in find");
        assert!(m("a*b*c", "aXbYc"));
        assert!(!m("a*b*c", "aXbY"));
        assert!(m("*/b", "a/b"), "no FNM_PATHNAME: * crosses /");
        assert!(m("?", "é"), "one character in UTF-8…");
        assert!(m("??", "é"), "…or two bytes, as glibc's fnmatch has it");
        assert!(!m("???", "é"));
        assert!(m("?é", "éé") && !m("[!é][!é]", "é"));
        assert!(m("??", "ab"));
        assert!(!m("?", ""));
        assert!(m("a\\*", "a*"));
        assert!(!m("a\\*", "ab"));
        assert!(m("", ""));
        assert!(m("**", ""));
    }

    #[test]
    fn brackets() {
        assert!(m("[abc]", "b"));
        assert!(m("[!abc]", "d"));
        assert!(m("[^abc]", "d"));
        assert!(!m("[!abc]", "a"));
        assert!(m("[a-c]x", "bx"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[[:digit:]]*", "7up"));
        assert!(!m("[[:digit:]]*", "up"));
        assert!(m("[a-]", "-"));
        assert!(m("[", "["), "unterminated bracket is literal");
        assert!(m("a[", "a["));
    }

    #[test]
    fn invalid_utf8_falls_back_to_bytes() {
        let g = |p: &[u8]| Glob::with_charset(p, false, true);
        assert!(g(b"?").matches(b"\xff"));
        assert!(g(b"a*").matches(b"a\xff\xfe"));
        assert!(g(b"\xff*").matches(b"\xffz"));
    }

    #[test]
    fn case_insensitive() {
        let g = |p: &str| Glob::with_charset(p.as_bytes(), true, true);
        assert!(g("*.TXT").matches(b"notes.txt"));
        assert!(g("[A-C]").matches(b"b"));
        assert!(g("É").matches("é".as_bytes()));
    }

    #[test]
    fn c_locale_is_bytes_and_ascii() {
        let c = |p: &str, ci: bool| Glob::with_charset(p.as_bytes(), ci, false);
        assert!(c("*.TXT", true).matches(b"notes.txt"));
        assert!(!c("É", true).matches("é".as_bytes()), "only ASCII folds in the C locale");
        assert!(c("é", true).matches("é".as_bytes()));
        assert!(!c("?", false).matches("é".as_bytes()), "one byte, not one character");
        assert!(c("??", false).matches("é".as_bytes()));
        assert!(!c("[[:alpha:]]", false).matches("\u{e9}".as_bytes()));
    }

    #[test]
    fn trailing_backslash_matches_nothing() {
        assert!(!m("\\", "\\"));
        assert!(!m("a\\", "a"));
        assert!(m("a\\\\", "a\\"), "an escaped backslash is a literal one");
    }
}
