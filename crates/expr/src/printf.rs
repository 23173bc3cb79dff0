//! `-printf` formats: parsed once, rendered per entry with GNU find's directives, flags, widths,
//! precisions and backslash escapes.

use crate::clock::{local_tm, strftime};
use crate::fstype::fs_type_name;
use crate::ids::{group_name, user_name};
use canopy_engine::{Entry, Errno, FileKind, Metadata, Timestamp};

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

#[derive(Clone, Copy, Debug, Default)]
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

    /// Appends the rendering for `entry` to `out`. A failed stat ends the rendering; a missing security context (`%Z`) renders empty,
    /// as in GNU find, and is reported after the whole line.
    pub fn render<D>(&self, entry: &Entry<'_, D>, out: &mut Vec<u8>) -> Result<(), RenderError> {
        let mut path = Vec::new();
        let mut context_error = None;
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Stop => break,
                Piece::Field(spec, field) => {
                    if path.is_empty() {
                        entry.write_path(&mut path);
                    }
                    let value = if *field == Field::Context {
                        security_context(entry).unwrap_or_else(|errno| {
                            context_error = Some(errno);
                            Vec::new()
                        })
                    } else {
                        field_value(*field, entry, &path).map_err(RenderError::Stat)?
                    };
                    apply_spec(spec, *field, &value, out);
                }
            }
        }
        context_error.map_or(Ok(()), |errno| Err(RenderError::Context(errno)))
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

fn field_value<D>(field: Field, entry: &Entry<'_, D>, path: &[u8]) -> Result<Vec<u8>, Errno> {
    let meta = || entry.metadata().copied();
    Ok(match field {
        Field::Path => path.to_vec(),
        Field::Name => {
            if entry.is_root() {
                base_name(path).to_vec()
            } else {
                entry.file_name().to_vec()
            }
        }
        Field::Dir => leading_dirs(path).to_vec(),
        Field::RelPath => entry.relative_path(),
        Field::StartPoint => entry.start_point().to_vec(),
        Field::Depth => entry.depth().to_string().into_bytes(),
        Field::Size => meta()?.size.to_string().into_bytes(),
        Field::Blocks => meta()?.blocks.to_string().into_bytes(),
        Field::KBlocks => (meta()?.blocks * 512).div_ceil(1024).to_string().into_bytes(),
        Field::Sparseness => {
            let m = meta()?;
            let ratio = if m.size == 0 { 1.0 } else { (m.blocks * 512) as f64 / m.size as f64 };
            format_g(ratio).into_bytes()
        }
        Field::ModeOctal => format!("{:o}", meta()?.mode & 0o7777).into_bytes(),
        Field::ModeString => mode_string(meta()?.mode).into_bytes(),
        Field::Links => meta()?.nlink.to_string().into_bytes(),
        Field::Inode => meta()?.ino.to_string().into_bytes(),
        Field::Device => meta()?.dev.to_string().into_bytes(),
        Field::Uid => meta()?.uid.to_string().into_bytes(),
        Field::Gid => meta()?.gid.to_string().into_bytes(),
        Field::User => {
            let uid = meta()?.uid;
            user_name(uid).unwrap_or_else(|| uid.to_string().into_bytes())
        }
        Field::Group => {
            let gid = meta()?.gid;
            group_name(gid).unwrap_or_else(|| gid.to_string().into_bytes())
        }
        Field::Kind => vec![kind_letter(entry.kind())],
        Field::KindFollowed => vec![followed_kind_letter(entry)],
        Field::LinkTarget => {
            // Like GNU: only what the entry's own stat (following links under -L) sees as a link.
            if entry.metadata().is_ok_and(|m| m.kind() == FileKind::Symlink) {
                read_link(entry).unwrap_or_default()
            } else {
                Vec::new()
            }
        }
        Field::FsType => fs_type_name(meta()?.dev),
        Field::Context => security_context(entry)?,
        Field::CTime(of) => ctime_with_nanos(time_of(&meta()?, of)),
        Field::Time(of, k) => format_time(time_of(&meta()?, of), k),
        Field::Birth => Vec::new(),
    })
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
    let mut body = value.to_vec();
    if numeric {
        if field == Field::ModeOctal && spec.alternate && body != b"0" {
            body.insert(0, b'0');
        }
        if field == Field::Depth && spec.plus {
            body.insert(0, b'+');
        } else if field == Field::Depth && spec.space {
            body.insert(0, b' ');
        }
    } else if let Some(p) = spec.precision {
        body.truncate(p);
    }
    let width = spec.width.unwrap_or(0);
    let pad = width.saturating_sub(body.len());
    if spec.left {
        out.extend_from_slice(&body);
        out.extend(std::iter::repeat_n(b' ', pad));
    } else if spec.zero && numeric {
        let sign = usize::from(body.first().is_some_and(|b| matches!(b, b'+' | b' ' | b'-')));
        out.extend_from_slice(&body[..sign]);
        out.extend(std::iter::repeat_n(b'0', pad));
        out.extend_from_slice(&body[sign..]);
    } else {
        out.extend(std::iter::repeat_n(b' ', pad));
        out.extend_from_slice(&body);
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
}
