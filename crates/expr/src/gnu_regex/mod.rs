//! find's `-regex` as GNU find reads it: glibc's regex parser, driven by the syntax bits of each
//! `-regextype` (regex.h's `RE_SYNTAX_*`), translated token by token to the `regex` crate. The
//! match is against the whole path. `^` and `$` also match at newlines (GNU compiles with
//! `newline_anchor`). In a UTF-8 locale a path that is valid UTF-8 is matched by characters (its
//! own compiled form); anything else byte by byte. Back-references have no equivalent in the
//! `regex` crate and are refused with a clear message.

mod bracket;
mod syntax;
mod translate;

pub use syntax::Syntax;

use regex::bytes::{Regex, RegexBuilder};
use translate::Translator;

/// A compiled `-regex`: one form for paths that are valid UTF-8 (in a UTF-8 locale), one that also
/// takes stray bytes for the rest; in the C locale a single byte-wise form.
#[derive(Clone, Debug)]
pub struct PathRegex {
    text: Regex,
    bytes: Option<Regex>,
}

impl PathRegex {
    pub fn is_match(&self, path: &[u8]) -> bool {
        match &self.bytes {
            Some(bytes) if std::str::from_utf8(path).is_err() => bytes.is_match(path),
            _ => self.text.is_match(path),
        }
    }
}

/// Compiles a find regex for whole-path matching in the environment's locale.
pub fn compile(pattern: &[u8], syntax: Syntax, case_insensitive: bool) -> Result<PathRegex, String> {
    compile_with_charset(pattern, syntax, case_insensitive, crate::locale::utf8_ctype())
}

/// Compiles for a UTF-8 (`utf8`) or single-byte character set, whatever the locale.
pub fn compile_with_charset(
    pattern: &[u8],
    syntax: Syntax,
    case_insensitive: bool,
    utf8: bool,
) -> Result<PathRegex, String> {
    let units = units(pattern, utf8);
    let build = |lenient: bool| -> Result<Regex, String> {
        let translated = Translator::new(&units, syntax, Charset { utf8, lenient }).translate()?;
        RegexBuilder::new(&format!(r"\A(?:{translated})\z"))
            .case_insensitive(case_insensitive)
            .unicode(utf8)
            .size_limit(64 << 20)
            .build()
            .map_err(|e| e.to_string())
    };
    Ok(PathRegex { text: build(false)?, bytes: if utf8 { Some(build(true)?) } else { None } })
}

/// One character of the pattern: a Unicode scalar, or a byte that is not (part of) one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
    Char(char),
    Byte(u8),
}

impl Unit {
    pub(super) fn is(self, c: char) -> bool {
        self == Unit::Char(c)
    }
}

fn units(pattern: &[u8], utf8: bool) -> Vec<Unit> {
    if !utf8 {
        return pattern
            .iter()
            .map(|&b| if b.is_ascii() { Unit::Char(char::from(b)) } else { Unit::Byte(b) })
            .collect();
    }
    let mut out = Vec::with_capacity(pattern.len());
    for chunk in pattern.utf8_chunks() {
        out.extend(chunk.valid().chars().map(Unit::Char));
        out.extend(chunk.invalid().iter().map(|&b| Unit::Byte(b)));
    }
    out
}

#[derive(Clone, Copy)]
pub(super) struct Charset {
    pub(super) utf8: bool,
    /// In a UTF-8 locale: the form for paths that are not UTF-8, where any byte can be a character.
    pub(super) lenient: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax(name: &str) -> Syntax {
        Syntax::from_name(name).unwrap()
    }

    fn m(p: &str, name: &str, s: &[u8]) -> bool {
        compile_with_charset(p.as_bytes(), syntax(name), false, true).unwrap().is_match(s)
    }

    fn err(p: &str, name: &str) -> String {
        compile_with_charset(p.as_bytes(), syntax(name), false, true).unwrap_err()
    }

    #[test]
    fn findutils_default() {
        let d = "findutils-default";
        assert!(m(".*/foo\\(bar\\|baz\\)", d, b"./x/foobaz"));
        assert!(!m("foo", d, b"./foo"), "anchored to the whole path");
        assert!(m(".*(x)", d, b"a(x)"), "parentheses are literal");
        assert!(m(".*a+", d, b"./aaa"));
        assert!(m(".*[0-9]", d, b"f7"));
        assert!(m(".*x{2}", d, b"ax{2}"), "no intervals");
        assert!(m("a.b", d, b"a\nb"), "dot matches newline");
        assert!(!m("a.b", "emacs", b"a\nb"), "but not in plain emacs syntax");
        assert!(m("a.b", d, b"a\xffb"), "dot matches a stray byte");
        assert!(m("a.b", d, "aéb".as_bytes()), "dot matches one character");
        assert!(!m("a..b", d, "aéb".as_bytes()), "and not one byte of it");
        assert!(m("*a", d, b"*a"), "a leading star is literal");
        assert!(m("a\\n", d, b"an"), "\\n is a plain n, as in glibc");
        assert!(m("[[:alpha:]]", d, b":]"), "no character classes: a bracket of [ : a l p h, then a ]");
    }

    #[test]
    fn anchors_in_context() {
        let d = "findutils-default";
        assert!(m("a^b", d, b"a^b"), "^ in the middle is literal in emacs syntax");
        assert!(m("a$b", d, b"a$b"));
        assert!(m("\\(^a\\)", d, b"a"));
        assert!(!m("a^b", "posix-extended", b"a^b"), "always an anchor in ERE");
        assert!(m(".*\\<ab\\>", d, b"x ab"));
        assert!(!m(".*\\<ab\\>", d, b"xab"));
        assert!(m("x\\'", d, b"x"));
    }

    #[test]
    fn posix_flavours() {
        assert!(m(".*\\.(c|h)", "posix-extended", b"x.h"));
        assert!(m("a{2}", "posix-extended", b"aa"));
        assert!(m("a\\{2\\}", "posix-basic", b"aa"));
        assert!(m("a+", "posix-basic", b"a+"), "+ is literal in BRE");
        assert!(m("[[:digit:]]\\+", "posix-basic", b"123"));
        assert!(m("[\\]", "posix-extended", b"\\"), "backslash literal in brackets");
        assert!(m("[]a]", "posix-extended", b"]"));
        assert!(m("\\./\\((\\)", "posix-minimal-basic", b"./("), "groups are \\( \\), ( is literal");
        assert!(m("a\\+", "posix-minimal-basic", b"a+"), "no \\+ operator");
        assert!(m("a**", "posix-extended", b"aaa"), "stacked repetition");
    }

    #[test]
    fn awk_and_egrep() {
        assert!(m(".*/[\\[\\*]/.*", "awk", b"x/*/m"));
        assert!(!m(".*/[\\[\\*]/.*", "awk", b"x/\\/i"), "backslash escapes inside brackets in awk");
        assert!(!m(".*/[\\[\\*]/.*", "posix-awk", b"x/\\/i"));
        assert!(m(".*/[\\[\\*]/.*", "posix-extended", b"x/\\/i"), "but not in plain ERE");
        assert!(m("*.*/{l", "egrep", b"x/{l"), "egrep drops a leading star, takes a bad interval literally");
        assert!(m(".*/[\\[\\*]/(\\<.\\>)", "gnu-awk", b"x/*/m"));
        assert!(m("a\\1", "awk", b"a1"), "no back-references in awk: a plain 1");
    }

    #[test]
    fn errors_like_glibc() {
        assert_eq!(err("*a", "posix-extended"), "Invalid preceding regular expression");
        assert_eq!(err("(a", "posix-extended"), "Unmatched ( or \\(");
        assert_eq!(err("\\(a", "posix-basic"), "Unmatched ( or \\(");
        assert_eq!(err("[[:foo:]]", "posix-extended"), "Invalid character class name");
        assert_eq!(err("[z-a]", "posix-extended"), "Invalid range end");
        assert_eq!(err("a{2,1}", "posix-extended"), "Invalid content of \\{\\}");
        assert_eq!(err("\\", "findutils-default"), "Trailing backslash");
        assert_eq!(err("[abc", "findutils-default"), "Unmatched [, [^, [:, [., or [=");
        assert!(err("\\(a\\)\\1", "findutils-default").contains("not supported"));
        assert!(!m("[z-a]x", "emacs", b"x"), "an empty range matches nothing in emacs syntax");
    }

    #[test]
    fn c_locale_is_bytes() {
        let c = |p: &str, s: &[u8]| {
            compile_with_charset(p.as_bytes(), Syntax::FINDUTILS_DEFAULT, false, false).unwrap().is_match(s)
        };
        assert!(c("a..b", "aéb".as_bytes()), "é is two characters in the C locale");
        assert!(!c("a.b", "aéb".as_bytes()));
        let ci = compile_with_charset("É".as_bytes(), Syntax::FINDUTILS_DEFAULT, true, false).unwrap();
        assert!(!ci.is_match("é".as_bytes()), "-iregex folds ASCII only in the C locale");
    }
}
