//! Paths as bytes: any name the kernel accepts, UTF-8 or not. No helper here touches the file
//! system; each says what it does with trailing slashes, since the classic tools differ there.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// A command-line path as bytes.
pub fn os_to_bytes(s: &OsStr) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// `path` without its trailing slashes (`a/b//` → `a/b`; `/` → empty).
pub fn without_trailing_slashes(path: &[u8]) -> &[u8] {
    &path[..path.len() - path.iter().rev().take_while(|&&b| b == b'/').count()]
}

/// More than one trailing slash becomes one (`a//` → `a/`), as gnulib's `fts_open` trims its
/// arguments: a path of two slashes stays as it is, POSIX lets `//` mean something else than `/`.
pub fn collapse_trailing_slashes(path: &[u8]) -> &[u8] {
    let mut len = path.len();
    if len > 2 && path[len - 1] == b'/' {
        while len > 1 && path[len - 2] == b'/' {
            len -= 1;
        }
    }
    &path[..len]
}

/// The last component, trailing slashes ignored, as find's `-name` and cp see a path: `a/b/` → `b`,
/// `/` (and `///`) → `/`, empty stays empty.
pub fn last_component(path: &[u8]) -> &[u8] {
    let trimmed = without_trailing_slashes(path);
    if trimmed.is_empty() {
        return &path[..path.len().min(1)];
    }
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    }
}

/// Splits a path into (parent directory, final name) for reaching it relative to its parent.
/// Trailing slashes stay with the name (`a/b/` → `a`, `b/`), so the kernel still checks that it is a
/// directory; the parent of a bare name is `.`, that of `/x` is `/`.
pub fn split_parent(path: &[u8]) -> (&[u8], &[u8]) {
    match without_trailing_slashes(path).iter().rposition(|&b| b == b'/') {
        Some(0) => (b"/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (b".", path),
    }
}

/// Splits a path relative to a walk's roots into its directory (empty at the top) and its name.
pub fn split_relative(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

/// Joins a directory path and a name as find does: no extra `/` after a path that ends in one.
pub fn join_path(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = Vec::with_capacity(dir.len() + 1 + name.len());
    path.extend_from_slice(dir);
    if !dir.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_slashes() {
        assert_eq!(without_trailing_slashes(b"a/b//"), b"a/b");
        assert_eq!(without_trailing_slashes(b"///"), b"");
        assert_eq!(without_trailing_slashes(b"a"), b"a");
    }

    #[test]
    fn trailing_slashes_collapse_like_fts() {
        assert_eq!(collapse_trailing_slashes(b"a//"), b"a/");
        assert_eq!(collapse_trailing_slashes(b"a/"), b"a/");
        assert_eq!(collapse_trailing_slashes(b"//"), b"//");
        assert_eq!(collapse_trailing_slashes(b"///"), b"/");
        assert_eq!(collapse_trailing_slashes(b"a"), b"a");
    }

    #[test]
    fn last_components_like_find_and_cp() {
        let cases: [(&[u8], &[u8]); 10] = [
            (b"/", b"/"),
            (b"a/b/", b"b"),
            (b"a//", b"a"),
            (b".", b"."),
            (b"x/..", b".."),
            (b"/usr/lib", b"lib"),
            (b"///", b"/"),
            (b"a/b", b"b"),
            (b"b", b"b"),
            (b"", b""),
        ];
        for (path, expected) in cases {
            assert_eq!(last_component(path), expected, "{:?}", String::from_utf8_lossy(path));
        }
    }

    #[test]
    fn split_parent_keeps_trailing_slash_with_name() {
        assert_eq!(split_parent(b"a/b/"), (&b"a"[..], &b"b/"[..]));
        assert_eq!(split_parent(b"/x"), (&b"/"[..], &b"x"[..]));
        assert_eq!(split_parent(b"x"), (&b"."[..], &b"x"[..]));
        assert_eq!(split_parent(b"a//b"), (&b"a/"[..], &b"b"[..]));
        assert_eq!(split_parent(b"a/b/f").0, b"a/b");
    }

    #[test]
    fn relative_paths_split_at_their_last_slash() {
        assert_eq!(split_relative(b"a/b/f"), (&b"a/b"[..], &b"f"[..]));
        assert_eq!(split_relative(b"f"), (&b""[..], &b"f"[..]));
    }

    #[test]
    fn joins_add_one_slash_at_most() {
        assert_eq!(join_path(b"a", b"b"), b"a/b");
        assert_eq!(join_path(b"/", b"b"), b"/b");
        assert_eq!(join_path(b"a/", b"b"), b"a/b");
        assert_eq!(join_path(b"a//", b"b"), b"a//b");
    }
}
