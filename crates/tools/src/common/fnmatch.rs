//! Shell patterns as GNU du's `--exclude` and grep's `--include`, `--exclude` and `--exclude-dir`
//! read them: fnmatch(3) with no flags (find's glob engine: `*` and `?` match `/` too, `\\`
//! escapes, braces are ordinary characters); and the tails of a path such a pattern is tried against.

use canopy_expr::Glob;

/// `pattern` as exclude.c hands it to fnmatch: case-sensitive, in the locale's character set.
pub fn glob(pattern: &[u8]) -> Glob {
    Glob::new(pattern, false)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_rules() {
        let m = |p: &str, s: &str| glob(p.as_bytes()).matches(s.as_bytes());
        assert!(m("*.c", "dir/x.c"), "* matches /");
        assert!(m("{a,b}", "{a,b}") && !m("{a,b}", "a"), "braces are literal");
        assert!(m("[{]x", "{x"));
        assert!(m("\\*", "*") && !m("\\*", "a"));
        assert!(m("[[:digit:]]x", "7x"), "POSIX classes");
        assert!(m("[", "["), "an unterminated bracket is a literal [, not an error");
        let all: Vec<&[u8]> = tails(b"a/b//c").collect();
        assert_eq!(all, [&b"a/b//c"[..], b"b//c", b"c"]);
    }
}
