//! `-printf` formats: parsed once, rendered per entry with GNU find's directives, flags, widths,
//! precisions and backslash escapes.

use crate::clock::{local_tm, strftime};
use crate::fstype::fs_type_name;
use crate::ids::{group_name, user_name};
use canopy_engine::{Entry, Errno, FileKind, Metadata, Timestamp, below_start};
use std::cell::RefCell;
use std::io::Write;

/// A parsed `-printf` format.
#[derive(Clone, Debug, Default)]
pub struct Format {
    pieces: Vec<Piece>,
}

#[derive(Clone, Debug)]
enum Piece {
    Text(Vec<u8>),
    /// `\c`: stop here, no further output for this entry.
    Stop,
    Field(Spec, Field),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimeOf {
    Access,
    Change,
    Modify,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Path,
    Name,
    Dir,
    RelPath,
    StartPoint,
    Depth,
    Size,
    Blocks,
    KBlocks,
    Sparseness,
    ModeOctal,
    ModeString,
    Links,
    Inode,
    Device,
    Uid,
    Gid,
    User,
    Group,
    Kind,
    KindFollowed,
    LinkTarget,
    FsType,
    Context,
    /// `%a %c %t`: ctime(3)-like with nanoseconds.
    CTime(TimeOf),
    /// `%Ak %Ck %Tk`.
    Time(TimeOf, u8),
    /// `%Bk`, the birth time: empty, as GNU find 4.9 prints it on Linux (it reads no birth time).
    Birth,
}

impl Field {
    /// Whether rendering the field reads the entry's whole path (`%f` only for a starting point).
    fn reads_path(self, root: bool) -> bool {
        matches!(self, Field::Path | Field::Dir | Field::RelPath) || (self == Field::Name && root)
    }

    /// Whether the field needs the entry's metadata.
    fn needs_stat(self) -> bool {
        !matches!(
            self,
            Field::Path
                | Field::Name
                | Field::Dir
                | Field::RelPath
                | Field::StartPoint
                | Field::Depth
                | Field::Context
                | Field::Birth
        )
    }
}

impl Format {
    /// Parses a format; returns warnings for unknown directives and escapes (GNU prints them and
    /// outputs the text unchanged).
    pub fn parse(format: &[u8]) -> (Format, Vec<String>) {
        let mut pieces = Vec::new();
        let mut warnings = Vec::new();
        let mut text = Vec::new();
        let mut i = 0;
        while i < format.len() {
            match format[i] {
                b'\\' if i + 1 < format.len() => {
                    i += 1;
                    match escape(format, &mut i) {
                        Some(EscapeOut::Byte(b)) => text.push(b),
                        Some(EscapeOut::Stop) => {
                            flush_text(&mut pieces, &mut text);
                            pieces.push(Piece::Stop);
                        }
                        None => {
                            warnings.push(format!("unrecognized escape `\\{}'", format[i - 1] as char));
                            text.extend_from_slice(&format[i - 2..i]);
                        }
                    }
                }
                b'%' if i + 1 < format.len() => {
                    let start = i;
                    i += 1;
                    if format[i] == b'%' {
                        text.push(b'%');
                        i += 1;
                        continue;
                    }
                    let spec = parse_spec(format, &mut i);
                    match parse_field(format, &mut i) {
                        Some(field) => {
                            flush_text(&mut pieces, &mut text);
                            pieces.push(Piece::Field(spec, field));
                        }
                        None => {
                            let end = (i + 1).min(format.len());
                            warnings.push(format!(
                                "unrecognized format directive `{}'",
                                String::from_utf8_lossy(&format[start..end])
                            ));
                            text.extend_from_slice(&format[start..end]);
                            i = end;
                        }
                    }
                }
                b => {
                    text.push(b);
                    i += 1;
                }
            }
        }
        flush_text(&mut pieces, &mut text);
        (Format { pieces }, warnings)
    }

    /// Whether rendering reads the entry's metadata.
    pub fn needs_stat(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Field(_, f) if f.needs_stat()))
    }

    /// Appends the rendering for `entry` to `out`. A failed stat ends the rendering; a
    /// missing security context (`%Z`) renders empty, as in GNU find, and is reported after the
    /// whole line. Fields without flags, width or precision are written straight into `out`.
    pub fn render<D>(&self, entry: &Entry<'_, D>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        thread_local! {
            /// The entry's path and one field's value, reused from entry to entry.
            static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
        }
        SCRATCH.with_borrow_mut(|(path, value)| {
            path.clear();
            let mut context_error = None;
            for piece in &self.pieces {
                match piece {
                    Piece::Text(t) => out.extend_from_slice(t),
                    Piece::Stop => break,
                    Piece::Field(spec, Field::Context) => {
                        let context = security_context(entry).unwrap_or_else(|errno| {
                            context_error = Some(errno);
                            Vec::new()
                        });
                        apply_spec(spec, Field::Context, &context, out);
                    }
                    Piece::Field(spec, field) => {
                        if path.is_empty() && field.reads_path(entry.is_root()) {
                            entry.write_path(path);
                        }
                        if *spec == Spec::default() {
                            write_field(*field, entry, path, out).map_err(RenderError::Stat)?;
                        } else {
                            value.clear();
                            write_field(*field, entry, path, value).map_err(RenderError::Stat)?;
                            apply_spec(spec, *field, value, out);
                        }
                    }
                }
            }
            context_error.map_or(Ok(()), |errno| Err(RenderError::Context(errno)))
        })
    }
}

/// Why a `-printf` rendering is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderError {
    /// The entry's metadata could not be read.
    Stat(Errno),
    /// `%Z`: the SELinux context could not be read (GNU: "getfilecon failed").
    Context(Errno),
}

/// `%Z`: the SELinux context (the `security.selinux` extended attribute, as `getfilecon` reads it),
/// of the link itself unless links are followed. Read through `/proc/self/fd` so it works at any
/// depth.
fn security_context<D>(entry: &Entry<'_, D>) -> Result<Vec<u8>, Errno> {
    use std::os::unix::ffi::OsStrExt;
    let path = match entry.dir_fd() {
        Some(fd) => {
            let mut p = format!("/proc/self/fd/{}/", std::os::fd::AsRawFd::as_raw_fd(&fd)).into_bytes();
            p.extend_from_slice(entry.name_cstr().to_bytes());
            p
        }
        None => entry.name_cstr().to_bytes().to_vec(),
    };
    let path = std::ffi::OsStr::from_bytes(&path);
    let mut value = vec![0u8; 256];
    let read = if entry.follows() {
        rustix::fs::getxattr(path, "security.selinux", &mut value)
    } else {
        rustix::fs::lgetxattr(path, "security.selinux", &mut value)
    };
    let len = read?;
    value.truncate(len);
    if value.last() == Some(&0) {
        value.pop();
    }
    Ok(value)
}

fn flush_text(pieces: &mut Vec<Piece>, text: &mut Vec<u8>) {
    if !text.is_empty() {
        pieces.push(Piece::Text(std::mem::take(text)));
    }
}

enum EscapeOut {
    Byte(u8),
    Stop,
}

/// Decodes the escape whose letter is at `format[*i]`, advancing past it.
fn escape(format: &[u8], i: &mut usize) -> Option<EscapeOut> {
    let c = format[*i];
    *i += 1;
    Some(EscapeOut::Byte(match c {
        b'a' => 7,
        b'b' => 8,
        b'c' => return Some(EscapeOut::Stop),
        b'f' => 12,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'v' => 11,
        b'\\' => b'\\',
        b'0'..=b'7' => {
            let mut value = u32::from(c - b'0');
            let mut digits = 1;
            while digits < 3 && *i < format.len() && (b'0'..=b'7').contains(&format[*i]) {
                value = value * 8 + u32::from(format[*i] - b'0');
                *i += 1;
                digits += 1;
            }
            value as u8
        }
        _ => return None,
    }))
}

fn parse_spec(format: &[u8], i: &mut usize) -> Spec {
    let mut spec = Spec::default();
    while *i < format.len() {
        match format[*i] {
            b'-' => spec.left = true,
            b'0' => spec.zero = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            b'#' => spec.alternate = true,
            _ => break,
        }
        *i += 1;
    }
    spec.width = parse_number(format, i);
    if *i < format.len() && format[*i] == b'.' {
        *i += 1;
        spec.precision = Some(parse_number(format, i).unwrap_or(0));
    }
    spec
}

fn parse_number(format: &[u8], i: &mut usize) -> Option<usize> {
    let start = *i;
    while *i < format.len() && format[*i].is_ascii_digit() {
        *i += 1;
    }
    std::str::from_utf8(&format[start..*i]).ok()?.parse().ok()
}

fn parse_field(format: &[u8], i: &mut usize) -> Option<Field> {
    let c = *format.get(*i)?;
    *i += 1;
    let mut time = |of| -> Option<Field> {
        let k = *format.get(*i)?;
        const KNOWN: &[u8] = b"@+aAbBcCdDeFgGhHIjklmMnprRsStTuUVwWxXyYzZ";
        KNOWN.contains(&k).then(|| {
            *i += 1;
            Field::Time(of, k)
        })
    };
    Some(match c {
        b'p' => Field::Path,
        b'f' => Field::Name,
        b'h' => Field::Dir,
        b'P' => Field::RelPath,
        b'H' => Field::StartPoint,
        b'd' => Field::Depth,
        b's' => Field::Size,
        b'b' => Field::Blocks,
        b'k' => Field::KBlocks,
        b'S' => Field::Sparseness,
        b'm' => Field::ModeOctal,
        b'M' => Field::ModeString,
        b'n' => Field::Links,
        b'i' => Field::Inode,
        b'D' => Field::Device,
        b'U' => Field::Uid,
        b'G' => Field::Gid,
        b'u' => Field::User,
        b'g' => Field::Group,
        b'y' => Field::Kind,
        b'Y' => Field::KindFollowed,
        b'l' => Field::LinkTarget,
        b'F' => Field::FsType,
        b'Z' => Field::Context,
        b'a' => Field::CTime(TimeOf::Access),
        b'c' => Field::CTime(TimeOf::Change),
        b't' => Field::CTime(TimeOf::Modify),
        b'A' => return time(TimeOf::Access),
        b'C' => return time(TimeOf::Change),
        b'T' => return time(TimeOf::Modify),
        b'B' => return time(TimeOf::Modify).map(|_| Field::Birth),
        _ => {
            *i -= 1;
            return None;
        }
    })
}

/// Appends `field`'s value to `out`; nothing if the metadata it needs cannot be read.
fn write_field<D>(field: Field, entry: &Entry<'_, D>, path: &[u8], out: &mut Vec<u8>) -> Result<(), Errno> {
    let meta = || entry.metadata().copied();
    match field {
        Field::Path => out.extend_from_slice(path),
        Field::Name if entry.is_root() => out.extend_from_slice(base_name(path)),
        Field::Name => out.extend_from_slice(entry.file_name()),
        Field::Dir => out.extend_from_slice(leading_dirs(path)),
        Field::RelPath => out.extend_from_slice(below_start(path, entry.start_point())),
        Field::StartPoint => out.extend_from_slice(entry.start_point()),
        Field::Depth => decimal(out, entry.depth()),
        Field::Size => decimal(out, meta()?.size),
        Field::Blocks => decimal(out, meta()?.blocks),
        Field::KBlocks => decimal(out, (meta()?.blocks * 512).div_ceil(1024)),
        Field::Sparseness => {
            let m = meta()?;
            let ratio = if m.size == 0 { 1.0 } else { (m.blocks * 512) as f64 / m.size as f64 };
            out.extend_from_slice(format_g(ratio).as_bytes());
        }
        Field::ModeOctal => {
            let mode = meta()?.mode & 0o7777;
            // Writing to a Vec cannot fail.
            let _ = write!(out, "{mode:o}");
        }
        Field::ModeString => out.extend_from_slice(mode_string(meta()?.mode).as_bytes()),
        Field::Links => decimal(out, meta()?.nlink),
        Field::Inode => decimal(out, meta()?.ino),
        Field::Device => decimal(out, meta()?.dev),
        Field::Uid => decimal(out, meta()?.uid),
        Field::Gid => decimal(out, meta()?.gid),
        Field::User => {
            let uid = meta()?.uid;
            match user_name(uid) {
                Some(name) => out.extend_from_slice(&name),
                None => decimal(out, uid),
            }
        }
        Field::Group => {
            let gid = meta()?.gid;
            match group_name(gid) {
                Some(name) => out.extend_from_slice(&name),
                None => decimal(out, gid),
            }
        }
        Field::Kind => out.push(kind_letter(entry.kind())),
        Field::KindFollowed => out.push(followed_kind_letter(entry)),
        Field::LinkTarget => {
            // Like GNU: only what the entry's own stat (following links under -L) sees as a link.
            if entry.metadata().is_ok_and(|m| m.kind() == FileKind::Symlink) {
                out.extend_from_slice(&read_link(entry).unwrap_or_default());
            }
        }
        Field::FsType => out.extend_from_slice(&fs_type_name(meta()?.dev)),
        Field::Context => out.extend_from_slice(&security_context(entry)?),
        Field::CTime(of) => out.extend_from_slice(&ctime_with_nanos(time_of(&meta()?, of))),
        Field::Time(of, k) => out.extend_from_slice(&format_time(time_of(&meta()?, of), k)),
        Field::Birth => {}
    }
    Ok(())
}

/// An integer in decimal, without an intermediate string.
fn decimal(out: &mut Vec<u8>, n: impl std::fmt::Display) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{n}");
}

fn kind_letter(kind: FileKind) -> u8 {
    kind.letter() as u8
}

/// `%Y`: the type of what a symlink points to; `N` if nothing, `L` for a loop, `?` otherwise.
fn followed_kind_letter<D>(entry: &Entry<'_, D>) -> u8 {
    if entry.dirent_kind() != FileKind::Symlink && entry.kind() != FileKind::Symlink {
        return kind_letter(entry.kind());
    }
    let followed = match (entry.dir_fd(), entry.is_root()) {
        (Some(fd), _) => rustix::fs::statx(
            fd,
            entry.name_cstr(),
            rustix::fs::AtFlags::empty(),
            rustix::fs::StatxFlags::TYPE,
        ),
        (None, _) => rustix::fs::statx(
            rustix::fs::CWD,
            entry.name_cstr(),
            rustix::fs::AtFlags::empty(),
            rustix::fs::StatxFlags::TYPE,
        ),
    };
    match followed {
        Ok(s) => kind_letter(FileKind::from_mode(u32::from(s.stx_mode))),
        // Like GNU find 4.9: a link through a non-directory (`notdir -> file/x`) points nowhere.
        Err(Errno::NOENT | Errno::NOTDIR) => b'N',
        Err(Errno::LOOP) => b'L',
        Err(_) => b'?',
    }
}

/// Reads a symlink's target relative to its directory.
pub fn read_link<D>(entry: &Entry<'_, D>) -> Result<Vec<u8>, Errno> {
    let target = match entry.dir_fd() {
        Some(fd) => rustix::fs::readlinkat(fd, entry.name_cstr(), Vec::new())?,
        None => rustix::fs::readlinkat(rustix::fs::CWD, entry.name_cstr(), Vec::new())?,
    };
    Ok(target.into_bytes())
}

fn time_of(meta: &Metadata, of: TimeOf) -> Timestamp {
    match of {
        TimeOf::Access => meta.atime,
        TimeOf::Change => meta.ctime,
        TimeOf::Modify => meta.mtime,
    }
}

/// `Sun Nov 22 07:20:31.5023522210 2026`, as GNU find prints `%a`, `%c` and `%t`.
fn ctime_with_nanos(t: Timestamp) -> Vec<u8> {
    let Some(tm) = local_tm(t.sec) else { return t.sec.to_string().into_bytes() };
    let mut s = strftime(&tm, "%a %b %e %H:%M:%S");
    s.extend_from_slice(format!(".{:09}0 ", t.nsec).as_bytes());
    s.extend_from_slice(&strftime(&tm, "%Y"));
    s
}

/// One `%Ak`-style conversion; `@`, `S`, `T`, `X` and `+` carry nanoseconds like GNU find's.
fn format_time(t: Timestamp, k: u8) -> Vec<u8> {
    let fraction = format!(".{:09}0", t.nsec);
    if k == b'@' {
        return format!("{}{fraction}", t.sec).into_bytes();
    }
    let Some(tm) = local_tm(t.sec) else { return t.sec.to_string().into_bytes() };
    let mut s = match k {
        b'+' => strftime(&tm, "%Y-%m-%d+%H:%M:%S"),
        _ => strftime(&tm, &format!("%{}", k as char)),
    };
    if matches!(k, b'S' | b'T' | b'X' | b'+') {
        s.extend_from_slice(fraction.as_bytes());
    }
    s
}

/// `ls -l` style type and permissions of an `st_mode`: `drwxr-xr-x`, with s/S, t/T for the special bits.
pub fn mode_string(mode: u32) -> String {
    let kind = match FileKind::from_mode(mode) {
        FileKind::Dir => 'd',
        FileKind::Symlink => 'l',
        FileKind::Fifo => 'p',
        FileKind::Socket => 's',
        FileKind::BlockDevice => 'b',
        FileKind::CharDevice => 'c',
        _ => '-',
    };
    let bit = |mask: u32, c: char| if mode & mask != 0 { c } else { '-' };
    let special = |exec: u32, special: u32, on: char, off: char| match (mode & exec != 0, mode & special != 0)
    {
        (true, true) => on,
        (false, true) => off,
        (true, false) => 'x',
        (false, false) => '-',
    };
    [
        kind,
        bit(0o400, 'r'),
        bit(0o200, 'w'),
        special(0o100, 0o4000, 's', 'S'),
        bit(0o040, 'r'),
        bit(0o020, 'w'),
        special(0o010, 0o2000, 's', 'S'),
        bit(0o004, 'r'),
        bit(0o002, 'w'),
        special(0o001, 0o1000, 't', 'T'),
    ]
    .iter()
    .collect()
}

/// gnulib's `base_name`: the last component, keeping one trailing slash; `/` for all-slash paths.
fn base_name(path: &[u8]) -> &[u8] {
    let trimmed_len = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
    if trimmed_len == 0 {
        return &path[..path.len().min(1)];
    }
    let start = path[..trimmed_len].iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    let end = if trimmed_len < path.len() { trimmed_len + 1 } else { trimmed_len };
    &path[start..end]
}

/// `%h`: everything before the last slash once trailing slashes are removed; `.` if none.
fn leading_dirs(path: &[u8]) -> &[u8] {
    let mut end = path.len();
    while end > 1 && path[end - 1] == b'/' {
        end -= 1;
    }
    let trimmed = if path[..end].iter().all(|&b| b == b'/') { path } else { &path[..end] };
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => &trimmed[..i],
        None => b".",
    }
}

/// C's `%g`: six significant digits, trailing zeros dropped, exponent form for tiny or huge values.
fn format_g(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let exponent = x.abs().log10().floor() as i32;
    if !(-4..6).contains(&exponent) {
        let s = format!("{:.5e}", x);
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = trim_zeros(mantissa);
        let exp: i32 = exp.parse().unwrap_or(0);
        return format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let decimals = (5 - exponent).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

fn apply_spec(spec: &Spec, field: Field, value: &[u8], out: &mut Vec<u8>) {
    let numeric = matches!(field, Field::Depth | Field::ModeOctal | Field::Sparseness);
    // The value as printed: a flag's prefix (`%#m`'s 0, `%+d`'s sign) and the value, cut to the
    // precision for text.
    let mut prefix: &[u8] = b"";
    let mut body = value;
    if numeric {
        if field == Field::ModeOctal && spec.alternate && value != b"0" {
            prefix = b"0";
        }
        if field == Field::Depth && spec.plus {
            prefix = b"+";
        } else if field == Field::Depth && spec.space {
            prefix = b" ";
        }
    } else if let Some(p) = spec.precision {
        body = &value[..value.len().min(p)];
    }
    let len = prefix.len() + body.len();
    let pad = spec.width.unwrap_or(0).saturating_sub(len);
    if spec.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(b' ', pad));
    } else if spec.zero && numeric {
        // Zeros go after a sign.
        let (sign, rest): (&[u8], &[u8]) = match (prefix, body) {
            ([b'+' | b' ' | b'-'], _) => (prefix, body),
            ([], [b'+' | b' ' | b'-', rest @ ..]) => (&body[..1], rest),
            _ => (b"", b""),
        };
        if sign.is_empty() {
            out.extend(std::iter::repeat_n(b'0', pad));
            out.extend_from_slice(prefix);
            out.extend_from_slice(body);
        } else {
            out.extend_from_slice(sign);
            out.extend(std::iter::repeat_n(b'0', pad));
            out.extend_from_slice(rest);
        }
    } else {
        out.extend(std::iter::repeat_n(b' ', pad));
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_like_gnu() {
        assert_eq!(base_name(b"a/b//"), b"b/");
        assert_eq!(base_name(b"/"), b"/");
        assert_eq!(base_name(b"//"), b"/");
        assert_eq!(base_name(b"a//b"), b"b");
        assert_eq!(leading_dirs(b"a/b/"), b"a");
        assert_eq!(leading_dirs(b"/"), b"");
        assert_eq!(leading_dirs(b"//"), b"/");
        assert_eq!(leading_dirs(b"a//b"), b"a/");
        assert_eq!(leading_dirs(b"x"), b".");
        assert_eq!(leading_dirs(b"/usr"), b"");
    }

    #[test]
    fn percent_g() {
        assert_eq!(format_g(1.0), "1");
        assert_eq!(format_g(682.6666667), "682.667");
        assert_eq!(format_g(0.5), "0.5");
        assert_eq!(format_g(1234567.0), "1.23457e+06");
        assert_eq!(format_g(0.00001234), "1.234e-05");
    }

    #[test]
    fn specs_and_escapes() {
        let (f, warnings) = Format::parse(b"%-5d|%05d|%+d|x\\ty\\101%Q\\c tail");
        assert_eq!(warnings.len(), 1);
        let mut out = Vec::new();
        for piece in &f.pieces {
            match piece {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Field(spec, field) => apply_spec(spec, *field, b"1", &mut out),
                Piece::Stop => break,
            }
        }
        assert_eq!(out, b"1    |00001|+1|x\tyA%Q");
    }

    #[test]
    fn flags_and_widths_like_c_printf() {
        let render = |format: &[u8], value: &[u8]| {
            let (f, _) = Format::parse(format);
            let mut out = Vec::new();
            for piece in &f.pieces {
                match piece {
                    Piece::Text(t) => out.extend_from_slice(t),
                    Piece::Field(spec, field) => apply_spec(spec, *field, value, &mut out),
                    Piece::Stop => break,
                }
            }
            String::from_utf8(out).unwrap()
        };
        assert_eq!(render(b"%#m", b"755"), "0755");
        assert_eq!(render(b"%#m", b"0"), "0");
        assert_eq!(render(b"%#6m|%#06m|%-#6m|", b"755"), "  0755|000755|0755  |");
        assert_eq!(render(b"% d|% 04d|%+04d|%-+4d|", b"3"), " 3| 003|+003|+3  |");
        assert_eq!(render(b"%.2f|%5.2f|%-5.2f|%05f|", b"abc"), "ab|   ab|ab   |  abc|");
    }
}
