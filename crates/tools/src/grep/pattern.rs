//! What counts as a match: the patterns compiled as grep's flags say (`-G -E -F -P -i -w -x -z`).
//!
//! Lines are selected by the regex crate (through `grep-regex`, with its literal optimisations), or
//! by PCRE2 for `-P` and for basic and extended patterns with back-references. Where a line's
//! matches are shown (`-o`, colors) they are POSIX's leftmost-longest ones, as GNU grep shows them:
//! each match found leftmost is extended to the longest match starting there (Perl's leftmost-first
//! matches for `-P` and back-references, as PCRE2 gives them).

use super::dialect::{self, Syntax, Target};
use grep_matcher::Matcher;
use grep_searcher::{Searcher, Sink};
use regex_automata::meta;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use std::fs::File;
use std::io::Read;

/// How the patterns are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dialect {
    /// `-G`: GNU basic regular expressions (the default).
    #[default]
    Basic,
    /// `-E`: GNU extended regular expressions.
    Extended,
    /// `-F`: fixed strings.
    Fixed,
    /// `-P`: Perl-compatible (PCRE2).
    Perl,
}

/// Everything that decides what matches.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    /// One pattern per element (grep's newline-separated lists already split).
    pub patterns: Vec<Vec<u8>>,
    pub dialect: Dialect,
    pub ignore_case: bool,
    pub word: bool,
    pub line: bool,
    /// `-z`: lines end with NUL.
    pub null_data: bool,
    /// Characters rather than bytes (a UTF-8 locale).
    pub unicode: bool,
    /// Match positions will be asked for (`-o`, colors).
    pub positions: bool,
}

enum Engine {
    Rust(grep_regex::RegexMatcher),
    /// `-z`: the regex crate on one NUL-terminated record at a time (see [`Records`]).
    Records(grep_regex::RegexMatcher),
    Pcre(grep_pcre2::RegexMatcher),
}

/// A matcher that promises nothing about line terminators, so that the searcher hands it each
/// record alone, terminator stripped: `^` and `$` are then the record's start and end, as with
/// GNU grep -z, whatever newlines the record holds.
struct Records<'a>(&'a grep_regex::RegexMatcher);

impl Matcher for Records<'_> {
    type Captures = <grep_regex::RegexMatcher as Matcher>::Captures;
    type Error = <grep_regex::RegexMatcher as Matcher>::Error;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<grep_matcher::Match>, Self::Error> {
        self.0.find_at(haystack, at)
    }

    fn new_captures(&self) -> Result<Self::Captures, Self::Error> {
        self.0.new_captures()
    }

    fn capture_count(&self) -> usize {
        self.0.capture_count()
    }

    fn captures_at(
        &self,
        haystack: &[u8],
        at: usize,
        caps: &mut Self::Captures,
    ) -> Result<bool, Self::Error> {
        self.0.captures_at(haystack, at, caps)
    }
}

pub struct Pattern {
    engine: Engine,
    /// The same patterns with all matches known, to extend a match to the longest one.
    longest: Option<meta::Regex>,
}

impl Pattern {
    /// Compiles `spec`; returns the pattern and GNU's warnings about it.
    pub fn new(spec: &Spec) -> Result<(Pattern, Vec<String>), String> {
        let mut warnings = Vec::new();
        let rust = Target { unicode: spec.unicode, pcre: false };
        let translated: Vec<String> = match spec.dialect {
            Dialect::Perl => {
                let [pattern] = spec.patterns.as_slice() else {
                    return Err("the -P option only supports a single pattern".into());
                };
                let pattern = std::str::from_utf8(pattern).map_err(|_| "-P supports only UTF-8 patterns")?;
                return Ok((
                    Pattern { engine: Engine::Pcre(pcre(spec, &[pattern])?), longest: None },
                    warnings,
                ));
            }
            Dialect::Fixed => spec.patterns.iter().map(|p| dialect::literal(p, rust)).collect(),
            Dialect::Basic | Dialect::Extended => {
                let syntax = if spec.dialect == Dialect::Basic { Syntax::Basic } else { Syntax::Extended };
                let mut out = Vec::new();
                let mut backrefs = false;
                for pattern in &spec.patterns {
                    let t = dialect::translate(pattern, syntax, rust, 0)?;
                    backrefs |= t.backrefs;
                    warnings.extend(t.warnings);
                    out.push(t.regex);
                }
                if backrefs {
                    // The regex crate has no back-references: PCRE2 takes the whole list.
                    let target = Target { unicode: spec.unicode, pcre: true };
                    let mut groups = 0;
                    let mut pcre_patterns = Vec::new();
                    for pattern in &spec.patterns {
                        let t = dialect::translate(pattern, syntax, target, groups)?;
                        groups += t.groups;
                        pcre_patterns.push(t.regex);
                    }
                    let engine = Engine::Pcre(pcre(spec, &pcre_patterns)?);
                    return Ok((Pattern { engine, longest: None }, warnings));
                }
                out
            }
        };
        let mut builder = grep_regex::RegexMatcherBuilder::new();
        builder
            .case_insensitive(spec.ignore_case)
            .unicode(spec.unicode)
            .word(spec.word && !spec.line)
            .dot_matches_new_line(spec.null_data);
        let translated = if spec.null_data {
            // Records end in NUL and may hold newlines: `^` and `$` are a record's start and end.
            builder.multi_line(false).line_terminator(None);
            if spec.line { translated.iter().map(|p| format!(r"\A(?:{p})\z")).collect() } else { translated }
        } else {
            builder.multi_line(true).whole_line(spec.line).line_terminator(Some(b'\n'));
            translated
        };
        let matcher = if translated.is_empty() {
            // No pattern at all (`-f /dev/null`) matches nothing.
            builder.build(r"[^\s\S]")
        } else {
            builder.build_many(&translated)
        }
        .map_err(|e| e.to_string())?;
        let longest =
            if spec.positions && !translated.is_empty() { Some(longest(spec, &translated)?) } else { None };
        let engine = if spec.null_data { Engine::Records(matcher) } else { Engine::Rust(matcher) };
        Ok((Pattern { engine, longest }, warnings))
    }

    /// Searches an open file.
    pub fn search_file<S: Sink>(
        &self,
        searcher: &mut Searcher,
        file: &File,
        sink: S,
    ) -> Result<(), S::Error> {
        match &self.engine {
            Engine::Rust(m) => searcher.search_file(m, file, sink),
            Engine::Records(m) => searcher.search_file(Records(m), file, sink),
            Engine::Pcre(m) => searcher.search_file(m, file, sink),
        }
    }

    /// Searches a stream (standard input).
    pub fn search_reader<S: Sink>(
        &self,
        searcher: &mut Searcher,
        input: impl Read,
        sink: S,
    ) -> Result<(), S::Error> {
        match &self.engine {
            Engine::Rust(m) => searcher.search_reader(m, input, sink),
            Engine::Records(m) => searcher.search_reader(Records(m), input, sink),
            Engine::Pcre(m) => searcher.search_reader(m, input, sink),
        }
    }

    /// Searches bytes in memory.
    pub fn search_slice<S: Sink>(
        &self,
        searcher: &mut Searcher,
        data: &[u8],
        sink: S,
    ) -> Result<(), S::Error> {
        match &self.engine {
            Engine::Rust(m) => searcher.search_slice(m, data, sink),
            Engine::Records(m) => searcher.search_slice(Records(m), data, sink),
            Engine::Pcre(m) => searcher.search_slice(m, data, sink),
        }
    }

    /// The non-empty matches in `line` (without its terminator), in order, into `out`.
    pub fn matches_in(&self, line: &[u8], out: &mut Vec<(usize, usize)>) {
        out.clear();
        let mut at = 0;
        while at <= line.len() {
            let found = match &self.engine {
                Engine::Rust(m) | Engine::Records(m) => m.find_at(line, at).ok().flatten(),
                Engine::Pcre(m) => m.find_at(line, at).ok().flatten(),
            };
            let Some(found) = found else { break };
            let (start, mut end) = (found.start(), found.end());
            if let Some(longest) = &self.longest {
                let input = Input::new(line).range(start..).anchored(Anchored::Yes);
                if let Some(longer) = longest.search(&input) {
                    end = end.max(longer.end());
                }
            }
            if end > start {
                out.push((start, end));
                at = end;
            } else {
                // An empty match shows nothing; look further on.
                at = start + 1;
            }
        }
    }
}

fn pcre<P: AsRef<str>>(spec: &Spec, patterns: &[P]) -> Result<grep_pcre2::RegexMatcher, String> {
    let mut builder = grep_pcre2::RegexMatcherBuilder::new();
    builder
        .caseless(spec.ignore_case)
        .word(spec.word && !spec.line)
        .whole_line(spec.line)
        .multi_line(!spec.null_data)
        .dotall(spec.null_data)
        .jit_if_available(true);
    if spec.unicode {
        builder.utf(true).ucp(true);
    }
    builder.build_many(patterns).map_err(|e| e.to_string())
}

/// A regex reporting every match, so that an anchored search finds the longest one.
fn longest(spec: &Spec, translated: &[String]) -> Result<meta::Regex, String> {
    let mut joined = translated.iter().map(|p| format!("(?:{p})")).collect::<Vec<_>>().join("|");
    if spec.line && !spec.null_data {
        joined = format!("(?m:^)(?:{joined})(?m:$)");
    } else if spec.word {
        joined = format!(r"\b{{start-half}}(?:{joined})\b{{end-half}}");
    }
    meta::Regex::builder()
        .syntax(
            syntax::Config::new()
                .case_insensitive(spec.ignore_case)
                .unicode(spec.unicode)
                .utf8(false)
                .multi_line(!spec.null_data)
                .dot_matches_new_line(spec.null_data),
        )
        .configure(meta::Config::new().match_kind(MatchKind::All))
        .build(&joined)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(patterns: &[&str], dialect: Dialect) -> Spec {
        Spec {
            patterns: patterns.iter().map(|p| p.as_bytes().to_vec()).collect(),
            dialect,
            positions: true,
            ..Spec::default()
        }
    }

    fn shown(spec: &Spec, line: &str) -> Vec<String> {
        let (pattern, _) = Pattern::new(spec).unwrap();
        let mut matches = Vec::new();
        pattern.matches_in(line.as_bytes(), &mut matches);
        matches.iter().map(|&(s, e)| line[s..e].to_string()).collect()
    }

    #[test]
    fn matches_are_leftmost_longest_as_gnu_greps() {
        assert_eq!(shown(&spec(&["a\\|ab"], Dialect::Basic), "ab ab"), ["ab", "ab"]);
        assert_eq!(shown(&spec(&["a|ab"], Dialect::Extended), "xab"), ["ab"]);
        assert_eq!(
            shown(&spec(&["a", "ab"], Dialect::Fixed), "ab"),
            ["ab"],
            "several patterns, longest wins"
        );
        let mut words = spec(&["foo"], Dialect::Basic);
        words.word = true;
        assert_eq!(shown(&words, "foobar foo"), ["foo"]);
        let mut lines = spec(&["fo."], Dialect::Basic);
        lines.line = true;
        assert_eq!(shown(&lines, "foo"), ["foo"]);
        assert!(shown(&lines, "foox").is_empty());
        assert!(shown(&spec(&["x*"], Dialect::Basic), "abc").is_empty(), "empty matches show nothing");
        assert_eq!(shown(&spec(&["a(?=b)"], Dialect::Perl), "xab"), ["a"]);
        assert_eq!(
            shown(&spec(&["\\(ab\\)\\1"], Dialect::Basic), "xabab"),
            ["abab"],
            "back-references by PCRE2"
        );
    }

    #[test]
    fn bytes_match_bytes_in_the_c_locale() {
        let (pattern, _) = Pattern::new(&spec(&["caf\u{e9}"], Dialect::Fixed)).unwrap();
        let mut matches = Vec::new();
        pattern.matches_in("a café".as_bytes(), &mut matches);
        assert_eq!(matches, [(2, 7)]);
        let raw = Spec { patterns: vec![b"\xff.".to_vec()], positions: true, ..Spec::default() };
        Pattern::new(&raw).unwrap().0.matches_in(b"x\xff\xfe", &mut matches);
        assert_eq!(matches, [(1, 3)]);
    }

    #[test]
    fn pattern_lists_and_errors() {
        assert!(Pattern::new(&spec(&["a", "b"], Dialect::Perl)).is_err(), "-P takes one pattern");
        let (nothing, _) = Pattern::new(&spec(&[], Dialect::Basic)).unwrap();
        let mut matches = Vec::new();
        nothing.matches_in(b"anything", &mut matches);
        assert!(matches.is_empty());
        let (_, warnings) = Pattern::new(&spec(&["*a"], Dialect::Extended)).unwrap();
        assert_eq!(warnings, ["* at start of expression"]);
        assert_eq!(Pattern::new(&spec(&["\\("], Dialect::Basic)).err().unwrap(), "Unmatched ( or \\(");
    }
}
