//! `--color`: GNU grep's SGR sequences, its defaults (`ms=01;31:mc=01;31:sl=:cx=:fn=35:ln=32:
//! bn=32:se=36`) and the `GREP_COLORS` variable that changes them (`mt=` sets both match colors,
//! `ne` drops the erase-to-end-of-line, `rv` swaps `sl` and `cx` under `-v`).

use crate::common::users_terminal;

/// When to color.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    #[value(alias = "yes", alias = "force")]
    Always,
    #[value(alias = "no", alias = "none")]
    Never,
    #[value(alias = "tty", alias = "if-tty")]
    Auto,
}

impl When {
    /// Whether to color stdout: `auto` on the user's terminal (not `TERM=dumb`, so never under a
    /// launcher) unless `NO_COLOR` is set.
    pub fn enabled(self) -> bool {
        match self {
            When::Always => true,
            When::Never => false,
            When::Auto => {
                users_terminal(&std::io::stdout())
                    && std::env::var_os("TERM").is_some_and(|t| t != "dumb")
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// The capabilities in effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Colors {
    /// Matched text in a selected line.
    pub selected_match: String,
    /// Matched text in a context line.
    pub context_match: String,
    /// Whole selected lines, whole context lines.
    pub selected_line: String,
    pub context_line: String,
    pub file_name: String,
    pub line_number: String,
    pub separator: String,
    /// Swap `selected_line` and `context_line` with `-v`.
    reverse: bool,
    /// Leave out `\33[K` (erase to the end of the line).
    no_erase: bool,
}

impl Default for Colors {
    fn default() -> Self {
        Colors {
            selected_match: "01;31".into(),
            context_match: "01;31".into(),
            selected_line: String::new(),
            context_line: String::new(),
            file_name: "35".into(),
            line_number: "32".into(),
            separator: "36".into(),
            reverse: false,
            no_erase: false,
        }
    }
}

impl Colors {
    /// The defaults changed by `GREP_COLORS`.
    pub fn from_env(invert: bool) -> Colors {
        let mut colors = Colors::default();
        if let Ok(spec) = std::env::var("GREP_COLORS") {
            colors.apply(&spec);
        }
        if colors.reverse && invert {
            std::mem::swap(&mut colors.selected_line, &mut colors.context_line);
        }
        colors
    }

    /// Applies a `GREP_COLORS` value; unknown names are ignored, as grep ignores them.
    fn apply(&mut self, spec: &str) {
        for item in spec.split(':') {
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (item, None),
            };
            let valid = value.is_none_or(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b';'));
            if !valid {
                // GNU stops at the first malformed entry.
                return;
            }
            let value = value.map(str::to_string);
            match (name, value) {
                ("mt", Some(v)) => {
                    self.selected_match = v.clone();
                    self.context_match = v;
                }
                ("ms", Some(v)) => self.selected_match = v,
                ("mc", Some(v)) => self.context_match = v,
                ("sl", Some(v)) => self.selected_line = v,
                ("cx", Some(v)) => self.context_line = v,
                ("fn", Some(v)) => self.file_name = v,
                ("ln", Some(v)) => self.line_number = v,
                ("se", Some(v)) => self.separator = v,
                ("rv", None) => self.reverse = true,
                ("ne", None) => self.no_erase = true,
                _ => {}
            }
        }
    }

    /// Writes `text` in `capability` (as it is when the capability is empty).
    pub fn paint(&self, out: &mut Vec<u8>, capability: &str, text: &[u8]) {
        if capability.is_empty() {
            out.extend_from_slice(text);
            return;
        }
        self.start(out, capability);
        out.extend_from_slice(text);
        self.end(out);
    }

    pub fn start(&self, out: &mut Vec<u8>, capability: &str) {
        out.extend_from_slice(b"\x1b[");
        out.extend_from_slice(capability.as_bytes());
        out.push(b'm');
        if !self.no_erase {
            out.extend_from_slice(b"\x1b[K");
        }
    }

    pub fn end(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\x1b[m");
        if !self.no_erase {
            out.extend_from_slice(b"\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_colors_changes_the_defaults() {
        let mut colors = Colors::default();
        colors.apply("mt=01;32:fn=34:ne:rv:xx=1");
        assert_eq!((colors.selected_match.as_str(), colors.context_match.as_str()), ("01;32", "01;32"));
        assert_eq!(colors.file_name, "34");
        let mut out = Vec::new();
        colors.paint(&mut out, &colors.file_name, b"f");
        assert_eq!(out, b"\x1b[34mf\x1b[m", "ne leaves out the erase");
        let mut bad = Colors::default();
        bad.apply("fn=x:ln=1");
        assert_eq!((bad.file_name.as_str(), bad.line_number.as_str()), ("35", "32"), "stops at a bad entry");
        let mut out = Vec::new();
        Colors::default().paint(&mut out, "01;31", b"m");
        assert_eq!(out, b"\x1b[01;31m\x1b[Km\x1b[m\x1b[K");
    }
}
