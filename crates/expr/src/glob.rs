//! fnmatch(3) as glibc implements it for find's `-name`, `-path` and `-lname`: `*` and `?` match any
//! character including `/` and a leading `.`, `[...]` brackets with `!`/`^`, ranges and `[:class:]`,
//! backslash escapes; a pattern ending in a lone backslash matches nothing. In the C locale, and
//! for anything not UTF-8, names are matched byte by byte with ASCII folding. In a UTF-8 locale
//! glibc (2.36, measured) accepts a name that matches character by character, with Unicode
//! folding and classes, *or* byte by byte: `?` and `??` both match `é`.

/// A compiled glob pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    pattern: Vec<u8>,
    case_insensitive: bool,
    /// Whether names are read as UTF-8 (the locale's character set).
    utf8: bool,
    /// A trailing unescaped backslash: fnmatch fails on reaching it.
    never: bool,
}

#[derive(Clone, Copy)]
enum Unit {
    Char,
    Byte,
}

impl Glob {
    /// A pattern matched in the environment's locale (see [`crate::locale`]).
    pub fn new(pattern: &[u8], case_insensitive: bool) -> Self {
        Self::with_charset(pattern, case_insensitive, crate::locale::utf8_ctype())
    }

    /// A pattern matched as UTF-8 characters (`utf8`) or as bytes, whatever the locale.
    pub fn with_charset(pattern: &[u8], case_insensitive: bool, utf8: bool) -> Self {
        let trailing_backslashes = pattern.iter().rev().take_while(|&&b| b == b'\\').count();
        Glob { pattern: pattern.to_vec(), case_insensitive, utf8, never: trailing_backslashes % 2 == 1 }
    }

    pub fn pattern(&self) -> &[u8] {
        &self.pattern
    }

    /// Whether the pattern has no wildcard at all (lets callers compare bytes directly).
    pub fn is_literal(&self) -> bool {
        !self.pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
    }

    pub fn matches(&self, name: &[u8]) -> bool {
        if self.never {
            return false;
        }
        if self.is_literal() && !self.case_insensitive {
            return self.pattern == name;
        }
        let bytes = Matcher { unit: Unit::Byte, fold: self.case_insensitive, unicode: false };
        let by_chars = self.utf8
            && !(name.is_ascii() && self.pattern.is_ascii())
            && std::str::from_utf8(name).is_ok()
            && std::str::from_utf8(&self.pattern).is_ok();
        if by_chars {
            let chars = Matcher { unit: Unit::Char, fold: self.case_insensitive, unicode: true };
            chars.matches(&self.pattern, name) || bytes.matches(&self.pattern, name)
        } else {
            bytes.matches(&self.pattern, name)
        }
    }
}

struct Matcher {
    unit: Unit,
    fold: bool,
    /// Unicode case folding and classes (UTF-8 text in a UTF-8 locale); ASCII only otherwise.
    unicode: bool,
}

impl Matcher {
    /// Iterative wildcard matching with one backtrack point (the last `*`), linear in practice.
    fn matches(&self, pat: &[u8], name: &[u8]) -> bool {
        let (mut p, mut n) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        loop {
            if p < pat.len() {
                match pat[p] {
                    b'*' => {
                        while p < pat.len() && pat[p] == b'*' {
                            p += 1;
                        }
                        star = Some((p, n));
                        continue;
                    }
                    b'?' if n < name.len() => {
                        p += 1;
                        n += self.len_at(name, n);
                        continue;
                    }
                    b'[' if n < name.len() => {
                        if let Some((matched, next_p)) = self.bracket(pat, p, name, n) {
                            if matched {
                                p = next_p;
                                n += self.len_at(name, n);
                                continue;
                            }
                        } else if name[n] == b'[' {
                            // An unterminated bracket is a literal '['.
                            p += 1;
                            n += 1;
                            continue;
                        }
                    }
                    _ if n < name.len() => {
                        let (lit, lit_len) = if pat[p] == b'\\' && p + 1 < pat.len() {
                            (p + 1, self.len_at(pat, p + 1) + 1)
                        } else {
                            (p, self.len_at(pat, p))
                        };
                        let want = self.char_at(pat, lit);
                        let have = self.char_at(name, n);
                        if self.same(want, have) {
                            p += lit_len;
                            n += self.len_at(name, n);
                            continue;
                        }
                    }
                    _ => {}
                }
            } else if n == name.len() {
                return true;
            }
            // Mismatch: let the last star swallow one more character, if there was one.
            match star {
                Some((sp, sn)) if sn < name.len() => {
                    let next = sn + self.len_at(name, sn);
                    star = Some((sp, next));
                    p = sp;
                    n = next;
                }
                _ => return false,
            }
        }
    }

    /// Matches the bracket expression at `pat[p]` against the character at `name[n]`.
    /// Returns (matched, index after the bracket), or `None` if the bracket is unterminated.
    fn bracket(&self, pat: &[u8], p: usize, name: &[u8], n: usize) -> Option<(bool, usize)> {
        let c = self.char_at(name, n);
        let mut i = p + 1;
        let negate = i < pat.len() && (pat[i] == b'!' || pat[i] == b'^');
        if negate {
            i += 1;
        }
        let mut matched = false;
        let mut first = true;
        loop {
            if i >= pat.len() {
                return None;
            }
            if pat[i] == b']' && !first {
                return Some((matched != negate, i + 1));
            }
            first = false;
            if pat[i] == b'[' && i + 1 < pat.len() && pat[i + 1] == b':' {
                let end = pat[i + 2..].windows(2).position(|w| w == b":]")?;
                let class = &pat[i + 2..i + 2 + end];
                matched |=
                    self.class_contains(class, c) || (self.fold && self.class_contains(class, self.fold(c)));
                i += end + 4;
                continue;
            }
            let (lo, lo_len) = self.bracket_char(pat, i);
            i += lo_len;
            if i + 1 < pat.len() && pat[i] == b'-' && pat[i + 1] != b']' {
                let (hi, hi_len) = self.bracket_char(pat, i + 1);
                i += 1 + hi_len;
                matched |= (lo..=hi).contains(&c)
                    || (self.fold && (self.fold(lo)..=self.fold(hi)).contains(&self.fold(c)));
            } else {
                matched |= self.same(lo, c);
            }
        }
    }

    fn bracket_char(&self, pat: &[u8], i: usize) -> (u32, usize) {
        if pat[i] == b'\\' && i + 1 < pat.len() {
            (self.char_at(pat, i + 1), 1 + self.len_at(pat, i + 1))
        } else {
            (self.char_at(pat, i), self.len_at(pat, i))
        }
    }

    fn same(&self, a: u32, b: u32) -> bool {
        a == b || (self.fold && self.fold(a) == self.fold(b))
    }

    fn fold(&self, c: u32) -> u32 {
        match char::from_u32(c) {
            Some(ch) if self.unicode => ch.to_lowercase().next().map_or(c, u32::from),
            Some(ch) => u32::from(ch.to_ascii_lowercase()),
            None => c,
        }
    }

    /// `[:class:]` membership: Unicode's in a UTF-8 locale; in the C locale only ASCII belongs.
    fn class_contains(&self, class: &[u8], c: u32) -> bool {
        match char::from_u32(c) {
            Some(ch) if self.unicode || ch.is_ascii() => class_contains(class, ch),
            _ => false,
        }
    }

    fn len_at(&self, s: &[u8], i: usize) -> usize {
        match self.unit {
            Unit::Byte => 1,
            Unit::Char => utf8_len(s[i]).min(s.len() - i),
        }
    }

    fn char_at(&self, s: &[u8], i: usize) -> u32 {
        match self.unit {
            Unit::Byte => u32::from(s[i]),
            Unit::Char => {
                let len = self.len_at(s, i);
                std::str::from_utf8(&s[i..i + len])
                    .ok()
                    .and_then(|t| t.chars().next())
                    .map_or(u32::from(s[i]), u32::from)
            }
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

fn class_contains(class: &[u8], ch: char) -> bool {
    match class {
        b"alpha" => ch.is_alphabetic(),
        b"digit" => ch.is_ascii_digit(),
        b"alnum" => ch.is_alphanumeric(),
        b"upper" => ch.is_uppercase(),
        b"lower" => ch.is_lowercase(),
        b"space" => ch.is_whitespace(),
        b"blank" => ch == ' ' || ch == '\t',
        b"punct" => ch.is_ascii_punctuation(),
        b"print" => !ch.is_control(),
        b"graph" => !ch.is_control() && !ch.is_whitespace(),
        b"cntrl" => ch.is_control(),
        b"xdigit" => ch.is_ascii_hexdigit(),
        _ => false,
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
