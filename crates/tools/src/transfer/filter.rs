//! rsync's include/exclude rules (`--exclude`, `--include`, `--exclude-from`), for their common
//! forms: the first rule whose pattern matches an entry decides; an excluded directory is not
//! entered; excluded entries in the destination are safe from `--delete`.
//!
//! Patterns match names relative to the transfer's root (`SRC` names its entries `SRC/…`, `SRC/`
//! without a prefix). A pattern with a `/` (not counting a trailing one) or a `**` matches the whole
//! name — from the root if it starts with `/`, else any tail of it that starts a component; other
//! patterns match the last component. A trailing `/` matches directories only; `dir/***` matches
//! `dir` and everything in it. In patterns `*` matches within a component, `**` across them, `?`
//! one character but `/`, `[…]` a class (`!` or `^` negates), `\` quotes the next character —
//! rsync's wildmatch, which globset's `**` (whole components only) does not follow.

use std::io::BufRead;

/// The rules, in command-line order.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    rules: Vec<Rule>,
}

#[derive(Clone, Debug)]
struct Rule {
    include: bool,
    pattern: Vec<u8>,
    anchored: bool,
    dir_only: bool,
    /// Matched against the whole name rather than its last component.
    whole_name: bool,
    /// `dir/***`: the directory and everything in it.
    with_contents: bool,
}

impl Rule {
    fn new(include: bool, text: &[u8]) -> Rule {
        let anchored = text.starts_with(b"/");
        let mut pattern = if anchored { &text[1..] } else { text };
        let dir_only = pattern.len() > 1 && pattern.ends_with(b"/");
        if dir_only {
            pattern = &pattern[..pattern.len() - 1];
        }
        let with_contents = pattern.ends_with(b"/***");
        if with_contents {
            pattern = &pattern[..pattern.len() - 4];
        }
        let whole_name = anchored || with_contents || pattern.contains(&b'/') || contains(pattern, b"**");
        Rule { include, pattern: pattern.to_vec(), anchored, dir_only, whole_name, with_contents }
    }

    fn matches(&self, name: &[u8], is_dir: bool) -> bool {
        if !self.whole_name {
            let last = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
            return (!self.dir_only || is_dir) && wildmatch(&self.pattern, last);
        }
        let tails = std::iter::once(0).chain(
            name.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'/')
                .map(|(i, _)| i + 1)
                .filter(|_| !self.anchored),
        );
        for start in tails {
            let tail = &name[start..];
            if self.with_contents {
                // The directory itself, or anything below it.
                if wildmatch(&self.pattern, tail) && (!self.dir_only || is_dir) {
                    return true;
                }
                let inside = tail.iter().enumerate().filter(|(_, b)| **b == b'/');
                if inside.into_iter().any(|(i, _)| wildmatch(&self.pattern, &tail[..i])) {
                    return true;
                }
            } else if (!self.dir_only || is_dir) && wildmatch(&self.pattern, tail) {
                return true;
            }
        }
        false
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

impl Filter {
    pub fn exclude(&mut self, pattern: &[u8]) {
        self.rules.push(Rule::new(false, pattern));
    }

    pub fn include(&mut self, pattern: &[u8]) {
        self.rules.push(Rule::new(true, pattern));
    }

    /// The rules of an `--exclude-from` file: one pattern a line, `- ` or `+ ` in front for an
    /// explicit exclude or include; blank lines and lines starting with `#` or `;` ignored.
    pub fn read_excludes(&mut self, file: impl BufRead) -> std::io::Result<()> {
        for line in file.split(b'\n') {
            let mut line = line?;
            if line.ends_with(b"\r") {
                line.pop();
            }
            match line.as_slice() {
                [] | [b'#' | b';', ..] => {}
                [b'+', b' ', pattern @ ..] => self.include(pattern),
                [b'-', b' ', pattern @ ..] => self.exclude(pattern),
                pattern => self.exclude(pattern),
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether the entry named `name` (relative to the transfer's root) is excluded.
    pub fn excluded(&self, name: &[u8], is_dir: bool) -> bool {
        self.rules.iter().find(|rule| rule.matches(name, is_dir)).is_some_and(|rule| !rule.include)
    }
}

/// Whether `pattern` matches all of `text` (rsync's wildmatch).
pub fn wildmatch(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => {
            let across = rest.first() == Some(&b'*');
            let rest = &pattern[pattern.iter().take_while(|&&b| b == b'*').count()..];
            for start in 0..=text.len() {
                if wildmatch(rest, &text[start..]) {
                    return true;
                }
                if !across && text.get(start) == Some(&b'/') {
                    return false;
                }
            }
            false
        }
        Some((b'?', rest)) => {
            matches!(text.split_first(), Some((&c, tail)) if c != b'/' && wildmatch(rest, tail))
        }
        Some((b'[', rest)) => match (class(rest), text.split_first()) {
            (Some((matched, after)), Some((&c, tail))) => c != b'/' && matched(c) && wildmatch(after, tail),
            (Some(_), None) => false,
            // An unclosed `[` is literal.
            (None, _) => text.first() == Some(&b'[') && wildmatch(rest, &text[1..]),
        },
        Some((b'\\', [quoted, rest @ ..])) => text.first() == Some(quoted) && wildmatch(rest, &text[1..]),
        Some((&c, rest)) => text.first() == Some(&c) && wildmatch(rest, &text[1..]),
    }
}

/// A bracket expression after its `[`: the test and the pattern after its `]`.
fn class(pattern: &[u8]) -> Option<(impl Fn(u8) -> bool, &[u8])> {
    let negated = matches!(pattern.first(), Some(b'!' | b'^'));
    let body_start = usize::from(negated);
    // A `]` right after the opening (and its negation) is a member.
    let close = pattern[body_start..].iter().skip(1).position(|&b| b == b']')? + body_start + 1;
    let body = pattern[body_start..close].to_vec();
    let test = move |c: u8| {
        let mut i = 0;
        let mut found = false;
        while i < body.len() {
            if i + 2 < body.len() && body[i + 1] == b'-' {
                found |= (body[i]..=body[i + 2]).contains(&c);
                i += 3;
            } else {
                found |= body[i] == c;
                i += 1;
            }
        }
        found != negated
    };
    Some((test, &pattern[close + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildmatch_like_rsync() {
        assert!(wildmatch(b"*.o", b"x.o"));
        assert!(!wildmatch(b"*.o", b"d/x.o"), "* stays within a component");
        assert!(wildmatch(b"**.o", b"d/x.o"));
        assert!(wildmatch(b"a?c", b"abc") && !wildmatch(b"a?c", b"a/c"));
        assert!(wildmatch(b"[a-c]x", b"bx") && !wildmatch(b"[!a-c]x", b"bx") && wildmatch(b"[^a-c]x", b"dx"));
        assert!(wildmatch(b"[]]", b"]"));
        assert!(wildmatch(b"\\*", b"*") && !wildmatch(b"\\*", b"x"));
        assert!(wildmatch(b"[ab", b"[ab"), "an unclosed bracket is literal");
    }

    fn filter(rules: &[(&str, bool)]) -> Filter {
        let mut f = Filter::default();
        for (pattern, include) in rules {
            if *include { f.include(pattern.as_bytes()) } else { f.exclude(pattern.as_bytes()) }
        }
        f
    }

    #[test]
    fn rules_as_rsync_applies_them() {
        let f = filter(&[("*.o", false)]);
        assert!(f.excluded(b"x.o", false) && f.excluded(b"a/b/x.o", false) && !f.excluded(b"x.c", false));
        let f = filter(&[("/top", false)]);
        assert!(f.excluded(b"top", true) && !f.excluded(b"a/top", true), "anchored at the root");
        let f = filter(&[("b/c", false)]);
        assert!(f.excluded(b"b/c", false) && f.excluded(b"a/b/c", false) && !f.excluded(b"ab/c", false));
        let f = filter(&[("cache/", false)]);
        assert!(f.excluded(b"x/cache", true) && !f.excluded(b"x/cache", false), "directories only");
        let f = filter(&[("*/", true), ("*.c", true), ("*", false)]);
        assert!(!f.excluded(b"src", true) && !f.excluded(b"src/a.c", false) && f.excluded(b"src/a.h", false));
        let f = filter(&[("/keep/***", true), ("*", false)]);
        assert!(
            !f.excluded(b"keep", true) && !f.excluded(b"keep/deep/f", false) && f.excluded(b"other", true)
        );
        let f = filter(&[("**/tmp/**", false)]);
        assert!(f.excluded(b"a/tmp/b", false) && !f.excluded(b"tmp", true));
    }

    #[test]
    fn exclude_from_file() {
        let mut f = Filter::default();
        f.read_excludes(&b"# comment\n; also\n\n*.log\n+ keep.tmp\n- *.tmp\n"[..]).unwrap();
        assert!(
            f.excluded(b"a.log", false) && f.excluded(b"b.tmp", false) && !f.excluded(b"keep.tmp", false)
        );
        assert!(!f.excluded(b"# comment", false));
    }
}
