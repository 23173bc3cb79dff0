//! find's primaries, one table of names and parsers (as bfs's `parse_table[]`): options, tests and
//! actions. A parser is called with the primary's name consumed and reads its own arguments.

use super::{ParseError, Parser, lossy};
use crate::args::{
    check_path_safety, invalid_argument, parse_num, parse_size, parse_types, unsupported_newer,
};
use crate::ast::{Expr, Test};
use crate::glob::Glob;
use crate::gnu_regex::{Syntax, compile};
use crate::ids;
use crate::mode::{Perm, PermMatch};
use crate::program::{Action, Output, StartList};
use crate::time::{DAY, TimeField, parse_date, used_window};
use canopy_engine::Follow;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// Parses one primary whose name was just consumed.
type ParsePrimary = fn(&mut Parser<'_>, &str) -> Result<Expr, ParseError>;

const PRIMARIES: &[(&str, ParsePrimary)] = &[
    // Options: true wherever they appear, effective for the whole walk.
    ("-maxdepth", depth_limit),
    ("-mindepth", depth_limit),
    ("-depth", depth_first),
    ("-d", depth_first),
    ("-xdev", same_file_system),
    ("-mount", same_file_system),
    ("-follow", |p, _| {
        p.follow = Follow::Always;
        test(Test::True)
    }),
    ("-daystart", |p, _| {
        p.day.use_day_start();
        test(Test::True)
    }),
    ("-ignore_readdir_race", readdir_race),
    ("-noignore_readdir_race", readdir_race),
    ("-noleaf", |_, _| test(Test::True)),
    ("-warn", |_, _| test(Test::True)),
    ("-nowarn", |_, _| test(Test::True)),
    ("-regextype", regex_type),
    ("-files0-from", files0_from),
    // Tests.
    ("-true", |_, _| test(Test::True)),
    ("-false", |_, _| test(Test::False)),
    ("-name", name),
    ("-iname", name),
    ("-g", smart_case_name),
    ("-path", path),
    ("-wholename", path),
    ("-ipath", path),
    ("-iwholename", path),
    ("-lname", link_name),
    ("-ilname", link_name),
    ("-regex", regex),
    ("-iregex", regex),
    ("-type", file_type),
    ("-xtype", file_type),
    ("-size", size),
    ("-empty", |_, _| test(Test::Empty)),
    ("-atime", time),
    ("-ctime", time),
    ("-mtime", time),
    ("-amin", time),
    ("-cmin", time),
    ("-mmin", time),
    ("-newer", newer),
    ("-anewer", newer),
    ("-cnewer", newer),
    ("-used", used),
    ("-user", user),
    ("-group", group),
    ("-uid", number),
    ("-gid", number),
    ("-links", number),
    ("-inum", number),
    ("-nouser", |_, _| test(Test::NoUser)),
    ("-nogroup", |_, _| test(Test::NoGroup)),
    ("-perm", perm),
    ("-samefile", same_file),
    ("-readable", |_, _| test(Test::Readable)),
    ("-writable", |_, _| test(Test::Writable)),
    ("-executable", |_, _| test(Test::Executable)),
    ("-fstype", |p, name| test(Test::FsType(p.argument(name)?))),
    // Actions.
    ("-prune", |_, _| Ok(Expr::Prune)),
    ("-quit", |_, _| Ok(Expr::Quit)),
    ("-print", |p, _| Ok(p.action(Action::Print { terminator: b'\n', output: Output::Stdout }))),
    ("-print0", |p, _| Ok(p.action(Action::Print { terminator: 0, output: Output::Stdout }))),
    ("-fprint", file_print),
    ("-fprint0", file_print),
    ("-printf", |p, name| {
        let format = p.format(name)?;
        Ok(p.action(Action::Printf { format, output: Output::Stdout }))
    }),
    ("-fprintf", |p, name| {
        let output = p.output_file(name)?;
        let format = p.format(name)?;
        Ok(p.action(Action::Printf { format, output }))
    }),
    ("-ls", |p, _| Ok(p.action(Action::Ls { output: Output::Stdout }))),
    ("-fls", |p, name| {
        let output = p.output_file(name)?;
        Ok(p.action(Action::Ls { output }))
    }),
    ("-delete", |p, _| Ok(p.action(Action::Delete))),
    ("-exec", exec_action),
    ("-execdir", exec_action),
    ("-ok", exec_action),
    ("-okdir", exec_action),
    // Known, refused with a reason.
    ("-context", |_, _| {
        Err(ParseError(
            "invalid predicate -context: canopy find does not match SELinux contexts (-printf %Z prints them)".into(),
        ))
    }),
    ("-help", not_an_expression),
    ("--help", not_an_expression),
    ("-version", not_an_expression),
    ("--version", not_an_expression),
];

/// The parser of a primary: from the table, or `-newerXY`'s.
pub(super) fn lookup(name: &str) -> Option<ParsePrimary> {
    let known = PRIMARIES.iter().find(|(known, _)| *known == name).map(|&(_, parse)| parse);
    known.or_else(|| (name.starts_with("-newer") && name.len() == 8).then_some(newer_xy as ParsePrimary))
}

/// The known primary closest to a mistyped one (`-nmae`: `-name`), if one is close enough to be
/// what was meant: at most one edit in three characters.
pub(super) fn suggestion(unknown: &str) -> Option<&'static str> {
    let within = (unknown.chars().count().saturating_sub(1) / 3).max(1);
    PRIMARIES
        .iter()
        .map(|&(known, _)| (strsim::osa_distance(unknown, known), known))
        .filter(|&(distance, _)| distance <= within)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, known)| known)
}

fn test(t: Test) -> Result<Expr, ParseError> {
    Ok(Expr::Test(t))
}

fn depth_limit(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let depth: u32 = arg.parse().map_err(|_| {
        ParseError(format!("Expected a positive decimal integer argument to {name}, but got '{arg}'"))
    })?;
    if name == "-maxdepth" {
        p.options.max_depth = Some(depth);
    } else {
        p.options.min_depth = depth;
    }
    test(Test::True)
}

fn depth_first(p: &mut Parser<'_>, _: &str) -> Result<Expr, ParseError> {
    p.options.depth_first = true;
    p.explicit_depth = true;
    test(Test::True)
}

fn same_file_system(p: &mut Parser<'_>, _: &str) -> Result<Expr, ParseError> {
    p.options.same_file_system = true;
    test(Test::True)
}

fn readdir_race(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    p.options.ignore_readdir_race = name == "-ignore_readdir_race";
    test(Test::True)
}

fn regex_type(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    p.regex_syntax = Syntax::from_name(&arg).ok_or_else(|| {
        ParseError(format!("Unknown regular expression type '{arg}'; valid types are {}.", Syntax::NAMES))
    })?;
    test(Test::True)
}

fn files0_from(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let source = p.argument(name)?;
    p.start_list = Some(if source == b"-" {
        StartList::Stdin
    } else {
        StartList::File(PathBuf::from(std::ffi::OsString::from_vec(source)))
    });
    test(Test::True)
}

fn name(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let pattern = p.argument(name)?;
    if pattern.contains(&b'/') && pattern != b"/" {
        p.warnings.push(format!(
            "'{name}' matches only the last component of a path; '{}' contains a '/' and will never match",
            lossy(&pattern)
        ));
    }
    test(Test::Name(Glob::new(&pattern, name == "-iname")))
}

/// Canopy's `-g`: a glob on the name, case-insensitive unless it has capitals.
fn smart_case_name(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let pattern = p.argument(name)?;
    let smart_case = !pattern.iter().any(u8::is_ascii_uppercase);
    test(Test::Name(Glob::new(&pattern, smart_case)))
}

fn path(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let pattern = p.argument(name)?;
    test(Test::Path(Glob::new(&pattern, name.starts_with("-i"))))
}

fn link_name(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let pattern = p.argument(name)?;
    test(Test::LinkName(Glob::new(&pattern, name == "-ilname")))
}

fn regex(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let pattern = p.argument(name)?;
    let regex = compile(&pattern, p.regex_syntax, name == "-iregex").map_err(|e| {
        ParseError(format!("failed to compile regular expression '{}': {e}", lossy(&pattern)))
    })?;
    test(Test::Regex(regex))
}

fn file_type(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    test(Test::Type { kinds: parse_types(&arg, name)?, follow_opposite: name == "-xtype" })
}

fn size(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let (num, unit) = parse_size(&arg).map_err(ParseError)?;
    test(Test::Size { num, unit })
}

/// `-atime`, `-cmin` & co.: the field is the letter after the dash.
fn time(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let field = TimeField::from_letter(name.as_bytes()[1]).unwrap_or(TimeField::Modify);
    let unit = if name.ends_with("min") { 60 } else { DAY };
    let window = p.day.window(&arg, unit).map_err(|_| invalid_argument(&arg, name))?;
    test(Test::Time { field, window })
}

fn newer(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let file = p.argument(name)?;
    let field = match name {
        "-anewer" => TimeField::Access,
        "-cnewer" => TimeField::Change,
        _ => TimeField::Modify,
    };
    let reference = TimeField::Modify.of(&p.stat_reference(&file)?);
    test(Test::Newer { field, reference })
}

/// `-newerXY`: X of the entry newer than Y of a reference file, or than a date if Y is `t`.
fn newer_xy(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let (x, y) = (name.as_bytes()[6], name.as_bytes()[7]);
    let field = TimeField::from_letter(x).ok_or_else(|| unsupported_newer(name))?;
    let arg = p.argument(name)?;
    let reference = if y == b't' {
        let text = lossy(&arg);
        parse_date(&text, p.start).ok_or_else(|| {
            ParseError(format!("I cannot figure out how to interpret '{text}' as a date or time"))
        })?
    } else {
        TimeField::from_letter(y).ok_or_else(|| unsupported_newer(name))?.of(&p.stat_reference(&arg)?)
    };
    test(Test::Newer { field, reference })
}

fn used(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let window = used_window(&arg).ok_or_else(|| ParseError(format!("Invalid argument {arg} to -used")))?;
    test(Test::Used(window))
}

fn user(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let uid = ids::uid_of(&arg)
        .or_else(|| arg.parse().ok())
        .ok_or_else(|| ParseError(format!("'{arg}' is not the name of a known user")))?;
    test(Test::User(uid))
}

fn group(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let gid = ids::gid_of(&arg)
        .or_else(|| arg.parse().ok())
        .ok_or_else(|| ParseError(format!("'{arg}' is not the name of an existing group")))?;
    test(Test::Group(gid))
}

fn number(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let num = parse_num(&arg).ok_or_else(|| invalid_argument(&arg, name))?;
    test(match name {
        "-uid" => Test::Uid(num),
        "-gid" => Test::Gid(num),
        "-links" => Test::Links(num),
        _ => Test::Inum(num),
    })
}

fn perm(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let arg = p.text_argument(name)?;
    let perm = Perm::parse(&arg).map_err(ParseError)?;
    if perm.kind == PermMatch::Any && perm.bits == [0, 0] {
        p.warnings.push(format!(
            "you have specified a mode pattern {arg} (which is equivalent to /000). The meaning of \
             -perm /000 has now been changed to be consistent with -perm -000; that is, while it used to \
             match no files, it now matches all files."
        ));
    }
    test(Test::Perm(perm))
}

fn same_file(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let file = p.argument(name)?;
    let meta = p.stat_reference(&file)?;
    test(Test::SameFile { dev: meta.dev, ino: meta.ino })
}

fn file_print(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    let output = p.output_file(name)?;
    let terminator = if name == "-fprint0" { 0 } else { b'\n' };
    Ok(p.action(Action::Print { terminator, output }))
}

fn exec_action(p: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    if name.ends_with("dir") {
        check_path_safety(name, std::env::var_os("PATH").as_deref())?;
    }
    let exec = p.exec(name)?;
    Ok(p.action(Action::Exec(exec)))
}

fn not_an_expression(_: &mut Parser<'_>, name: &str) -> Result<Expr, ParseError> {
    Err(ParseError(format!("{name} is not an expression; use 'canopy find --help' or 'canopy --version'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_primary_once() {
        let mut names: Vec<_> = PRIMARIES.iter().map(|(name, _)| name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a primary is in the table twice");
    }

    #[test]
    fn suggestions_for_typos_only() {
        assert_eq!(suggestion("-nmae"), Some("-name"));
        assert_eq!(suggestion("-maxdept"), Some("-maxdepth"));
        assert_eq!(suggestion("-exce"), Some("-exec"));
        assert_eq!(suggestion("-typ"), Some("-type"));
        assert_eq!(suggestion("-foo"), None);
        assert_eq!(suggestion("-frobnicate"), None);
    }
}
