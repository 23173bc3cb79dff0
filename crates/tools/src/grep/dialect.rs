//! GNU grep's pattern syntaxes translated to the regex crate's (or PCRE2's, for back-references):
//! basic (`-G`, the default: `\( \) \| \{m,n\} \+ \?` are operators, `* ^ $` special only where
//! POSIX says), extended (`-E`: `( ) | { } + ?`, a leading `*` dropped with GNU's warning), and
//! fixed strings (`-F`). Bracket expressions keep POSIX's rules (`]` first is literal, a backslash
//! is literal, `[:alpha:]` classes); `\< \> \b \B \w \W \s \S` and `` \` `` `\'` are GNU's. Errors
//! and warnings read as GNU grep's.
//!
//! In the C locale patterns are bytes (`.` matches any byte, classes are ASCII); in a UTF-8 locale
//! they are characters, and a byte that is not part of one matches only itself.

/// Which syntax the pattern is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Basic,
    Extended,
}

/// The regex flavour produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Characters (a UTF-8 locale) rather than bytes.
    pub unicode: bool,
    /// PCRE2's syntax (needed for back-references), else the regex crate's.
    pub pcre: bool,
}

/// A translated pattern.
#[derive(Debug, PartialEq, Eq)]
pub struct Translated {
    pub regex: String,
    /// Capture groups it opens (to number back-references of patterns joined after it).
    pub groups: usize,
    pub backrefs: bool,
    /// GNU's warnings (`* at start of expression`).
    pub warnings: Vec<String>,
}

/// Translates one pattern; back-references are numbered after `groups_before` groups of patterns
/// joined before it.
pub fn translate(
    pattern: &[u8],
    syntax: Syntax,
    target: Target,
    groups_before: usize,
) -> Result<Translated, String> {
    let mut parser = Parser {
        text: pattern,
        at: 0,
        syntax,
        target,
        groups_before,
        groups: 0,
        closed: Vec::new(),
        depth: 0,
        backrefs: false,
        warnings: Vec::new(),
    };
    let regex = parser.alternation()?;
    if parser.at < pattern.len() {
        // Only an unmatched close can stop the top level.
        return Err("Unmatched ) or \\)".into());
    }
    Ok(Translated { regex, groups: parser.groups, backrefs: parser.backrefs, warnings: parser.warnings })
}

/// A fixed string (`-F`): every character literal.
pub fn literal(pattern: &[u8], target: Target) -> String {
    let mut out = String::new();
    let mut at = 0;
    while at < pattern.len() {
        let (c, len) = next_char(&pattern[at..], target.unicode);
        push_literal(&mut out, c, target);
        at += len;
    }
    out
}

/// A character of the pattern: a Unicode scalar, or (C locale, or an invalid sequence) a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Char {
    Scalar(char),
    Byte(u8),
}

fn next_char(bytes: &[u8], unicode: bool) -> (Char, usize) {
    let first = bytes[0];
    if first < 0x80 {
        return (Char::Scalar(first as char), 1);
    }
    if !unicode {
        return (Char::Byte(first), 1);
    }
    let len = match first {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return (Char::Byte(first), 1),
    };
    match bytes.get(..len).and_then(|b| std::str::from_utf8(b).ok()).and_then(|s| s.chars().next()) {
        Some(c) => (Char::Scalar(c), len),
        None => (Char::Byte(first), 1),
    }
}

fn push_literal(out: &mut String, c: Char, target: Target) {
    match c {
        Char::Scalar(c) if c.is_ascii_alphanumeric() || c == ' ' => out.push(c),
        Char::Scalar(c) if c.is_ascii() && regex_syntax::is_meta_character(c) => {
            out.push('\\');
            out.push(c);
        }
        Char::Scalar(c) if c.is_ascii_graphic() => out.push(c),
        Char::Scalar(c) if c.is_ascii() => out.push_str(&format!("\\x{:02X}", c as u32)),
        Char::Scalar(c) => out.push(c),
        Char::Byte(b) => push_byte(out, b, target),
    }
}

/// A byte that is not a character: in a UTF-8 locale it matches only itself.
fn push_byte(out: &mut String, byte: u8, target: Target) {
    // Two hex digits: a byte (`\x{..}` would be a code point).
    if target.unicode && !target.pcre {
        out.push_str(&format!("(?-u:\\x{byte:02X})"));
    } else {
        out.push_str(&format!("\\x{byte:02X}"));
    }
}

/// A character inside a bracket expression.
fn push_class_literal(out: &mut String, c: Char) {
    match c {
        Char::Scalar(c) if c.is_ascii_alphanumeric() => out.push(c),
        Char::Scalar(c) if c.is_ascii_graphic() || c == ' ' => {
            out.push('\\');
            out.push(c);
        }
        Char::Scalar(c) if c.is_ascii() => out.push_str(&format!("\\x{:02X}", c as u32)),
        Char::Scalar(c) => out.push(c),
        // A byte (in a UTF-8 locale a class holds characters: a stray byte stands for U+0080…U+00FF).
        Char::Byte(b) => out.push_str(&format!("\\x{b:02X}")),
    }
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    syntax: Syntax,
    target: Target,
    groups_before: usize,
    groups: usize,
    /// Groups closed so far (back-references may only name those).
    closed: Vec<usize>,
    depth: usize,
    backrefs: bool,
    warnings: Vec<String>,
}

/// A repetition operator, or what stands where one could.
enum Repeat {
    /// Not one here: the text is read as an atom.
    Not,
    /// A leading operator GNU's extended syntax drops.
    Dropped,
    Op(String),
}

/// What a piece of a branch was, for the context rules of `*` and anchors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing yet in this branch (or only `^`): a repetition operator here is not one.
    Start,
    Atom,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn peek2(&self) -> Option<u8> {
        self.text.get(self.at + 1).copied()
    }

    fn basic(&self) -> bool {
        self.syntax == Syntax::Basic
    }

    /// Whether the text at the cursor is the alternation operator.
    fn at_alternation(&self) -> bool {
        match self.syntax {
            Syntax::Basic => self.peek() == Some(b'\\') && self.peek2() == Some(b'|'),
            Syntax::Extended => self.peek() == Some(b'|'),
        }
    }

    /// Whether the text at the cursor closes a group.
    fn at_group_end(&self) -> bool {
        match self.syntax {
            Syntax::Basic => self.peek() == Some(b'\\') && self.peek2() == Some(b')'),
            // A `)` with no group open is an ordinary character in GNU's ERE.
            Syntax::Extended => self.peek() == Some(b')') && self.depth > 0,
        }
    }

    fn alternation(&mut self) -> Result<String, String> {
        let mut branches = vec![self.branch()?];
        while self.at_alternation() {
            self.at += if self.basic() { 2 } else { 1 };
            branches.push(self.branch()?);
        }
        Ok(if branches.len() == 1 { branches.pop().unwrap_or_default() } else { branches.join("|") })
    }

    fn branch(&mut self) -> Result<String, String> {
        let mut out = String::new();
        let mut last = Last::Start;
        // Where the last atom's text begins in `out`, for repetitions.
        let mut atom_start = 0;
        while self.at < self.text.len() && !self.at_alternation() && !self.at_group_end() {
            match self.repetition(last)? {
                Repeat::Op(op) => {
                    let atom = out.split_off(atom_start);
                    out.push_str(&format!("(?:{atom}){op}"));
                    continue;
                }
                Repeat::Dropped => continue,
                Repeat::Not => {}
            }
            let start = out.len();
            last = self.atom(&mut out, last)?;
            if last == Last::Atom {
                atom_start = start;
            }
        }
        Ok(out)
    }

    /// A repetition operator at the cursor, if it is one here (consumed).
    fn repetition(&mut self, last: Last) -> Result<Repeat, String> {
        let (c, len) = match (self.syntax, self.peek(), self.peek2()) {
            (_, Some(b'*'), _) => ('*', 1),
            (Syntax::Basic, Some(b'\\'), Some(c @ (b'+' | b'?' | b'{'))) => (c as char, 2),
            (Syntax::Extended, Some(c @ (b'+' | b'?' | b'{')), _) => (c as char, 1),
            _ => return Ok(Repeat::Not),
        };
        if last == Last::Start {
            return match (self.syntax, c) {
                // Basic: an ordinary character where nothing can be repeated.
                (Syntax::Basic, '{') => Err("Invalid preceding regular expression".into()),
                (Syntax::Basic, _) => Ok(Repeat::Not),
                // Extended: GNU warns; a `{` is then ordinary, the others are dropped.
                (Syntax::Extended, '{') => {
                    if self.interval_end(self.at + 1).is_some() {
                        self.warnings.push("{...} at start of expression".into());
                    }
                    Ok(Repeat::Not)
                }
                (Syntax::Extended, c) => {
                    self.warnings.push(format!("{c} at start of expression"));
                    self.at += len;
                    Ok(Repeat::Dropped)
                }
            };
        }
        if c != '{' {
            self.at += len;
            return Ok(Repeat::Op(c.to_string()));
        }
        let open = self.at + len;
        match self.interval_end(open) {
            Some((min, max, end)) => {
                self.at = end;
                if max.is_some_and(|max| max < min) {
                    return Err("Invalid content of \\{\\}".into());
                }
                if min > 32767 || max.is_some_and(|max| max > 32767) {
                    return Err("Regular expression too big".into());
                }
                Ok(Repeat::Op(match max {
                    Some(max) if max == min => format!("{{{min}}}"),
                    Some(max) => format!("{{{min},{max}}}"),
                    None => format!("{{{min},}}"),
                }))
            }
            // Basic: a `\{` must open an interval.
            None if self.basic() => Err(self.bad_interval(open)),
            // Extended: GNU reads a `{` that opens no interval as itself.
            None => Ok(Repeat::Not),
        }
    }

    /// The interval starting after its `{` at `open`: (min, max, index after its close).
    fn interval_end(&self, open: usize) -> Option<(u32, Option<u32>, usize)> {
        let rest = &self.text[open.min(self.text.len())..];
        let close = if self.basic() {
            rest.windows(2).position(|w| w == b"\\}")?
        } else {
            rest.iter().position(|&b| b == b'}')?
        };
        let body = std::str::from_utf8(&rest[..close]).ok()?;
        let end = open + close + if self.basic() { 2 } else { 1 };
        let number = |s: &str| -> Option<u32> {
            s.parse::<u32>().ok().filter(|_| s.bytes().all(|b| b.is_ascii_digit()))
        };
        match body.split_once(',') {
            None => number(body).map(|n| (n, Some(n), end)),
            Some(("", "")) => Some((0, None, end)),
            Some((min, "")) => number(min).map(|n| (n, None, end)),
            Some(("", max)) => number(max).map(|m| (0, Some(m), end)),
            Some((min, max)) => Some((number(min)?, Some(number(max)?), end)),
        }
    }

    fn bad_interval(&self, open: usize) -> String {
        let rest = &self.text[open.min(self.text.len())..];
        if rest.windows(2).any(|w| w == b"\\}") {
            "Invalid content of \\{\\}".into()
        } else {
            "Unmatched \\{".into()
        }
    }

    /// One atom (or an anchor) at the cursor, appended to `out`.
    fn atom(&mut self, out: &mut String, last: Last) -> Result<Last, String> {
        let c = self.text[self.at];
        match c {
            b'.' => {
                self.at += 1;
                out.push('.');
                Ok(Last::Atom)
            }
            b'[' => {
                self.at += 1;
                self.bracket(out)?;
                Ok(Last::Atom)
            }
            b'^' if !self.basic() || last == Last::Start && self.at_branch_start() => {
                self.at += 1;
                out.push('^');
                Ok(Last::Start)
            }
            b'$' if !self.basic() || self.at_branch_end(self.at + 1) => {
                self.at += 1;
                out.push('$');
                Ok(Last::Atom)
            }
            b'(' if !self.basic() => {
                self.at += 1;
                self.group(out)?;
                Ok(Last::Atom)
            }
            b'\\' => self.escape(out),
            _ => {
                let (ch, len) = next_char(&self.text[self.at..], self.target.unicode);
                self.at += len;
                push_literal(out, ch, self.target);
                Ok(Last::Atom)
            }
        }
    }

    /// Whether the cursor is where a branch begins (pattern start, after an open group or an
    /// alternation): where a basic `^` is an anchor.
    fn at_branch_start(&self) -> bool {
        self.at == 0 || self.text[..self.at].ends_with(b"\\(") || self.text[..self.at].ends_with(b"\\|")
    }

    /// Whether `at` is where a branch ends: where a basic `$` is an anchor.
    fn at_branch_end(&self, at: usize) -> bool {
        let rest = &self.text[at..];
        rest.is_empty() || rest.starts_with(b"\\)") || rest.starts_with(b"\\|")
    }

    /// A group whose opening was consumed.
    fn group(&mut self, out: &mut String) -> Result<(), String> {
        self.groups += 1;
        let number = self.groups;
        self.depth += 1;
        let inner = self.alternation()?;
        if !self.at_group_end() {
            return Err("Unmatched ( or \\(".into());
        }
        self.at += if self.basic() { 2 } else { 1 };
        self.depth -= 1;
        self.closed.push(number);
        out.push('(');
        out.push_str(&inner);
        out.push(')');
        Ok(())
    }

    fn escape(&mut self, out: &mut String) -> Result<Last, String> {
        let Some(&next) = self.text.get(self.at + 1) else {
            return Err("Trailing backslash".into());
        };
        self.at += 2;
        let basic = self.basic();
        match next {
            b'(' if basic => {
                self.group(out)?;
                return Ok(Last::Atom);
            }
            b')' if basic => return Err("Unmatched ) or \\)".into()),
            b'{' if basic => return Err("Invalid preceding regular expression".into()),
            b'1'..=b'9' => {
                let n = usize::from(next - b'0');
                if !self.closed.contains(&n) {
                    return Err("Invalid back reference".into());
                }
                self.backrefs = true;
                out.push_str(&format!("\\g{{{}}}", n + self.groups_before));
            }
            b'w' | b'W' | b's' | b'S' => {
                out.push('\\');
                out.push(next as char);
            }
            b'b' => out.push_str("\\b"),
            b'B' => out.push_str("\\B"),
            b'<' => out.push_str(if self.target.pcre { "\\b(?=\\w)" } else { "\\b{start}" }),
            b'>' => out.push_str(if self.target.pcre { "\\b(?<=\\w)" } else { "\\b{end}" }),
            b'`' => out.push('^'),
            b'\'' => out.push('$'),
            _ => {
                // Anything else stands for itself.
                self.at -= 1;
                let (ch, len) = next_char(&self.text[self.at..], self.target.unicode);
                self.at += len;
                push_literal(out, ch, self.target);
            }
        }
        Ok(Last::Atom)
    }

    /// A bracket expression after its `[`.
    fn bracket(&mut self, out: &mut String) -> Result<(), String> {
        const UNMATCHED: &str = "Unmatched [, [^, [:, [., or [=";
        let open = self.at;
        let mut class = String::from("[");
        if self.peek() == Some(b'^') {
            class.push('^');
            self.at += 1;
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return Err(UNMATCHED.into()) };
            if c == b']' && !first {
                self.at += 1;
                break;
            }
            first = false;
            let start = self.class_item(&mut class)?;
            if self.peek() == Some(b'-') && self.peek2().is_some_and(|c| c != b']') {
                self.at += 1;
                let Some(end) = self.class_item_char()? else { return Err("Invalid range end".into()) };
                let Some(start) = start else { return Err("Invalid range end".into()) };
                if end < start {
                    return Err("Invalid range end".into());
                }
                class.push('-');
                push_class_literal(&mut class, end);
            }
        }
        // `[:alpha:]` alone is a mistake for `[[:alpha:]]`.
        let body = &self.text[open..self.at - 1];
        if body.len() >= 2 && body.starts_with(b":") && body.ends_with(b":") {
            return Err("character class syntax is [[:space:]], not [:space:]".into());
        }
        class.push(']');
        out.push_str(&class);
        Ok(())
    }

    /// One item of a bracket expression, appended to `class`; returns the character if it is a
    /// single one (a range may start with it).
    fn class_item(&mut self, class: &mut String) -> Result<Option<Char>, String> {
        if self.peek() == Some(b'[') && self.peek2() == Some(b':') {
            let end = self.find_close(b':')?;
            let name = std::str::from_utf8(&self.text[self.at + 2..end]).unwrap_or("");
            class.push_str(&self.named_class(name)?);
            self.at = end + 2;
            return Ok(None);
        }
        let c = self.class_item_char()?.expect("a character: the caller saw one");
        push_class_literal(class, c);
        Ok(Some(c))
    }

    /// A single character of a bracket expression (`[.x.]` and `[=x=]` included).
    fn class_item_char(&mut self) -> Result<Option<Char>, String> {
        if self.peek() == Some(b'[') && matches!(self.peek2(), Some(b'.' | b'=')) {
            let close = self.text[self.at + 1];
            let end = self.find_close(close)?;
            let inner = &self.text[self.at + 2..end];
            let (c, len) = if inner.is_empty() {
                return Err("Invalid collation character".into());
            } else {
                next_char(inner, self.target.unicode)
            };
            if len != inner.len() {
                return Err("Invalid collation character".into());
            }
            self.at = end + 2;
            return Ok(Some(c));
        }
        if self.peek() == Some(b'[') && self.peek2() == Some(b':') {
            return Ok(None);
        }
        let Some(_) = self.peek() else { return Err("Unmatched [, [^, [:, [., or [=".into()) };
        let (c, len) = next_char(&self.text[self.at..], self.target.unicode);
        self.at += len;
        Ok(Some(c))
    }

    /// The index of the `X` of the `X]` closing `[X…` at the cursor.
    fn find_close(&self, x: u8) -> Result<usize, String> {
        (self.at + 2..self.text.len().saturating_sub(1))
            .find(|&i| self.text[i] == x && self.text[i + 1] == b']')
            .ok_or_else(|| "Unmatched [, [^, [:, [., or [=".to_string())
    }

    fn named_class(&self, name: &str) -> Result<String, String> {
        const NAMES: &[&str] = &[
            "alpha", "upper", "lower", "digit", "xdigit", "space", "print", "punct", "graph", "cntrl",
            "blank", "alnum",
        ];
        if !NAMES.contains(&name) {
            return Err("Invalid character class name".into());
        }
        if self.target.unicode && !self.target.pcre {
            // The locale's classes are Unicode's in a UTF-8 locale.
            let unicode = match name {
                "alpha" => Some("\\p{Alphabetic}"),
                "upper" => Some("\\p{Uppercase}"),
                "lower" => Some("\\p{Lowercase}"),
                "alnum" => Some("\\p{Alphabetic}\\p{Nd}"),
                "space" => Some("\\s"),
                _ => None,
            };
            if let Some(class) = unicode {
                return Ok(class.to_string());
            }
        }
        Ok(format!("[:{name}:]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: Target = Target { unicode: false, pcre: false };

    fn compiles_to(pattern: &str, syntax: Syntax) -> String {
        translate(pattern.as_bytes(), syntax, BYTES, 0).unwrap().regex
    }

    fn matches(pattern: &str, syntax: Syntax, line: &[u8]) -> bool {
        let t = translate(pattern.as_bytes(), syntax, BYTES, 0).unwrap();
        regex::bytes::RegexBuilder::new(&t.regex).unicode(false).build().unwrap().is_match(line)
    }

    fn error(pattern: &str, syntax: Syntax) -> String {
        translate(pattern.as_bytes(), syntax, BYTES, 0).unwrap_err()
    }

    #[test]
    fn basic_syntax_is_gnu_greps() {
        use Syntax::Basic as B;
        assert!(matches("a\\(b\\|c\\)d", B, b"xacd"));
        assert!(matches("a\\{2\\}", B, b"aa") && !matches("a\\{2\\}", B, b"a"));
        assert!(matches("a+", B, b"a+") && !matches("a+", B, b"aa"), "+ is ordinary");
        assert!(matches("a\\+", B, b"aaa"));
        assert!(matches("(a)", B, b"(a)"), "parentheses are ordinary");
        assert!(matches("*a", B, b"*a") && !matches("*a", B, b"a"), "a leading * is ordinary");
        assert!(matches("\\(*a\\)", B, b"*a"));
        assert!(matches("^*a", B, b"*a"), "* after a leading ^ is ordinary");
        assert!(matches("a^b", B, b"a^b"), "^ inside is ordinary");
        assert!(matches("a$b", B, b"a$b"), "$ inside is ordinary");
        assert!(matches("x\\|^a", B, b"abc") && !matches("x\\|^b", B, b"abc"));
        assert!(matches("[]a]", B, b"]") && matches("[^]a]", B, b"b") && !matches("[^]a]", B, b"]"));
        assert!(matches("[\\]", B, b"\\"), "a backslash is literal in brackets");
        assert!(matches("[[:digit:]]\\{3\\}", B, b"a123"));
        assert!(matches("[a-c]x", B, b"bx") && matches("[a-]", B, b"-"));
        assert!(matches("[[.-.]]", B, b"-") && matches("[[=e=]]", B, b"e"));
        assert!(matches("\\<foo\\>", B, b"a foo b") && !matches("\\<foo\\>", B, b"afoo"));
        assert!(matches("\\d", B, b"d"), "unknown escapes are the character");
        assert!(matches("a.c", B, b"a\xffc"), "dot matches any byte in the C locale");
        assert_eq!(compiles_to("a**", B), "(?:(?:a)*)*");
    }

    #[test]
    fn extended_syntax_is_gnu_greps() {
        use Syntax::Extended as E;
        assert!(matches("(a|b)+c", E, b"abac"));
        assert!(matches("a{2,}", E, b"aaa") && matches("a{,2}b", E, b"b"));
        assert!(matches("a{x", E, b"a{x"), "a {{ that opens no interval is itself");
        assert!(matches("a{1", E, b"a{1"));
        assert!(matches(")", E, b"a)"), "an unmatched ) is itself");
        assert!(matches("\\(", E, b"("));
        assert!(matches("a||b", E, b"zzz"), "an empty alternative matches");
        assert!(translate(b"(a)\\1", E, BYTES, 0).unwrap().backrefs, "back-references go to PCRE2");
        let leading = translate(b"*a", E, BYTES, 0).unwrap();
        assert_eq!(leading.warnings, ["* at start of expression"]);
        assert!(matches("*a", E, b"xa"), "a leading * is dropped");
        assert!(matches("a|+b", E, b"b"));
        assert!(matches("(*a)", E, b"a"));
        assert!(matches("^*a", E, b"a"));
    }

    #[test]
    fn errors_read_as_gnu_greps() {
        use Syntax::{Basic as B, Extended as E};
        assert_eq!(error("a\\)", B), "Unmatched ) or \\)");
        assert_eq!(error("\\(", B), "Unmatched ( or \\(");
        assert_eq!(error("(", E), "Unmatched ( or \\(");
        assert_eq!(error("[a", B), "Unmatched [, [^, [:, [., or [=");
        assert_eq!(error("[:alpha:]", B), "character class syntax is [[:space:]], not [:space:]");
        assert_eq!(error("a\\{1", B), "Unmatched \\{");
        assert_eq!(error("a\\{x\\}", B), "Invalid content of \\{\\}");
        assert_eq!(error("a\\{2,1\\}", B), "Invalid content of \\{\\}");
        assert_eq!(error("a{2,1}", E), "Invalid content of \\{\\}");
        assert_eq!(error("\\1", B), "Invalid back reference");
        assert_eq!(error("\\(a\\)\\2", B), "Invalid back reference");
        assert_eq!(error("\\", B), "Trailing backslash");
        assert_eq!(error("[[:foo:]]", B), "Invalid character class name");
        assert_eq!(error("[b-a]", B), "Invalid range end");
    }

    #[test]
    fn characters_follow_the_locale() {
        let unicode = Target { unicode: true, pcre: false };
        let t = translate("caf\u{e9}.".as_bytes(), Syntax::Basic, unicode, 0).unwrap();
        let re = regex::bytes::Regex::new(&t.regex).unwrap();
        assert!(re.is_match("café!".as_bytes()));
        assert!(!re.is_match(b"caf\xc3\xa9\xff"), "an invalid byte is no character");
        let stray = translate(b"a\xffb", Syntax::Basic, unicode, 0).unwrap();
        assert!(regex::bytes::Regex::new(&stray.regex).unwrap().is_match(b"a\xffb"));
        assert_eq!(literal(b"a.b*\xff", BYTES), "a\\.b\\*\\xFF");
        let backref =
            translate(b"\\(a\\)\\1", Syntax::Basic, Target { unicode: false, pcre: true }, 2).unwrap();
        assert_eq!(backref.regex, "(a)\\g{3}");
        assert!(backref.backrefs);
    }
}
