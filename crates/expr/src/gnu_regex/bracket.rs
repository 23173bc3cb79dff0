//! Bracket expressions (`[a-z]`, `[^]x]`, `[[:alpha:]]`, `[.c.]`, `[=c=]`) as glibc reads them, written
//! as `regex` classes: Unicode's categories in a UTF-8 locale, ASCII in the C locale.

use super::syntax::*;
use super::translate::Translator;
use super::{Charset, Unit};

const UNMATCHED_BRACKET: &str = "Unmatched [, [^, [:, [., or [=";

impl Translator<'_> {
    /// A bracket expression, from after its `[` to the current token after its `]`.
    pub(super) fn bracket(&mut self) -> Result<String, String> {
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
