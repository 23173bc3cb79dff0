//! `-perm` modes: octal (`644`) or symbolic like chmod (`u=rw,g+x`), the latter applied to a zero
//! base as GNU find does — once for non-directories and once for directories, because `X` only
//! grants execute permission to directories when the base has none.

/// How `-perm` compares: exactly, all of the bits (`-MODE`), or any of them (`/MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermMatch {
    Exact,
    All,
    Any,
}

/// A parsed `-perm` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    pub kind: PermMatch,
    /// Bits to compare for non-directories and for directories.
    pub bits: [u32; 2],
}

impl Perm {
    pub fn parse(arg: &str) -> Result<Perm, String> {
        let (kind, mode) = match arg.as_bytes().first() {
            Some(b'-') => (PermMatch::All, &arg[1..]),
            Some(b'/') => (PermMatch::Any, &arg[1..]),
            _ => (PermMatch::Exact, arg),
        };
        let bits = parse_mode(mode).ok_or_else(|| format!("invalid mode '{arg}'"))?;
        Ok(Perm { kind, bits })
    }

    pub fn matches(&self, mode: u32, is_dir: bool) -> bool {
        let want = self.bits[usize::from(is_dir)];
        let have = mode & 0o7777;
        match self.kind {
            PermMatch::Exact => have == want,
            PermMatch::All => have & want == want,
            // `/000` matches everything (GNU ≥ 4.5.12).
            PermMatch::Any => want == 0 || have & want != 0,
        }
    }
}

fn parse_mode(mode: &str) -> Option<[u32; 2]> {
    if !mode.is_empty() && mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        let value = u32::from_str_radix(mode, 8).ok()?;
        return (value <= 0o7777).then_some([value, value]);
    }
    Some([apply_symbolic(mode, false)?, apply_symbolic(mode, true)?])
}

const WHO_U: u32 = 0o4700;
const WHO_G: u32 = 0o2070;
const WHO_O: u32 = 0o1007;

/// Applies chmod-style clauses to a zero mode.
fn apply_symbolic(spec: &str, is_dir: bool) -> Option<u32> {
    let mut mode = 0u32;
    for clause in spec.split(',') {
        let bytes = clause.as_bytes();
        let mut i = 0;
        let mut who = 0;
        while i < bytes.len() && matches!(bytes[i], b'u' | b'g' | b'o' | b'a') {
            who |= match bytes[i] {
                b'u' => WHO_U,
                b'g' => WHO_G,
                b'o' => WHO_O,
                _ => WHO_U | WHO_G | WHO_O,
            };
            i += 1;
        }
        let who_given = who != 0;
        if !who_given {
            who = WHO_U | WHO_G | WHO_O;
        }
        if i == bytes.len() {
            return None; // a clause needs at least one operator
        }
        while i < bytes.len() {
            let op = bytes[i];
            if !matches!(op, b'+' | b'-' | b'=') {
                return None;
            }
            i += 1;
            let mut value = 0u32;
            if i < bytes.len() && matches!(bytes[i], b'u' | b'g' | b'o') {
                let shift = match bytes[i] {
                    b'u' => 6,
                    b'g' => 3,
                    _ => 0,
                };
                let triple = (mode >> shift) & 7;
                value = triple << 6 | triple << 3 | triple;
                i += 1;
            } else {
                while i < bytes.len() && matches!(bytes[i], b'r' | b'w' | b'x' | b'X' | b's' | b't') {
                    value |= match bytes[i] {
                        b'r' => 0o444,
                        b'w' => 0o222,
                        b'x' => 0o111,
                        b'X' if is_dir || mode & 0o111 != 0 => 0o111,
                        b'X' => 0,
                        b's' => 0o6000,
                        _ => 0o1000,
                    };
                    i += 1;
                }
            }
            let affected = value & who;
            // `=` without an explicit who leaves the set-id and sticky bits alone.
            let cleared_by_assign = if who_given { who } else { 0o777 };
            mode = match op {
                b'+' => mode | affected,
                b'-' => mode & !affected,
                _ => (mode & !cleared_by_assign) | affected,
            };
        }
    }
    Some(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_and_prefixes() {
        let p = Perm::parse("644").unwrap();
        assert!(p.matches(0o100644, false));
        assert!(!p.matches(0o100664, false));
        let all = Perm::parse("-g+w").unwrap();
        assert!(all.matches(0o664, false));
        assert!(!all.matches(0o644, false));
        let any = Perm::parse("/u+x,g+x").unwrap();
        assert!(any.matches(0o610, false));
        assert!(!any.matches(0o604, false));
        assert!(Perm::parse("/000").unwrap().matches(0, false));
        assert!(Perm::parse("8").is_err());
        assert!(Perm::parse("u").is_err());
        assert!(Perm::parse("+x").unwrap().matches(0o111, false), "no who means all");
    }

    #[test]
    fn symbolic_like_chmod_on_zero() {
        assert_eq!(Perm::parse("u=rwx,g=rx,o=").unwrap().bits, [0o750, 0o750]);
        assert_eq!(Perm::parse("a=r,u+w").unwrap().bits, [0o644, 0o644]);
        assert_eq!(Perm::parse("u=rw,g=u").unwrap().bits, [0o660, 0o660]);
        assert_eq!(Perm::parse("u+s").unwrap().bits, [0o4000, 0o4000]);
        assert_eq!(Perm::parse("o+t").unwrap().bits, [0o1000, 0o1000]);
        assert_eq!(Perm::parse("a+X").unwrap().bits, [0, 0o111], "X only for directories");
    }
}
