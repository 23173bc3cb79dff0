//! find's `-regex` as GNU find reads it: glibc's regex parser, driven by the syntax bits of each
//! `-regextype` (regex.h's `RE_SYNTAX_*`), translated token by token to the `regex` crate. The
//! match is against the whole path. `^` and `$` also match at newlines (GNU compiles with
//! `newline_anchor`). In a UTF-8 locale a path that is valid UTF-8 is matched by characters (its
//! own compiled form); anything else byte by byte. Back-references have no equivalent in the
//! `regex` crate and are refused with a clear message.

use regex::bytes::{Regex, RegexBuilder};

/// glibc's syntax bits (`RE_BACKSLASH_ESCAPE_IN_LISTS` …), the same values as regex.h.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syntax(u32);

const BACKSLASH_ESCAPE_IN_LISTS: u32 = 1;
const BK_PLUS_QM: u32 = 1 << 1;
const CHAR_CLASSES: u32 = 1 << 2;
const CONTEXT_INDEP_ANCHORS: u32 = 1 << 3;
const CONTEXT_INDEP_OPS: u32 = 1 << 4;
const CONTEXT_INVALID_OPS: u32 = 1 << 5;
const DOT_NEWLINE: u32 = 1 << 6;
const DOT_NOT_NULL: u32 = 1 << 7;
const HAT_LISTS_NOT_NEWLINE: u32 = 1 << 8;
const INTERVALS: u32 = 1 << 9;
const LIMITED_OPS: u32 = 1 << 10;
const NEWLINE_ALT: u32 = 1 << 11;
const NO_BK_BRACES: u32 = 1 << 12;
const NO_BK_PARENS: u32 = 1 << 13;
const NO_BK_REFS: u32 = 1 << 14;
const NO_BK_VBAR: u32 = 1 << 15;
const NO_EMPTY_RANGES: u32 = 1 << 16;
const UNMATCHED_RIGHT_PAREN_ORD: u32 = 1 << 17;
const NO_GNU_OPS: u32 = 1 << 19;
const INVALID_INTERVAL_ORD: u32 = 1 << 21;
/// Set by the parser itself where a `^` is an anchor in any syntax: at the start, after `(`, `|`.
const CARET_ANCHORS_HERE: u32 = 1 << 23;
const CONTEXT_INVALID_DUP: u32 = 1 << 24;

const POSIX_COMMON: u32 = CHAR_CLASSES | DOT_NEWLINE | DOT_NOT_NULL | INTERVALS | NO_EMPTY_RANGES;
const POSIX_BASIC: u32 = POSIX_COMMON | BK_PLUS_QM | CONTEXT_INVALID_DUP;
const POSIX_EXTENDED: u32 = POSIX_COMMON
    | CONTEXT_INDEP_ANCHORS
    | CONTEXT_INDEP_OPS
    | NO_BK_BRACES
    | NO_BK_PARENS
    | NO_BK_VBAR
    | CONTEXT_INVALID_OPS
    | UNMATCHED_RIGHT_PAREN_ORD;

/// glibc's `RE_DUP_MAX`: the largest count an interval may give.
const DUP_MAX: i32 = 0x7fff;

impl Syntax {
    /// find's default, `findutils-default`: Emacs syntax where `.` also matches a newline.
    pub const FINDUTILS_DEFAULT: Syntax = Syntax(DOT_NEWLINE);

    /// The syntax for a `-regextype` name, as findutils' `regextype.c` maps them.
    pub fn from_name(name: &str) -> Option<Self> {
        let awk = BACKSLASH_ESCAPE_IN_LISTS
            | DOT_NOT_NULL
            | NO_BK_PARENS
            | NO_BK_REFS
            | NO_BK_VBAR
            | NO_EMPTY_RANGES
            | DOT_NEWLINE
            | CONTEXT_INDEP_ANCHORS
            | CHAR_CLASSES
            | UNMATCHED_RIGHT_PAREN_ORD
            | NO_GNU_OPS;
        let egrep =
            (POSIX_EXTENDED | INVALID_INTERVAL_ORD | NEWLINE_ALT) & !(CONTEXT_INVALID_OPS | DOT_NOT_NULL);
        Some(Syntax(match name {
            "findutils-default" => Self::FINDUTILS_DEFAULT.0,
            "emacs" => 0,
            "awk" => awk,
            "gnu-awk" => {
                (POSIX_EXTENDED | BACKSLASH_ESCAPE_IN_LISTS | INVALID_INTERVAL_ORD)
                    & !(DOT_NOT_NULL | CONTEXT_INDEP_OPS | CONTEXT_INVALID_OPS)
            }
            "posix-awk" => {
                POSIX_EXTENDED | BACKSLASH_ESCAPE_IN_LISTS | INTERVALS | NO_GNU_OPS | INVALID_INTERVAL_ORD
            }
            "grep" => (POSIX_BASIC | NEWLINE_ALT) & !(CONTEXT_INVALID_DUP | DOT_NOT_NULL),
            "egrep" | "posix-egrep" => egrep,
            "ed" | "sed" | "posix-basic" => POSIX_BASIC,
            "posix-minimal-basic" => POSIX_COMMON | LIMITED_OPS,
            "posix-extended" => POSIX_EXTENDED,
            _ => return None,
        }))
    }

    /// GNU find's list, for its error message.
    pub const NAMES: &'static str = "'findutils-default', 'ed', 'emacs', 'gnu-awk', 'grep', 'posix-awk', 'awk', \
                                     'posix-basic', 'posix-egrep', 'egrep', 'posix-extended', 'posix-minimal-basic', 'sed'";

    fn has(self, bits: u32) -> bool {
        self.0 & bits != 0
    }
}

/// A compiled `-regex`: one form for paths that are valid UTF-8 (in a UTF-8 locale), one that also
/// takes stray bytes for the rest; in the C locale a single byte-wise form.
#[derive(Clone, Debug)]
pub struct PathRegex {
    text: Regex,
    bytes: Option<Regex>,
}

impl PathRegex {
    pub fn is_match(&self, path: &[u8]) -> bool {
        match &self.bytes {
            Some(bytes) if std::str::from_utf8(path).is_err() => bytes.is_match(path),
            _ => self.text.is_match(path),
        }
    }
}

/// Compiles a find regex for whole-path matching in the environment's locale.
pub fn compile(pattern: &[u8], syntax: Syntax, case_insensitive: bool) -> Result<PathRegex, String> {
    compile_with_charset(pattern, syntax, case_insensitive, crate::locale::utf8_ctype())
}

/// Compiles for a UTF-8 (`utf8`) or single-byte character set, whatever the locale.
pub fn compile_with_charset(
    pattern: &[u8],
    syntax: Syntax,
    case_insensitive: bool,
    utf8: bool,
) -> Result<PathRegex, String> {
    let units = units(pattern, utf8);
    let build = |lenient: bool| -> Result<Regex, String> {
        let translated = Translator::new(&units, syntax, Charset { utf8, lenient }).translate()?;
        RegexBuilder::new(&format!(r"\A(?:{translated})\z"))
            .case_insensitive(case_insensitive)
            .unicode(utf8)
            .size_limit(64 << 20)
            .build()
            .map_err(|e| e.to_string())
    };
    Ok(PathRegex { text: build(false)?, bytes: if utf8 { Some(build(true)?) } else { None } })
}

/// One character of the pattern: a Unicode scalar, or a byte that is not (part of) one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Char(char),
    Byte(u8),
}

impl Unit {
    fn is(self, c: char) -> bool {
        self == Unit::Char(c)
    }
}

fn units(pattern: &[u8], utf8: bool) -> Vec<Unit> {
    if !utf8 {
        return pattern
            .iter()
            .map(|&b| if b.is_ascii() { Unit::Char(char::from(b)) } else { Unit::Byte(b) })
            .collect();
    }
    let mut out = Vec::with_capacity(pattern.len());
    for chunk in pattern.utf8_chunks() {
        out.extend(chunk.valid().chars().map(Unit::Char));
        out.extend(chunk.invalid().iter().map(|&b| Unit::Byte(b)));
    }
    out
}

#[derive(Clone, Copy)]
struct Charset {
    utf8: bool,
    /// In a UTF-8 locale: the form for paths that are not UTF-8, where any byte can be a character.
    lenient: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Anchor {
    LineFirst,
    LineLast,
    WordFirst,
    WordLast,
    WordDelim,
    NotWordDelim,
    BufFirst,
    BufLast,
}

/// glibc's tokens (`peek_token`); `Char` carries the character an operator stands for when the
/// parser decides to take it literally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Char(Unit),
    Alt,
    Star,
    Plus,
    Question,
    OpenInterval,
    CloseInterval,
    OpenGroup,
    CloseGroup,
    OpenBracket,
    Period,
    Anchor(Anchor),
    Word(bool),
    Space(bool),
    BackRef,
    TrailingBackslash,
    End,
}

const BAD_REPEAT: &str = "Invalid preceding regular expression";
const BAD_INTERVAL: &str = "Invalid content of \\{\\}";
const UNMATCHED_BRACKET: &str = "Unmatched [, [^, [:, [., or [=";

struct Translator<'a> {
    units: &'a [Unit],
    syntax: Syntax,
    charset: Charset,
    pos: usize,
    token: Token,
    /// The character of the current token, for operators read as literals.
    token_char: Unit,
}

impl<'a> Translator<'a> {
    fn new(units: &'a [Unit], syntax: Syntax, charset: Charset) -> Self {
        Translator { units, syntax, charset, pos: 0, token: Token::End, token_char: Unit::Char('\0') }
    }

    fn translate(mut self) -> Result<String, String> {
        self.fetch(CARET_ANCHORS_HERE);
        self.reg_exp(0)
    }

    fn fetch(&mut self, extra: u32) {
        let (token, unit, len) = self.peek(self.pos, self.syntax.0 | extra);
        self.token = token;
        self.token_char = unit;
        self.pos += len;
    }

    /// glibc's `peek_token`: the token at `pos`, the character it was written with, its length.
    fn peek(&self, pos: usize, syntax: u32) -> (Token, Unit, usize) {
        let s = Syntax(syntax);
        let Some(&unit) = self.units.get(pos) else { return (Token::End, Unit::Char('\0'), 0) };
        if unit.is('\\') {
            let Some(&next) = self.units.get(pos + 1) else {
                return (Token::TrailingBackslash, unit, 1);
            };
            let gnu = !s.has(NO_GNU_OPS);
            let token = match next {
                Unit::Char('|') if !s.has(LIMITED_OPS | NO_BK_VBAR) => Token::Alt,
                Unit::Char('1'..='9') if !s.has(NO_BK_REFS) => Token::BackRef,
                Unit::Char('<') if gnu => Token::Anchor(Anchor::WordFirst),
                Unit::Char('>') if gnu => Token::Anchor(Anchor::WordLast),
                Unit::Char('b') if gnu => Token::Anchor(Anchor::WordDelim),
                Unit::Char('B') if gnu => Token::Anchor(Anchor::NotWordDelim),
                Unit::Char('`') if gnu => Token::Anchor(Anchor::BufFirst),
                Unit::Char('\'') if gnu => Token::Anchor(Anchor::BufLast),
                Unit::Char('w') if gnu => Token::Word(true),
                Unit::Char('W') if gnu => Token::Word(false),
                Unit::Char('s') if gnu => Token::Space(true),
                Unit::Char('S') if gnu => Token::Space(false),
                Unit::Char('(') if !s.has(NO_BK_PARENS) => Token::OpenGroup,
                Unit::Char(')') if !s.has(NO_BK_PARENS) => Token::CloseGroup,
                Unit::Char('+') if !s.has(LIMITED_OPS) && s.has(BK_PLUS_QM) => Token::Plus,
                Unit::Char('?') if !s.has(LIMITED_OPS) && s.has(BK_PLUS_QM) => Token::Question,
                Unit::Char('{') if s.has(INTERVALS) && !s.has(NO_BK_BRACES) => Token::OpenInterval,
                Unit::Char('}') if s.has(INTERVALS) && !s.has(NO_BK_BRACES) => Token::CloseInterval,
                _ => Token::Char(next),
            };
            return (token, next, 2);
        }
        let token = match unit {
            Unit::Char('\n') if s.has(NEWLINE_ALT) => Token::Alt,
            Unit::Char('|') if !s.has(LIMITED_OPS) && s.has(NO_BK_VBAR) => Token::Alt,
            Unit::Char('*') => Token::Star,
            Unit::Char('+') if !s.has(LIMITED_OPS | BK_PLUS_QM) => Token::Plus,
            Unit::Char('?') if !s.has(LIMITED_OPS | BK_PLUS_QM) => Token::Question,
            Unit::Char('{') if s.has(INTERVALS) && s.has(NO_BK_BRACES) => Token::OpenInterval,
            Unit::Char('}') if s.has(INTERVALS) && s.has(NO_BK_BRACES) => Token::CloseInterval,
            Unit::Char('(') if s.has(NO_BK_PARENS) => Token::OpenGroup,
            Unit::Char(')') if s.has(NO_BK_PARENS) => Token::CloseGroup,
            Unit::Char('[') => Token::OpenBracket,
            Unit::Char('.') => Token::Period,
            Unit::Char('^') => {
                let after_newline_alt = s.has(NEWLINE_ALT) && pos > 0 && self.units[pos - 1].is('\n');
                if s.has(CONTEXT_INDEP_ANCHORS | CARET_ANCHORS_HERE) || pos == 0 || after_newline_alt {
                    Token::Anchor(Anchor::LineFirst)
                } else {
                    Token::Char(unit)
                }
            }
            Unit::Char('$') => {
                let at_end = pos + 1 == self.units.len();
                let before_close =
                    || matches!(self.peek(pos + 1, self.syntax.0).0, Token::Alt | Token::CloseGroup);
                if s.has(CONTEXT_INDEP_ANCHORS) || at_end || before_close() {
                    Token::Anchor(Anchor::LineLast)
                } else {
                    Token::Char(unit)
                }
            }
            _ => Token::Char(unit),
        };
        (token, unit, 1)
    }

    /// `branch | branch | …` up to the end or, nested, the closing parenthesis.
    fn reg_exp(&mut self, nest: u32) -> Result<String, String> {
        let mut branches = vec![self.branch(nest)?];
        while self.token == Token::Alt {
            self.fetch(CARET_ANCHORS_HERE);
            branches.push(if self.ends_branch(nest) { String::new() } else { self.branch(nest)? });
        }
        Ok(if branches.len() == 1 { branches.remove(0) } else { format!("(?:{})", branches.join("|")) })
    }

    fn branch(&mut self, nest: u32) -> Result<String, String> {
        let mut out = self.expression(nest)?.unwrap_or_default();
        while !self.ends_branch(nest) {
            out.push_str(&self.expression(nest)?.unwrap_or_default());
        }
        Ok(out)
    }

    /// `|`, the end, or (nested) the closing parenthesis.
    fn ends_branch(&self, nest: u32) -> bool {
        matches!(self.token, Token::Alt | Token::End) || (nest > 0 && self.token == Token::CloseGroup)
    }

    /// One atom and the repetitions that follow it; `None` where there is nothing to match.
    fn expression(&mut self, nest: u32) -> Result<Option<String>, String> {
        let atom = match self.token {
            Token::Char(unit) => self.literal(unit),
            Token::OpenGroup => self.group(nest + 1)?,
            Token::OpenBracket => self.bracket()?,
            Token::BackRef => {
                return Err("back-references (\\1 … \\9) are not supported by canopy find".into());
            }
            Token::OpenInterval | Token::Star | Token::Plus | Token::Question => {
                if self.token == Token::OpenInterval && self.syntax.has(CONTEXT_INVALID_DUP) {
                    return Err(BAD_REPEAT.into());
                }
                if self.syntax.has(CONTEXT_INVALID_OPS) {
                    return Err(BAD_REPEAT.into());
                }
                if self.syntax.has(CONTEXT_INDEP_OPS) {
                    // A leading operator applies to nothing and is dropped.
                    self.fetch(0);
                    return self.expression(nest);
                }
                self.literal(self.token_char)
            }
            Token::CloseGroup => {
                if !self.syntax.has(UNMATCHED_RIGHT_PAREN_ORD) {
                    return Err("Unmatched ) or \\)".into());
                }
                self.literal(self.token_char)
            }
            Token::CloseInterval => self.literal(self.token_char),
            Token::Anchor(anchor) => {
                // Anchors take no repetition: `^*` is an anchor and a literal star.
                self.fetch(0);
                return Ok(Some(anchor_regex(anchor).to_string()));
            }
            Token::Period => self.any(),
            Token::Word(yes) => match (yes, self.charset.utf8) {
                (true, true) => r"\w".to_string(),
                (false, true) => r"\W".to_string(),
                (true, false) => r"(?-u:\w)".to_string(),
                (false, false) => r"(?-u:\W)".to_string(),
            },
            Token::Space(yes) => match (yes, self.charset.utf8) {
                (true, true) => r"\s".to_string(),
                (false, true) => r"\S".to_string(),
                (true, false) => r"(?-u:\s)".to_string(),
                (false, false) => r"(?-u:\S)".to_string(),
            },
            Token::Alt | Token::End => return Ok(None),
            Token::TrailingBackslash => return Err("Trailing backslash".into()),
        };
        self.fetch(0);
        let mut atom = atom;
        while matches!(self.token, Token::Star | Token::Plus | Token::Question | Token::OpenInterval) {
            match self.repetition()? {
                Some(quantifier) => atom = format!("(?:{atom}){quantifier}"),
                None => break, // an interval read literally: the `{` is the next atom
            }
            if self.syntax.has(CONTEXT_INVALID_DUP) && matches!(self.token, Token::Star | Token::OpenInterval)
            {
                return Err(BAD_REPEAT.into());
            }
        }
        Ok(Some(atom))
    }

    /// The quantifier of the repetition operator at the current token, or `None` when an invalid
    /// interval is taken literally (`RE_INVALID_INTERVAL_ORD`).
    fn repetition(&mut self) -> Result<Option<String>, String> {
        let quantifier = match self.token {
            Token::Star => "*".to_string(),
            Token::Plus => "+".to_string(),
            Token::Question => "?".to_string(),
            _ => {
                let (after_brace, brace) = (self.pos, self.token_char);
                let mut start = self.number();
                if start == -1 {
                    if self.token_char.is(',') {
                        start = 0; // `{,m}` is `{0,m}`
                    } else {
                        return Err(BAD_INTERVAL.into());
                    }
                }
                let end = if start == -2 {
                    -2
                } else if self.token == Token::CloseInterval {
                    start
                } else if self.token == Token::Char(Unit::Char(',')) {
                    self.number()
                } else {
                    -2
                };
                if start == -2 || end == -2 {
                    if !self.syntax.has(INVALID_INTERVAL_ORD) {
                        return Err(
                            if self.token == Token::End { "Unmatched \\{" } else { BAD_INTERVAL }.into()
                        );
                    }
                    self.pos = after_brace;
                    self.token = Token::Char(brace);
                    self.token_char = brace;
                    return Ok(None);
                }
                if (end != -1 && start > end) || self.token != Token::CloseInterval {
                    return Err(BAD_INTERVAL.into());
                }
                if (if end == -1 { start } else { end }) > DUP_MAX {
                    return Err("Regular expression too big".into());
                }
                if end == -1 { format!("{{{start},}}") } else { format!("{{{start},{end}}}") }
            }
        };
        self.fetch(0);
        Ok(Some(quantifier))
    }

    /// glibc's `fetch_number`: digits up to `,` or the closing brace; -1 if none, -2 if invalid.
    fn number(&mut self) -> i32 {
        let mut n: i32 = -1;
        loop {
            self.fetch(0);
            if self.token == Token::End {
                return -2;
            }
            if self.token == Token::CloseInterval || self.token_char.is(',') {
                return n;
            }
            n = match self.token {
                Token::Char(Unit::Char(c @ '0'..='9')) if n != -2 => {
                    let digit = c as i32 - '0' as i32;
                    if n == -1 { digit } else { (n * 10 + digit).min(DUP_MAX + 1) }
                }
                _ => -2,
            };
        }
    }

    fn group(&mut self, nest: u32) -> Result<String, String> {
        self.fetch(CARET_ANCHORS_HERE);
        let inner = if self.token == Token::CloseGroup { String::new() } else { self.reg_exp(nest)? };
        if self.token != Token::CloseGroup {
            return Err("Unmatched ( or \\(".into());
        }
        Ok(format!("(?:{inner})"))
    }

    fn literal(&self, unit: Unit) -> String {
        match unit {
            Unit::Char(c) => regex::escape(c.encode_utf8(&mut [0; 4])),
            Unit::Byte(b) => format!(r"(?-u:\x{b:02X})"),
        }
    }

    fn any(&self) -> String {
        let newline = self.syntax.has(DOT_NEWLINE);
        match (self.charset.utf8, self.charset.lenient, newline) {
            (true, false, true) => r"(?s:.)".into(),
            (true, false, false) => r"[^\n]".into(),
            (true, true, true) => r"(?:(?s:.)|(?-u:[\x80-\xFF]))".into(),
            (true, true, false) => r"(?:[^\n]|(?-u:[\x80-\xFF]))".into(),
            (false, _, true) => r"(?s-u:.)".into(),
            (false, _, false) => r"(?-u:[^\n])".into(),
        }
    }

    /// A bracket expression, from after its `[` to the current token after its `]`.
    fn bracket(&mut self) -> Result<String, String> {
        let mut set = Set::default();
        let mut negate = false;
        if self.units.get(self.pos).is_some_and(|u| u.is('^')) {
            negate = true;
            self.pos += 1;
            if self.syntax.has(HAT_LISTS_NOT_NEWLINE) {
                set.add(Unit::Char('\n'), self.charset);
            }
        }
        let mut first = true;
        loop {
            let start = self.bracket_element(first)?;
            first = false;
            let is_range = matches!(start, Element::Unit(_))
                && self.units.get(self.pos).is_some_and(|u| u.is('-'))
                && match self.units.get(self.pos + 1) {
                    None => return Err(UNMATCHED_BRACKET.into()),
                    Some(u) => !u.is(']'),
                };
            if is_range {
                self.pos += 1;
                let end = self.bracket_element(true)?;
                let (Element::Unit(lo), Element::Unit(hi)) = (start, end) else {
                    return Err("Invalid range end".into());
                };
                set.range(lo, hi, self.syntax.has(NO_EMPTY_RANGES), self.charset)?;
            } else {
                match start {
                    Element::Unit(u) => set.add(u, self.charset),
                    Element::Class(name) => set.text.push_str(&class_regex(&name, self.charset.utf8)?),
                }
            }
            match self.units.get(self.pos) {
                None => return Err(UNMATCHED_BRACKET.into()),
                Some(u) if u.is(']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
        }
        Ok(set.regex(negate, self.charset))
    }

    /// One element of a bracket: a character (escaped with `\` in the awk syntaxes), `[.c.]`,
    /// `[=c=]` or `[:class:]`. The first element may be `]`; a `-` only first or last.
    fn bracket_element(&mut self, first: bool) -> Result<Element, String> {
        let Some(&unit) = self.units.get(self.pos) else { return Err(UNMATCHED_BRACKET.into()) };
        if unit.is('\\') && self.syntax.has(BACKSLASH_ESCAPE_IN_LISTS) && self.pos + 1 < self.units.len() {
            self.pos += 2;
            return Ok(Element::Unit(self.units[self.pos - 1]));
        }
        if unit.is('[') {
            let kind = self.units.get(self.pos + 1).copied();
            let delimiter = match kind {
                Some(Unit::Char(c @ ('.' | '='))) => Some(c),
                Some(Unit::Char(':')) if self.syntax.has(CHAR_CLASSES) => Some(':'),
                _ => None,
            };
            if let Some(delimiter) = delimiter {
                let name_start = self.pos + 2;
                let close = (name_start..self.units.len().saturating_sub(1))
                    .find(|&k| self.units[k].is(delimiter) && self.units[k + 1].is(']'))
                    .ok_or(UNMATCHED_BRACKET)?;
                let name = &self.units[name_start..close];
                self.pos = close + 2;
                return match (delimiter, name) {
                    (':', _) => Ok(Element::Class(name.iter().map(|u| unit_char(*u)).collect())),
                    (_, [one]) => Ok(Element::Unit(*one)),
                    _ => Err("Invalid collation character".into()),
                };
            }
        }
        if unit.is('-') && !first && !self.units.get(self.pos + 1).is_some_and(|u| u.is(']')) {
            return Err("Invalid range end".into());
        }
        self.pos += 1;
        Ok(Element::Unit(unit))
    }
}

fn unit_char(unit: Unit) -> char {
    match unit {
        Unit::Char(c) => c,
        Unit::Byte(b) => char::from(b),
    }
}

fn anchor_regex(anchor: Anchor) -> &'static str {
    match anchor {
        Anchor::LineFirst => "(?m:^)",
        Anchor::LineLast => "(?m:$)",
        Anchor::WordFirst => r"\b{start}",
        Anchor::WordLast => r"\b{end}",
        Anchor::WordDelim => r"\b",
        Anchor::NotWordDelim => r"\B",
        Anchor::BufFirst => r"\A",
        Anchor::BufLast => r"\z",
    }
}

enum Element {
    Unit(Unit),
    Class(String),
}

/// The members of a bracket expression as regex class text: characters (Unicode, or every byte in
/// the C locale) and, in a UTF-8 locale, bytes that are not part of a character.
#[derive(Default)]
struct Set {
    text: String,
    bytes: String,
}

impl Set {
    /// Whether `unit` goes with the bytes rather than the characters.
    fn is_stray_byte(unit: Unit, charset: Charset) -> bool {
        charset.utf8 && matches!(unit, Unit::Byte(_))
    }

    fn escaped(unit: Unit, charset: Charset) -> String {
        match unit {
            Unit::Char(c) if charset.utf8 => char_escape(c),
            Unit::Char(c) => byte_escape(c as u8),
            Unit::Byte(b) => byte_escape(b),
        }
    }

    fn add(&mut self, unit: Unit, charset: Charset) {
        let text = Self::escaped(unit, charset);
        if Self::is_stray_byte(unit, charset) {
            self.bytes.push_str(&text)
        } else {
            self.text.push_str(&text)
        }
    }

    fn range(&mut self, lo: Unit, hi: Unit, no_empty: bool, charset: Charset) -> Result<(), String> {
        let value = |u: Unit| match u {
            Unit::Char(c) => u32::from(c),
            Unit::Byte(b) => u32::from(b),
        };
        if Self::is_stray_byte(lo, charset) != Self::is_stray_byte(hi, charset) {
            return Err("Invalid range end".into());
        }
        if value(lo) > value(hi) {
            return if no_empty { Err("Invalid range end".into()) } else { Ok(()) };
        }
        let range = format!("{}-{}", Self::escaped(lo, charset), Self::escaped(hi, charset));
        if Self::is_stray_byte(lo, charset) {
            self.bytes.push_str(&range)
        } else {
            self.text.push_str(&range)
        }
        Ok(())
    }

    fn regex(&self, negate: bool, charset: Charset) -> String {
        let Set { text, bytes } = self;
        if !charset.utf8 {
            return match (negate, text.is_empty()) {
                (false, true) => r"(?-u:[a&&b])".into(),
                (true, true) => r"(?s-u:.)".into(),
                (false, false) => format!("(?-u:[{text}])"),
                (true, false) => format!("(?-u:[^{text}])"),
            };
        }
        let chars = match (negate, text.is_empty()) {
            (false, true) => None,
            (true, true) => Some(r"(?s:.)".to_string()),
            (false, false) => Some(format!("[{text}]")),
            (true, false) => Some(format!("[^{text}]")),
        };
        // Stray bytes can only be in paths that are not UTF-8, matched by the lenient form.
        let stray = match (charset.lenient, negate, bytes.is_empty()) {
            (false, _, _) | (true, false, true) => None,
            (true, false, false) => Some(format!("(?-u:[{bytes}])")),
            (true, true, true) => Some(r"(?-u:[\x80-\xFF])".to_string()),
            (true, true, false) => Some(format!(r"(?-u:[\x80-\xFF&&[^{bytes}]])")),
        };
        match (chars, stray) {
            (Some(c), Some(s)) => format!("(?:{c}|{s})"),
            (Some(c), None) => c,
            (None, Some(s)) => s,
            (None, None) => "[a&&b]".into(),
        }
    }
}

/// A character inside a Unicode regex class, escaped unless it is alphanumeric.
fn char_escape(c: char) -> String {
    if c.is_ascii_alphanumeric() { c.to_string() } else { format!(r"\x{{{:X}}}", u32::from(c)) }
}

/// A byte inside a byte-wise (`(?-u)`) regex class.
fn byte_escape(b: u8) -> String {
    if b.is_ascii_alphanumeric() { char::from(b).to_string() } else { format!(r"\x{b:02X}") }
}

/// `[:name:]` as class members: Unicode's categories in a UTF-8 locale, ASCII in the C locale.
fn class_regex(name: &str, utf8: bool) -> Result<String, String> {
    const NAMES: [&str; 12] = [
        "alpha", "upper", "lower", "digit", "xdigit", "space", "print", "punct", "graph", "cntrl", "blank",
        "alnum",
    ];
    if !NAMES.contains(&name) {
        return Err("Invalid character class name".into());
    }
    if !utf8 {
        return Ok(format!("[:{name}:]"));
    }
    Ok(match name {
        "alpha" => r"\p{Alphabetic}",
        "upper" => r"\p{Uppercase}",
        "lower" => r"\p{Lowercase}",
        "digit" => "0-9",
        "xdigit" => "0-9A-Fa-f",
        "space" => r"\s",
        "print" => r"\P{C}",
        "punct" => r"\p{P}\p{S}",
        "graph" => r"[\P{C}&&\S]",
        "cntrl" => r"\p{Cc}",
        "blank" => r"\t\p{Zs}",
        _ => r"\p{Alphabetic}0-9",
    }
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax(name: &str) -> Syntax {
        Syntax::from_name(name).unwrap()
    }

    fn m(p: &str, name: &str, s: &[u8]) -> bool {
        compile_with_charset(p.as_bytes(), syntax(name), false, true).unwrap().is_match(s)
    }

    fn err(p: &str, name: &str) -> String {
        compile_with_charset(p.as_bytes(), syntax(name), false, true).unwrap_err()
    }

    #[test]
    fn findutils_default() {
        let d = "findutils-default";
        assert!(m(".*/foo\\(bar\\|baz\\)", d, b"./x/foobaz"));
        assert!(!m("foo", d, b"./foo"), "anchored to the whole path");
        assert!(m(".*(x)", d, b"a(x)"), "parentheses are literal");
        assert!(m(".*a+", d, b"./aaa"));
        assert!(m(".*[0-9]", d, b"f7"));
        assert!(m(".*x{2}", d, b"ax{2}"), "no intervals");
        assert!(m("a.b", d, b"a\nb"), "dot matches newline");
        assert!(!m("a.b", "emacs", b"a\nb"), "but not in plain emacs syntax");
        assert!(m("a.b", d, b"a\xffb"), "dot matches a stray byte");
        assert!(m("a.b", d, "aéb".as_bytes()), "dot matches one character");
        assert!(!m("a..b", d, "aéb".as_bytes()), "and not one byte of it");
        assert!(m("*a", d, b"*a"), "a leading star is literal");
        assert!(m("a\\n", d, b"an"), "\\n is a plain n, as in glibc");
        assert!(m("[[:alpha:]]", d, b":]"), "no character classes: a bracket of [ : a l p h, then a ]");
    }

    #[test]
    fn anchors_in_context() {
        let d = "findutils-default";
        assert!(m("a^b", d, b"a^b"), "^ in the middle is literal in emacs syntax");
        assert!(m("a$b", d, b"a$b"));
        assert!(m("\\(^a\\)", d, b"a"));
        assert!(!m("a^b", "posix-extended", b"a^b"), "always an anchor in ERE");
        assert!(m(".*\\<ab\\>", d, b"x ab"));
        assert!(!m(".*\\<ab\\>", d, b"xab"));
        assert!(m("x\\'", d, b"x"));
    }

    #[test]
    fn posix_flavours() {
        assert!(m(".*\\.(c|h)", "posix-extended", b"x.h"));
        assert!(m("a{2}", "posix-extended", b"aa"));
        assert!(m("a\\{2\\}", "posix-basic", b"aa"));
        assert!(m("a+", "posix-basic", b"a+"), "+ is literal in BRE");
        assert!(m("[[:digit:]]\\+", "posix-basic", b"123"));
        assert!(m("[\\]", "posix-extended", b"\\"), "backslash literal in brackets");
        assert!(m("[]a]", "posix-extended", b"]"));
        assert!(m("\\./\\((\\)", "posix-minimal-basic", b"./("), "groups are \\( \\), ( is literal");
        assert!(m("a\\+", "posix-minimal-basic", b"a+"), "no \\+ operator");
        assert!(m("a**", "posix-extended", b"aaa"), "stacked repetition");
    }

    #[test]
    fn awk_and_egrep() {
        assert!(m(".*/[\\[\\*]/.*", "awk", b"x/*/m"));
        assert!(!m(".*/[\\[\\*]/.*", "awk", b"x/\\/i"), "backslash escapes inside brackets in awk");
        assert!(!m(".*/[\\[\\*]/.*", "posix-awk", b"x/\\/i"));
        assert!(m(".*/[\\[\\*]/.*", "posix-extended", b"x/\\/i"), "but not in plain ERE");
        assert!(m("*.*/{l", "egrep", b"x/{l"), "egrep drops a leading star, takes a bad interval literally");
        assert!(m(".*/[\\[\\*]/(\\<.\\>)", "gnu-awk", b"x/*/m"));
        assert!(m("a\\1", "awk", b"a1"), "no back-references in awk: a plain 1");
    }

    #[test]
    fn errors_like_glibc() {
        assert_eq!(err("*a", "posix-extended"), "Invalid preceding regular expression");
        assert_eq!(err("(a", "posix-extended"), "Unmatched ( or \\(");
        assert_eq!(err("\\(a", "posix-basic"), "Unmatched ( or \\(");
        assert_eq!(err("[[:foo:]]", "posix-extended"), "Invalid character class name");
        assert_eq!(err("[z-a]", "posix-extended"), "Invalid range end");
        assert_eq!(err("a{2,1}", "posix-extended"), "Invalid content of \\{\\}");
        assert_eq!(err("\\", "findutils-default"), "Trailing backslash");
        assert_eq!(err("[abc", "findutils-default"), "Unmatched [, [^, [:, [., or [=");
        assert!(err("\\(a\\)\\1", "findutils-default").contains("not supported"));
        assert!(!m("[z-a]x", "emacs", b"x"), "an empty range matches nothing in emacs syntax");
    }

    #[test]
    fn c_locale_is_bytes() {
        let c = |p: &str, s: &[u8]| {
            compile_with_charset(p.as_bytes(), Syntax::FINDUTILS_DEFAULT, false, false).unwrap().is_match(s)
        };
        assert!(c("a..b", "aéb".as_bytes()), "é is two characters in the C locale");
        assert!(!c("a.b", "aéb".as_bytes()));
        let ci = compile_with_charset("É".as_bytes(), Syntax::FINDUTILS_DEFAULT, true, false).unwrap();
        assert!(!ci.is_match("é".as_bytes()), "-iregex folds ASCII only in the C locale");
    }
}
