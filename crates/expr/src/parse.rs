//! GNU find's command line: `[-H|-L|-P] [PATH...] [EXPRESSION]`, parsed into a [`Program`].

mod primaries;

use crate::args::{invalid_argument, missing_argument};
use crate::ast::{Expr, Test};
use crate::gnu_regex::Syntax;
use crate::optimize;
use crate::printf::Format;
use crate::program::{Action, Exec, GlobalOptions, Output, Program, StartList};
use crate::time::DayStart;
use canopy_engine::sys::stat_path;
use canopy_engine::{Follow, Timestamp, errno_message};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// A usage error, worded like GNU find's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses find's arguments (everything after `find`), as bytes. Warnings (like GNU's for unknown
/// `-printf` directives) come back alongside the program.
pub fn parse(args: &[Vec<u8>], start: Timestamp) -> Result<(Program, Vec<String>), ParseError> {
    parse_as(args, start, Purpose::Find)
}

/// Parses a filter for a tool that acts on the entries itself (`canopy rm DIR -name '*.tmp'`): the
/// same language without actions or `-quit`; no implicit `-print` and no default starting point.
pub fn parse_filter(args: &[Vec<u8>], start: Timestamp) -> Result<(Program, Vec<String>), ParseError> {
    parse_as(args, start, Purpose::Filter)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Find,
    Filter,
}

fn parse_as(
    args: &[Vec<u8>],
    start: Timestamp,
    purpose: Purpose,
) -> Result<(Program, Vec<String>), ParseError> {
    let mut p = Parser {
        args,
        pos: 0,
        actions: Vec::new(),
        output_files: Vec::new(),
        output_ids: Vec::new(),
        options: GlobalOptions::default(),
        explicit_depth: false,
        follow: Follow::Never,
        day: DayStart::new(start),
        start,
        start_list: None,
        regex_syntax: Syntax::FINDUTILS_DEFAULT,
        warnings: Vec::new(),
    };
    p.leading_options();
    let roots = p.roots();
    let expr = if p.pos < args.len() { Some(p.list()?) } else { None };
    if let Some(extra) = args.get(p.pos) {
        return Err(if extra == b")" {
            ParseError("you have too many ')'".into())
        } else {
            ParseError(format!("paths must precede expression: `{}'", lossy(extra)))
        });
    }
    if let Some(list) = &p.start_list {
        if let Some(root) = roots.first() {
            return Err(ParseError(format!(
                "extra operand '{}': file operands cannot be combined with -files0-from",
                lossy(root)
            )));
        }
        let prompts = p.actions.iter().any(|a| matches!(a, Action::Exec(e) if e.confirm));
        if *list == StartList::Stdin && prompts {
            return Err(ParseError(
                "option -files0-from reading from standard input cannot be combined with -ok, -okdir".into(),
            ));
        }
    }
    let has_output_action = expr.as_ref().is_some_and(|e| e.contains(&|e| matches!(e, Expr::Action(_))));
    if purpose == Purpose::Filter
        && (has_output_action || expr.as_ref().is_some_and(|e| e.contains(&|e| matches!(e, Expr::Quit))))
    {
        return Err(ParseError(
            "a filter takes tests and options only, not actions (-print, -exec, -delete, -quit…)".into(),
        ));
    }
    let mut expr = expr.unwrap_or(Expr::Test(Test::True));
    if !has_output_action && purpose == Purpose::Find {
        p.actions.push(Action::Print { terminator: b'\n', output: Output::Stdout });
        expr = Expr::And(vec![expr, Expr::Action(p.actions.len() - 1)]);
    }
    if p.actions.iter().any(|a| matches!(a, Action::Delete)) {
        if !p.explicit_depth && expr.contains(&|e| matches!(e, Expr::Prune)) {
            return Err(ParseError(
                "The -delete action automatically turns on -depth, but -prune does nothing when -depth is in effect. \
                 If you want to carry on anyway, just explicitly use the -depth option."
                    .into(),
            ));
        }
        p.options.depth_first = true;
    }
    let default_root = roots.is_empty() && p.start_list.is_none() && purpose == Purpose::Find;
    let program = Program {
        follow: p.follow,
        roots: if default_root { vec![b".".to_vec()] } else { roots },
        start_list: p.start_list,
        expr: optimize::reorder(expr),
        actions: p.actions,
        output_files: p.output_files,
        options: p.options,
        start,
    };
    Ok((program, p.warnings))
}

struct Parser<'a> {
    args: &'a [Vec<u8>],
    pos: usize,
    actions: Vec<Action>,
    output_files: Vec<PathBuf>,
    /// The (device, inode) of each output file that existed, to share one writer per file.
    output_ids: Vec<Option<(u64, u64)>>,
    options: GlobalOptions,
    explicit_depth: bool,
    follow: Follow,
    day: DayStart,
    /// When find started: `-newermt 'yesterday'` counts from here.
    start: Timestamp,
    start_list: Option<StartList>,
    regex_syntax: Syntax,
    warnings: Vec<String>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// GNU's rule for where the paths end: `-x`, `(` and `!` start the expression; a lone `-`, `)` or
/// `,`, and anything else (`(-`, `!x`), is a path.
fn looks_like_expression(arg: &[u8]) -> bool {
    matches!(arg, [b'-', _, ..] | [b'(' | b'!'])
}

impl Parser<'_> {
    fn peek(&self) -> Option<&[u8]> {
        self.args.get(self.pos).map(Vec::as_slice)
    }

    fn leading_options(&mut self) {
        while let Some(arg) = self.peek() {
            match arg {
                b"-H" => self.follow = Follow::Roots,
                b"-L" => self.follow = Follow::Always,
                b"-P" => self.follow = Follow::Never,
                b"-D" => self.pos += 1, // debug options: accepted, ignored
                b"--" => {
                    self.pos += 1;
                    return;
                }
                a if a.starts_with(b"-O") && a[2..].iter().all(u8::is_ascii_digit) => {}
                _ => return,
            }
            self.pos += 1;
        }
    }

    fn roots(&mut self) -> Vec<Vec<u8>> {
        let mut roots = Vec::new();
        while let Some(arg) = self.peek() {
            if looks_like_expression(arg) {
                break;
            }
            roots.push(arg.to_vec());
            self.pos += 1;
        }
        roots
    }

    fn list(&mut self) -> Result<Expr, ParseError> {
        let mut items = vec![self.or()?];
        while self.peek() == Some(b",") {
            self.pos += 1;
            if self.peek().is_none_or(|t| t == b")") {
                return Err(ParseError("expected an expression after ','".into()));
            }
            items.push(self.or()?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap_or(Expr::Test(Test::True)) } else { Expr::List(items) })
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut items = vec![self.and()?];
        while matches!(self.peek(), Some(b"-o" | b"-or")) {
            let op = lossy(self.peek().unwrap_or_default());
            self.pos += 1;
            if self.peek().is_none_or(|t| matches!(t, b")" | b"," | b"-o" | b"-or" | b"-a" | b"-and")) {
                return Err(ParseError(format!("expected an expression after '{op}'")));
            }
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap_or(Expr::Test(Test::True)) } else { Expr::Or(items) })
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut items = vec![self.unary()?];
        loop {
            match self.peek() {
                Some(b"-a" | b"-and") => {
                    let op = lossy(self.peek().unwrap_or_default());
                    self.pos += 1;
                    if self.peek().is_none_or(|t| matches!(t, b")" | b"," | b"-o" | b"-or" | b"-a" | b"-and"))
                    {
                        return Err(ParseError(format!("expected an expression after '{op}'")));
                    }
                    items.push(self.unary()?);
                }
                Some(b")" | b"," | b"-o" | b"-or") | None => break,
                Some(_) => items.push(self.unary()?),
            }
        }
        Ok(if items.len() == 1 { items.pop().unwrap_or(Expr::Test(Test::True)) } else { Expr::And(items) })
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some(b"!" | b"-not") => {
                let op = lossy(self.peek().unwrap_or_default());
                self.pos += 1;
                if self.peek().is_none_or(|t| matches!(t, b")" | b"," | b"-o" | b"-or" | b"-a" | b"-and")) {
                    return Err(ParseError(format!("expected an expression after '{op}'")));
                }
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(b"(") => {
                self.pos += 1;
                if self.peek() == Some(b")") {
                    return Err(ParseError("invalid expression; empty parentheses are not allowed.".into()));
                }
                let inner = self.list()?;
                if self.peek() != Some(b")") {
                    return Err(ParseError(
                        "invalid expression; I was expecting to find a ')' somewhere but did not see one."
                            .into(),
                    ));
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(b"-o" | b"-or" | b"-a" | b"-and" | b",") => Err(ParseError(format!(
                "invalid expression; you have used a binary operator '{}' with nothing before it.",
                lossy(self.peek().unwrap_or_default())
            ))),
            Some(b")") => Err(ParseError("you have too many ')'".into())),
            Some(_) => self.primary(),
            None => Err(ParseError("expected an expression".into())),
        }
    }

    /// The argument of the primary just consumed.
    fn argument(&mut self, primary: &str) -> Result<Vec<u8>, ParseError> {
        let arg = self.peek().ok_or_else(|| missing_argument(primary))?.to_vec();
        self.pos += 1;
        Ok(arg)
    }

    fn text_argument(&mut self, primary: &str) -> Result<String, ParseError> {
        let arg = self.argument(primary)?;
        String::from_utf8(arg).map_err(|e| invalid_argument(&lossy(e.as_bytes()), primary))
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let token = self.peek().unwrap_or_default().to_vec();
        self.pos += 1;
        let name = lossy(&token);
        if let Some(parse) = primaries::lookup(&name) {
            return parse(self, &name);
        }
        if token.first() != Some(&b'-') {
            return Err(ParseError(format!("paths must precede expression: `{name}'")));
        }
        // GNU find's message first, as scripts may read it; then the hint.
        let hint = primaries::suggestion(&name).map(|known| format!("\nhint: did you mean `{known}'?"));
        Err(ParseError(format!("unknown predicate `{name}'{}", hint.unwrap_or_default())))
    }

    fn action(&mut self, action: Action) -> Expr {
        self.actions.push(action);
        Expr::Action(self.actions.len() - 1)
    }

    /// The output of `-fprint FILE` & co.: `/dev/stdout` is standard output itself, as in GNU
    /// find, and names of one file (the same path, a hard or symbolic link) share one writer, so
    /// it is created and truncated once.
    fn output_file(&mut self, primary: &str) -> Result<Output, ParseError> {
        let path = PathBuf::from(std::ffi::OsString::from_vec(self.argument(primary)?));
        if path == std::path::Path::new("/dev/stdout") {
            return Ok(Output::Stdout);
        }
        let id = stat_path(path.as_os_str().as_bytes(), true).ok().map(|m| (m.dev, m.ino));
        let known = self
            .output_files
            .iter()
            .zip(&self.output_ids)
            .position(|(p, known_id)| *p == path || (id.is_some() && *known_id == id));
        Ok(Output::File(known.unwrap_or_else(|| {
            self.output_files.push(path);
            self.output_ids.push(id);
            self.output_files.len() - 1
        })))
    }

    fn format(&mut self, primary: &str) -> Result<Format, ParseError> {
        let text = self.argument(primary)?;
        let (format, warnings) = Format::parse(&text);
        self.warnings.extend(warnings);
        Ok(format)
    }

    /// `-exec COMMAND ;` or `-exec COMMAND {} +` (the `+` form only when `{}` ends the command).
    fn exec(&mut self, primary: &str) -> Result<Exec, ParseError> {
        let confirm = primary.starts_with("-ok");
        let mut argv: Vec<Vec<u8>> = Vec::new();
        loop {
            let Some(arg) = self.peek().map(<[u8]>::to_vec) else {
                return Err(missing_argument(primary));
            };
            self.pos += 1;
            if arg == b";" {
                break;
            }
            if arg == b"+" && argv.last().is_some_and(|a| a == b"{}") && !confirm {
                if argv[..argv.len() - 1].iter().any(|a| a == b"{}") {
                    return Err(ParseError(format!(
                        "Only one instance of {{}} is supported with {primary} ... +"
                    )));
                }
                if argv.len() == 1 {
                    return Err(missing_argument(primary));
                }
                return Ok(Exec { argv, batch: true, in_dir: primary.ends_with("dir"), confirm });
            }
            argv.push(arg);
        }
        if argv.is_empty() {
            return Err(missing_argument(primary));
        }
        Ok(Exec { argv, batch: false, in_dir: primary.ends_with("dir"), confirm })
    }

    /// Stats a reference file (`-newer`, `-samefile`), following links under -H and -L.
    fn stat_reference(&self, file: &[u8]) -> Result<canopy_engine::Metadata, ParseError> {
        stat_path(file, self.follow != Follow::Never)
            .map_err(|e| ParseError(format!("'{}': {}", lossy(file), errno_message(e))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<Vec<u8>> {
        s.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    fn p(s: &[&str]) -> Result<Program, ParseError> {
        parse(&args(s), Timestamp { sec: 1_700_000_000, nsec: 0 }).map(|(p, _)| p)
    }

    #[test]
    fn paths_then_expression() {
        let prog = p(&["-L", "a", "-", "b", "-name", "x"]).unwrap();
        assert_eq!(prog.follow, Follow::Always);
        assert_eq!(prog.roots, args(&["a", "-", "b"]));
        assert_eq!(prog.actions.len(), 1, "implicit -print added");
        assert_eq!(p(&[]).unwrap().roots, args(&["."]));
        assert_eq!(p(&[")", "-print"]).unwrap().roots, args(&[")"]), "a leading ')' is a file");
        let weird = p(&["-", "(-", "!-", ",", ")", "./(", "(", "!", "-print", "-o", "-print", ")"]).unwrap();
        assert_eq!(weird.roots, args(&["-", "(-", "!-", ",", ")", "./("]), "as GNU: only ( ! -x start it");
    }

    #[test]
    fn filters_take_no_actions_and_no_default_root() {
        let filter = |s: &[&str]| parse_filter(&args(s), Timestamp::default()).map(|(p, _)| p);
        let prog = filter(&["d", "-name", "*.tmp", "-o", "-type", "d", "-prune"]).unwrap();
        assert!(prog.actions.is_empty(), "no implicit -print");
        assert_eq!(prog.roots, args(&["d"]));
        assert!(filter(&["-name", "x"]).unwrap().roots.is_empty());
        for action in [&["-print"][..], &["-delete"], &["-exec", "rm", "{}", ";"], &["-quit"], &["-ls"]] {
            let mut argv = vec!["d", "-name", "x"];
            argv.extend_from_slice(action);
            assert!(filter(&argv).unwrap_err().0.contains("not actions"), "{action:?}");
        }
    }

    #[test]
    fn usage_errors_like_gnu() {
        let err = |a: &[&str]| p(a).unwrap_err().0;
        assert!(err(&["-name"]).contains("missing argument to `-name'"));
        assert_eq!(err(&["-foo"]), "unknown predicate `-foo'");
        assert_eq!(err(&["-nmae", "x"]), "unknown predicate `-nmae'\nhint: did you mean `-name'?");
        assert!(err(&["-name", "x", "dir"]).contains("paths must precede expression: `dir'"));
        assert!(err(&["(", "-name", "x"]).contains("expecting to find a ')'"));
        assert!(err(&["-o", "-print"]).contains("binary operator '-o' with nothing before it"));
        assert!(err(&["-type", "q"]).contains("Unknown argument to -type: q"));
        assert!(err(&["-exec", "echo", "{}"]).contains("missing argument to `-exec'"));
        assert!(err(&["-delete", "-prune"]).contains("-delete action automatically turns on -depth"));
        assert!(p(&["-depth", "-delete", "-prune"]).is_ok());
        assert_eq!(err(&["-size", "1x"]), "invalid -size type `x'");
        assert_eq!(err(&["-size", "+"]), "invalid -size type `+'");
        assert_eq!(err(&["-size", "abc"]), "Invalid argument `abc' to -size");
    }

    #[test]
    fn actions_suppress_the_default_print() {
        let prog = p(&["-name", "x", "-print0"]).unwrap();
        assert_eq!(prog.actions.len(), 1);
        let prog = p(&["-name", "x", "-prune"]).unwrap();
        assert_eq!(prog.actions.len(), 1, "-prune is not an action that suppresses -print");
        let prog = p(&["-exec", "echo", "{}", "+"]).unwrap();
        assert!(matches!(&prog.actions[0], Action::Exec(e) if e.batch));
        assert!(p(&["-exec", "echo", "{}", "+", ";"]).is_err(), "as GNU: '+' after '{{}}' ends it");
        let prog = p(&["-exec", "echo", "{}", "x", "+", ";"]).unwrap();
        assert!(matches!(&prog.actions[0], Action::Exec(e) if !e.batch && e.argv.len() == 4));
    }

    #[test]
    fn delete_implies_depth_and_options_apply() {
        let prog = p(&["-maxdepth", "2", "-mindepth", "1", "-xdev", "-delete"]).unwrap();
        assert!(prog.options.depth_first);
        assert_eq!(prog.options.max_depth, Some(2));
        assert_eq!(prog.options.min_depth, 1);
        assert!(prog.options.same_file_system);
    }

    #[test]
    fn files0_from_replaces_the_operands() {
        let prog = p(&["-files0-from", "a", "-files0-from", "-"]).unwrap();
        assert_eq!(prog.start_list, Some(StartList::Stdin), "the last one counts");
        assert!(prog.roots.is_empty(), "no default '.'");
        assert!(p(&[".", "-files0-from", "a"]).unwrap_err().0.contains("extra operand '.'"));
        let err = p(&["-files0-from", "-", "-ok", "echo", "{}", ";"]).unwrap_err().0;
        assert!(err.contains("cannot be combined with -ok"), "{err}");
        assert!(p(&["-files0-from", "-", "-ok", "echo", "{}", ";", "-files0-from", "f"]).is_ok());
    }

    #[test]
    fn one_writer_per_output_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        std::fs::write(&file, b"").unwrap();
        std::fs::hard_link(&file, dir.path().join("hard")).unwrap();
        std::os::unix::fs::symlink("out", dir.path().join("soft")).unwrap();
        let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
        let (out, hard, soft, other) = (path("out"), path("hard"), path("soft"), path("other"));
        let prog =
            p(&["-fprint", &out, "-fprint", &hard, "-fprint", &soft, "-fprint", &other, "-fprint", &out])
                .unwrap();
        assert_eq!(prog.output_files.len(), 2, "out, its links and itself again share one; other is new");
        let prog = p(&["-fprint", "/dev/stdout"]).unwrap();
        assert!(prog.output_files.is_empty());
        assert!(matches!(prog.actions[0], Action::Print { output: Output::Stdout, .. }));
    }
}
