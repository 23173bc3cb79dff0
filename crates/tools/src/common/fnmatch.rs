//! Shell patterns as fnmatch(3) reads them for GNU du's `--exclude` and grep's `--include`,
//! `--exclude` and `--exclude-dir`: `*` and `?` match `/` too, `\` escapes, braces are ordinary
//! characters; and the tails of a path such a pattern is tried against.

use globset::{Glob, GlobBuilder};

/// `pattern` compiled with fnmatch's rules.
pub fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(&literal_braces(pattern)).literal_separator(false).backslash_escape(true).build()
}

/// The whole path and every tail of it that starts right after a `/` (GNU's "name suffixes").
pub fn tails(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::once(path).chain(
        path.iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'/' && path.get(i + 1).is_some_and(|&next| next != b'/'))
            .map(move |(i, _)| &path[i + 1..]),
    )
}

/// fnmatch has no `{a,b}` alternatives: braces outside brackets are literal characters.
fn literal_braces(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '{' | '}' if !in_class => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_rules() {
        let m = |p: &str, s: &str| glob(p).unwrap().compile_matcher().is_match(s);
        assert!(m("*.c", "dir/x.c"), "* matches /");
        assert!(m("{a,b}", "{a,b}") && !m("{a,b}", "a"), "braces are literal");
        assert!(m("[{]x", "{x"));
        assert!(m("\\*", "*") && !m("\\*", "a"));
        let all: Vec<&[u8]> = tails(b"a/b//c").collect();
        assert_eq!(all, [&b"a/b//c"[..], b"b//c", b"c"]);
    }
}
