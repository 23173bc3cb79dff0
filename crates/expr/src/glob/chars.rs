//! Character-by-character matching of UTF-8 text in a UTF-8 locale: `?` and a bracket take one
//! character, case folds across Unicode and `[:class:]` is Unicode's. Only reached when the name
//! or the pattern is not ASCII; the byte program decides everything else.

/// Iterative wildcard matching with one backtrack point (the last `*`), linear in practice.
/// `pat` and `name` are valid UTF-8 (the caller checked).
pub(super) fn matches(pat: &[u8], name: &[u8], fold: bool) -> bool {
    let m = Matcher { fold };
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
                    n += len_at(name, n);
                    continue;
                }
                b'[' if n < name.len() => {
                    if let Some((matched, next_p)) = m.bracket(pat, p, name, n) {
                        if matched {
                            p = next_p;
                            n += len_at(name, n);
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
                        (p + 1, len_at(pat, p + 1) + 1)
                    } else {
                        (p, len_at(pat, p))
                    };
                    if m.same(char_at(pat, lit), char_at(name, n)) {
                        p += lit_len;
                        n += len_at(name, n);
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
                let next = sn + len_at(name, sn);
                star = Some((sp, next));
                p = sp;
                n = next;
            }
            _ => return false,
        }
    }
}

struct Matcher {
    fold: bool,
}

impl Matcher {
    /// Matches the bracket expression at `pat[p]` against the character at `name[n]`.
    /// Returns (matched, index after the bracket), or `None` if the bracket is unterminated.
    fn bracket(&self, pat: &[u8], p: usize, name: &[u8], n: usize) -> Option<(bool, usize)> {
        let c = char_at(name, n);
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
            let (lo, lo_len) = bracket_char(pat, i);
            i += lo_len;
            if i + 1 < pat.len() && pat[i] == b'-' && pat[i + 1] != b']' {
                let (hi, hi_len) = bracket_char(pat, i + 1);
                i += 1 + hi_len;
                matched |= (lo..=hi).contains(&c) || (self.fold && (fold(lo)..=fold(hi)).contains(&fold(c)));
            } else {
                matched |= self.same(lo, c);
            }
        }
    }

    fn same(&self, a: u32, b: u32) -> bool {
        a == b || (self.fold && fold(a) == fold(b))
    }
}

fn bracket_char(pat: &[u8], i: usize) -> (u32, usize) {
    if pat[i] == b'\\' && i + 1 < pat.len() {
        (char_at(pat, i + 1), 1 + len_at(pat, i + 1))
    } else {
        (char_at(pat, i), len_at(pat, i))
    }
}

fn fold(c: u32) -> u32 {
    char::from_u32(c).and_then(|ch| ch.to_lowercase().next()).map_or(c, u32::from)
}

fn len_at(s: &[u8], i: usize) -> usize {
    let len = match s[i] {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    };
    len.min(s.len() - i)
}

fn char_at(s: &[u8], i: usize) -> u32 {
    std::str::from_utf8(&s[i..i + len_at(s, i)])
        .ok()
        .and_then(|t| t.chars().next())
        .map_or(u32::from(s[i]), u32::from)
}

/// `[:class:]` membership, Unicode's.
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
