//! glibc's regex grammar (`peek_token`, `parse_reg_exp` … in regcomp.c), read token by token
//! under a syntax's bits and written out as `regex` crate syntax.

use super::syntax::*;
use super::{Charset, Unit};

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

pub(super) struct Translator<'a> {
    pub(super) units: &'a [Unit],
    pub(super) syntax: Syntax,
    pub(super) charset: Charset,
    pub(super) pos: usize,
    token: Token,
    /// The character of the current token, for operators read as literals.
    token_char: Unit,
}

impl<'a> Translator<'a> {
    pub(super) fn new(units: &'a [Unit], syntax: Syntax, charset: Charset) -> Self {
        Translator { units, syntax, charset, pos: 0, token: Token::End, token_char: Unit::Char('\0') }
    }

    pub(super) fn translate(mut self) -> Result<String, String> {
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
