//! fnmatch(3) over bytes, as glibc reads a pattern in a single-byte locale with flags 0 or
//! `FNM_CASEFOLD` (GNU find's `-name` and `-iname`: no `FNM_PERIOD`, `*` crosses `/`).
//!
//! The pattern is compiled once into one [`Step`] per reachable pattern offset. A bracket becomes a
//! 256-entry table filled by replaying glibc's own bracket scan for every byte, so its quirks come
//! out the same: an unterminated `[` is a literal `[` (glibc 2.36, measured), an unknown
//! `[:class:]` or a trailing `\` inside a bracket fails, `[.c.]` and `[=c=]` name one byte, and a
//! range's bounds fold but a class tests the unfolded byte.

/// No step: the name does not match from here.
const FAIL: u32 = u32::MAX;

/// The longest class name glibc reads before giving up on a bracket.
const CLASS_NAME_MAX: usize = 256;

#[derive(Clone, Debug)]
enum Step {
    /// One byte, already folded when matching without case.
    Byte { byte: u8, next: u32 },
    /// `?`: any one byte.
    Any { next: u32 },
    /// A run of `*`: any bytes, backtracked.
    Star { next: u32 },
    /// `[...]`: the next step for each name byte, or [`FAIL`].
    Bracket(Box<[u32; 256]>),
    /// A trailing lone `\`: fnmatch fails on reaching it.
    Never,
    /// The end of the pattern: matches the end of the name.
    End,
    /// An offset no step leads to (inside a bracket or an escape).
    Unreached,
}

/// A compiled byte-level fnmatch pattern.
#[derive(Clone, Debug)]
pub(super) struct Program {
    /// Indexed by pattern offset; `steps[pattern.len()]` is [`Step::End`].
    steps: Vec<Step>,
    fold: bool,
}

impl Program {
    pub(super) fn new(pattern: &[u8], fold: bool) -> Self {
        // fnmatch reads a C string: nothing after a NUL is part of the pattern.
        let pattern = &pattern[..pattern.iter().position(|&b| b == 0).unwrap_or(pattern.len())];
        let mut steps = vec![Step::Unreached; pattern.len() + 1];
        let mut pending = vec![0usize];
        while let Some(p) = pending.pop() {
            if !matches!(steps[p], Step::Unreached) {
                continue;
            }
            let step = compile_step(pattern, p, fold);
            match &step {
                Step::Byte { next, .. } | Step::Any { next } | Step::Star { next } => {
                    pending.push(*next as usize)
                }
                Step::Bracket(table) => {
                    let mut targets: Vec<usize> =
                        table.iter().filter(|&&t| t != FAIL).map(|&t| t as usize).collect();
                    targets.sort_unstable();
                    targets.dedup();
                    pending.extend(targets);
                }
                Step::Never | Step::End | Step::Unreached => {}
            }
            steps[p] = step;
        }
        Program { steps, fold }
    }

    /// Iterative matching with one backtrack point, the last star: every step but a star consumes
    /// exactly one byte and leads to exactly one next step, so retrying an earlier star never helps.
    pub(super) fn matches(&self, name: &[u8]) -> bool {
        let (mut p, mut n) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        loop {
            let next = match &self.steps[p] {
                Step::Star { next } => {
                    p = *next as usize;
                    star = Some((p, n));
                    continue;
                }
                Step::End if n == name.len() => return true,
                _ if n == name.len() => FAIL,
                Step::Byte { byte, next } => {
                    if self.fold_byte(name[n]) == *byte {
                        *next
                    } else {
                        FAIL
                    }
                }
                Step::Any { next } => *next,
                Step::Bracket(table) => table[usize::from(name[n])],
                Step::Never | Step::End | Step::Unreached => FAIL,
            };
            if next != FAIL {
                p = next as usize;
                n += 1;
                continue;
            }
            // Mismatch: let the last star swallow one more byte, if there was one.
            match star {
                Some((sp, sn)) if sn < name.len() => {
                    star = Some((sp, sn + 1));
                    p = sp;
                    n = sn + 1;
                }
                _ => return false,
            }
        }
    }

    fn fold_byte(&self, b: u8) -> u8 {
        fold(b, self.fold)
    }
}

/// `tolower` in the C locale (and on single bytes in a UTF-8 one): ASCII letters only.
fn fold(b: u8, on: bool) -> u8 {
    if on { b.to_ascii_lowercase() } else { b }
}

fn compile_step(pat: &[u8], p: usize, fold_case: bool) -> Step {
    let next = |q: usize| u32::try_from(q).expect("patterns are shorter than 4 GiB");
    match pat.get(p) {
        None => Step::End,
        Some(b'*') => {
            let run = pat[p..].iter().take_while(|&&b| b == b'*').count();
            Step::Star { next: next(p + run) }
        }
        Some(b'?') => Step::Any { next: next(p + 1) },
        Some(b'\\') => match pat.get(p + 1) {
            None => Step::Never,
            Some(&escaped) => Step::Byte { byte: fold(escaped, fold_case), next: next(p + 2) },
        },
        Some(b'[') => {
            let mut table = Box::new([FAIL; 256]);
            for (byte, slot) in (0..=u8::MAX).zip(table.iter_mut()) {
                *slot = Bracket { pat, fold: fold_case }.next_after(p, byte).map_or(FAIL, next);
            }
            Step::Bracket(table)
        }
        Some(&literal) => Step::Byte { byte: fold(literal, fold_case), next: next(p + 1) },
    }
}

/// glibc's scan of one bracket expression for one name byte (posix/fnmatch_loop.c, single-byte
/// version, C locale: no collation rules, identity collation order).
struct Bracket<'a> {
    pat: &'a [u8],
    fold: bool,
}

/// Where the scan of a bracket's members goes next.
enum Scan {
    /// A member matched: skip the rest of the bracket from this offset.
    Matched(usize),
    /// The pattern is ill-formed here: no match at this position.
    Fail,
}

impl Bracket<'_> {
    /// The pattern byte at `i`, NUL past the end as in a C string.
    fn at(&self, i: usize) -> u8 {
        self.pat.get(i).copied().unwrap_or(0)
    }

    fn fold(&self, b: u8) -> u8 {
        fold(b, self.fold)
    }

    /// The offset after the bracket at `open` if it accepts `byte`; `open + 1` if the bracket is
    /// unterminated and so a literal `[` (which `byte` must be); `None` if it does not match.
    fn next_after(&self, open: usize, byte: u8) -> Option<usize> {
        let after_open = open + 1;
        let mut p = after_open;
        let negated = matches!(self.at(p), b'!' | b'^');
        if negated {
            p += 1;
        }
        let end = match self.scan(p, byte) {
            Ok(Some(end)) => return negated.then_some(end),
            Ok(None) => None,
            Err(Scan::Matched(from)) => self.skip_rest(from).ok()?,
            Err(Scan::Fail) => return None,
        };
        match end {
            Some(end) => (!negated).then_some(end),
            // glibc 2.36 (measured): unterminated, even after a member matched, is a literal `[`.
            None => (self.fold(byte) == b'[').then_some(after_open),
        }
    }

    /// Reads members from `p` until one matches `byte` (`Err(Matched)`), the closing `]`
    /// (`Ok(Some(offset after it))`), or the end of the pattern (`Ok(None)`: unterminated).
    fn scan(&self, mut p: usize, byte: u8) -> Result<Option<usize>, Scan> {
        let folded = self.fold(byte);
        let mut c = self.at(p);
        p += 1;
        loop {
            // The member's lower bound (a plain or escaped byte), already folded.
            let mut plain: Option<u8> = None;
            if c == b'\\' {
                if self.at(p) == 0 {
                    return Err(Scan::Fail);
                }
                plain = Some(self.fold(self.at(p)));
                p += 1;
            } else if c == b'[' && self.at(p) == b':' {
                match self.class(p)? {
                    Some((name, after)) => {
                        let class = CClass::named(&name).ok_or(Scan::Fail)?;
                        if class.contains(byte) {
                            return Err(Scan::Matched(after));
                        }
                        p = after;
                        c = self.at(p);
                        p += 1;
                        if c == b']' {
                            return Ok(Some(p));
                        }
                        continue;
                    }
                    None => plain = Some(b'['),
                }
            } else if c == b'[' && self.at(p) == b'=' {
                let symbol = self.at(p + 1);
                if symbol != 0 && self.at(p + 2) == b'=' && self.at(p + 3) == b']' {
                    p += 4;
                    if byte == symbol {
                        return Err(Scan::Matched(p));
                    }
                    c = self.at(p);
                    p += 1;
                    if c == b']' {
                        return Ok(Some(p));
                    }
                    continue;
                }
                plain = Some(b'[');
            } else if c == 0 {
                return Ok(None);
            }

            let lower;
            if let Some(first) = plain.or_else(|| (c != b'[' || self.at(p) != b'.').then(|| self.fold(c))) {
                let is_range = self.at(p) == b'-' && self.at(p + 1) != 0 && self.at(p + 1) != b']';
                if !is_range && first == folded {
                    return Err(Scan::Matched(p));
                }
                lower = first;
            } else {
                // `[.c.]`: a collating symbol, one byte in the C locale, compared unfolded.
                let (symbol, after) = self.collating_symbol(p)?;
                p = after;
                let is_range = self.at(p) == b'-' && self.at(p + 1) != 0;
                if !is_range && byte == symbol {
                    return Err(Scan::Matched(p));
                }
                lower = symbol;
            }
            c = self.at(p);
            p += 1;

            if c == b'-' && self.at(p) != b']' {
                let mut upper = self.at(p);
                p += 1;
                if upper == b'[' && self.at(p) == b'.' {
                    let (symbol, after) = self.collating_symbol(p)?;
                    upper = symbol;
                    p = after;
                } else {
                    if upper == b'\\' {
                        upper = self.at(p);
                        p += 1;
                    }
                    if upper == 0 {
                        return Err(Scan::Fail);
                    }
                    upper = self.fold(upper);
                }
                if lower <= folded && folded <= upper {
                    return Err(Scan::Matched(p));
                }
                c = self.at(p);
                p += 1;
            }
            if c == b']' {
                return Ok(Some(p));
            }
        }
    }

    /// The class name of `[:name:]` with `p` at the `:`, and the offset after `:]`; `None` if the
    /// text cannot be a class name (then the `[` is an ordinary member).
    fn class(&self, p: usize) -> Result<Option<(Vec<u8>, usize)>, Scan> {
        let mut name = Vec::new();
        let mut i = p;
        loop {
            if name.len() == CLASS_NAME_MAX {
                return Err(Scan::Fail);
            }
            i += 1;
            let c = self.at(i);
            if c == b':' && self.at(i + 1) == b']' {
                return Ok(Some((name, i + 2)));
            }
            if !class_name_byte(c) {
                return Ok(None);
            }
            name.push(c);
        }
    }

    /// `[.c.]` with `p` at the `.`: the byte and the offset after `.]`. Any other length fails.
    fn collating_symbol(&self, p: usize) -> Result<(u8, usize), Scan> {
        let mut i = p;
        loop {
            i += 1;
            let c = self.at(i);
            if c == b'.' && self.at(i + 1) == b']' {
                return if i - p == 2 { Ok((self.at(p + 1), i + 2)) } else { Err(Scan::Fail) };
            }
            if c == 0 {
                return Err(Scan::Fail);
            }
        }
    }

    /// After a member matched: the offset after the closing `]`, `None` if the bracket is
    /// unterminated, or `Err` if what follows is ill-formed.
    fn skip_rest(&self, mut p: usize) -> Result<Option<usize>, Scan> {
        loop {
            let c = self.at(p);
            p += 1;
            match c {
                b']' => return Ok(Some(p)),
                0 => return Ok(None),
                b'\\' => {
                    if self.at(p) == 0 {
                        return Err(Scan::Fail);
                    }
                    p += 1;
                }
                b'[' if self.at(p) == b':' => {
                    let start = p;
                    let mut length = 0;
                    loop {
                        p += 1;
                        length += 1;
                        if length == CLASS_NAME_MAX {
                            return Err(Scan::Fail);
                        }
                        if self.at(p) == b':' && self.at(p + 1) == b']' {
                            p += 2;
                            break;
                        }
                        if !class_name_byte(self.at(p)) {
                            p = start;
                            break;
                        }
                    }
                }
                b'[' if self.at(p) == b'=' => {
                    if self.at(p + 1) == 0 || self.at(p + 2) != b'=' || self.at(p + 3) != b']' {
                        return Err(Scan::Fail);
                    }
                    p += 4;
                }
                b'[' if self.at(p) == b'.' => loop {
                    p += 1;
                    match self.at(p) {
                        0 => return Err(Scan::Fail),
                        b'.' if self.at(p + 1) == b']' => {
                            p += 2;
                            break;
                        }
                        _ => {}
                    }
                },
                _ => {}
            }
        }
    }
}

/// glibc reads a class name while `c >= 'a' && c < 'z'`: no class name has a z.
fn class_name_byte(c: u8) -> bool {
    (b'a'..=b'y').contains(&c)
}

/// The character classes of the C locale (ASCII only; bytes above 0x7f belong to none).
#[derive(Clone, Copy)]
enum CClass {
    Alnum,
    Alpha,
    Blank,
    Cntrl,
    Digit,
    Graph,
    Lower,
    Print,
    Punct,
    Space,
    Upper,
    Xdigit,
}

impl CClass {
    fn named(name: &[u8]) -> Option<Self> {
        Some(match name {
            b"alnum" => CClass::Alnum,
            b"alpha" => CClass::Alpha,
            b"blank" => CClass::Blank,
            b"cntrl" => CClass::Cntrl,
            b"digit" => CClass::Digit,
            b"graph" => CClass::Graph,
            b"lower" => CClass::Lower,
            b"print" => CClass::Print,
            b"punct" => CClass::Punct,
            b"space" => CClass::Space,
            b"upper" => CClass::Upper,
            b"xdigit" => CClass::Xdigit,
            _ => return None,
        })
    }

    fn contains(self, b: u8) -> bool {
        match self {
            CClass::Alnum => b.is_ascii_alphanumeric(),
            CClass::Alpha => b.is_ascii_alphabetic(),
            CClass::Blank => b == b' ' || b == b'\t',
            CClass::Cntrl => b.is_ascii_control(),
            CClass::Digit => b.is_ascii_digit(),
            CClass::Graph => b.is_ascii_graphic(),
            CClass::Lower => b.is_ascii_lowercase(),
            CClass::Print => b.is_ascii_graphic() || b == b' ',
            CClass::Punct => b.is_ascii_punctuation(),
            // C's isspace has the vertical tab, Rust's is_ascii_whitespace does not.
            CClass::Space => matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'),
            CClass::Upper => b.is_ascii_uppercase(),
            CClass::Xdigit => b.is_ascii_hexdigit(),
        }
    }
}
