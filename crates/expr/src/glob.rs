//! fnmatch(3) as glibc implements it for find's `-name`, `-path` and `-lname`: `*` and `?` match any
//! character including `/` and a leading `.`, `[...]` brackets with `!`/`^`, ranges and `[:class:]`,
//! backslash escapes. Like glibc in a UTF-8 locale, names and patterns that are valid UTF-8 are
//! matched character by character; anything else byte by byte.

/// A compiled glob pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    pattern: Vec<u8>,
    case_insensitive: bool,
}

#[derive(Clone, Copy)]
enum Unit {
    Char,
    Byte,
}

impl Glob {
    pub fn new(pattern: &[u8], case_insensitive: bool) -> Self {
        Glob { pattern: pattern.to_vec(), case_insensitive }
    }

    pub fn pattern(&self) -> &[u8] {
        &self.pattern
    }

    /// Whether the pattern has no wildcard at all (lets callers compare bytes directly).
    pub fn is_literal(&self) -> bool {
        !self.pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
    }

    pub fn matches(&self, name: &[u8]) -> bool {
        if self.is_literal() && !self.case_insensitive {
            return self.pattern == name;
        }
        let unit = if std::str::from_utf8(name).is_ok() && std::str::from_utf8(&self.pattern).is_ok() {
            Unit::Char
        } else {
            Unit::Byte
        };
        Matcher { unit, fold: self.case_insensitive }.matches(&self.pattern, name)
    }
}

struct Matcher {
    unit: Unit,
    fold: bool,
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
                matched |= class_contains(class, c) || (self.fold && class_contains(class, fold(c)));
                i += end + 4;
                continue;
            }
            let (lo, lo_len) = self.bracket_char(pat, i);
            i += lo_len;
            if i + 1 < pat.len() && pat[i] == b'-' && pat[i + 1] != b']' {
                let (hi, hi_len) = self.bracket_char(pat, i + 1);
                i += 1 + hi_len;
                matched |= (lo..=hi).contains(&c) || (self.fold && (fold(lo)..=fold(hi)).contains(&fold(c)));
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
        a == b || (self.fold && fold(a) == fold(b))
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

fn fold(c: u32) -> u32 {
    char::from_u32(c).map_or(c, |ch| ch.to_lowercase().next().map_or(c, u32::from))
}

fn class_contains(class: &[u8], c: u32) -> bool {
    let Some(ch) = char::from_u32(c) else { return false };
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
        Glob::new(p.as_bytes(), false).matches(n.as_bytes())
    }

    #[test]
    fn wildcards() {
        assert!(m("*.rs", "main.rs"));
        assert!(m("*", ".hidden"), "no FNM_PERIOD in find");
        assert!(m("a*b*c", "aXbYc"));
        assert!(!m("a*b*c", "aXbY"));
        assert!(m("*/b", "a/b"), "no FNM_PATHNAME: * crosses /");
        assert!(m("?", "é"), "one character, not one byte, in UTF-8");
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
        assert!(Glob::new(b"?", false).matches(b"\xff"));
        assert!(Glob::new(b"a*", false).matches(b"a\xff\xfe"));
        assert!(Glob::new(b"\xff*", false).matches(b"\xffz"));
    }

    #[test]
    fn case_insensitive() {
        let g = Glob::new(b"*.TXT", true);
        assert!(g.matches(b"notes.txt"));
        assert!(Glob::new(b"[A-C]", true).matches(b"b"));
        assert!(Glob::new("É".as_bytes(), true).matches("é".as_bytes()));
    }
}
