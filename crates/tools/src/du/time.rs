//! `--time[=WORD]` and `--time-style=STYLE`: which time stamp a line shows and how it is written —
//! GNU du's styles (`full-iso`, `long-iso`, `iso`, `+FORMAT` as `date` reads it, `TIME_STYLE`
//! from the environment), in the local time zone (`TZ`).

use super::usage::TimeField;
use canopy_engine::Timestamp;

/// `--time`'s words, as GNU du 9.1 accepts them (unambiguous abbreviations too).
const FIELDS: &[(&str, TimeField)] = &[
    ("atime", TimeField::Accessed),
    ("access", TimeField::Accessed),
    ("use", TimeField::Accessed),
    ("ctime", TimeField::Changed),
    ("status", TimeField::Changed),
];

const STYLES: &[(&str, &str)] =
    &[("full-iso", "%Y-%m-%d %H:%M:%S.%N %z"), ("long-iso", "%Y-%m-%d %H:%M"), ("iso", "%Y-%m-%d")];

/// The time stamp `--time=WORD` names (an empty word is the modification time).
pub fn time_field(word: &str) -> Result<TimeField, String> {
    if word.is_empty() {
        return Ok(TimeField::Modified);
    }
    argmatch(word, "--time", FIELDS)
}

/// How time stamps are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeFormat {
    /// strftime's format, with GNU's `%N` (nanoseconds) and `%:z` added.
    format: String,
}

impl TimeFormat {
    /// From `--time-style`, else `TIME_STYLE` (where `posix-` prefixes are dropped and `locale`
    /// means the default), else `long-iso`.
    pub fn new(style: Option<&str>) -> Result<TimeFormat, String> {
        let from_env = std::env::var("TIME_STYLE").ok();
        let style = match (style, from_env.as_deref()) {
            (Some(style), _) => style.to_string(),
            (None, None | Some("locale")) => "long-iso".to_string(),
            // A format from the environment ends at its first newline.
            (None, Some(env)) if env.starts_with('+') => env.split('\n').next().unwrap_or(env).to_string(),
            (None, Some(mut env)) => {
                while let Some(rest) = env.strip_prefix("posix-") {
                    env = rest;
                }
                env.to_string()
            }
        };
        let format = match style.strip_prefix('+') {
            Some(format) => format.to_string(),
            None => argmatch(&style, "time style", STYLES)?.to_string(),
        };
        Ok(TimeFormat { format })
    }

    /// `time` in the local time zone; the seconds alone if the C library cannot break it down.
    pub fn format(&self, time: Timestamp) -> String {
        match local_time(time.sec) {
            Some(tm) => self.format_broken_down(time, &tm),
            None => time.sec.to_string(),
        }
    }

    fn format_broken_down(&self, time: Timestamp, tm: &libc::tm) -> String {
        let mut out = String::new();
        let mut plain = String::new();
        let mut rest = self.format.as_str();
        while let Some(at) = rest.find('%') {
            plain.push_str(&rest[..at]);
            let spec_len = directive_len(&rest[at..]);
            let spec = &rest[at..at + spec_len];
            match gnu_directive(spec, time, tm) {
                Some(text) => {
                    out.push_str(&strftime(&plain, tm));
                    plain.clear();
                    out.push_str(&text);
                }
                None => plain.push_str(spec),
            }
            rest = &rest[at + spec_len..];
        }
        plain.push_str(rest);
        out.push_str(&strftime(&plain, tm));
        out
    }
}

/// The length of the `%` directive at the start of `s`: flags, width, colons, conversion.
fn directive_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() && (b"_-0^#".contains(&bytes[i]) || bytes[i].is_ascii_digit() || bytes[i] == b':') {
        i += 1;
    }
    // The conversion character (a whole UTF-8 character), if any.
    i + s[i..].chars().next().map_or(0, char::len_utf8)
}

/// What the C library's strftime lacks: `%N` (nanoseconds; `%3N` the first three digits) and
/// `%:z` `%::z` `%:::z` (the offset with colons).
fn gnu_directive(spec: &str, time: Timestamp, tm: &libc::tm) -> Option<String> {
    let body = &spec[1..];
    if let Some(width) = body.strip_suffix('N') {
        let digits = width.trim_start_matches(['_', '-', '0', '^', '#']);
        let width = if digits.is_empty() { 9 } else { digits.parse::<usize>().ok()?.clamp(1, 9) };
        return Some(format!("{:09}", time.nsec)[..width].to_string());
    }
    let colons = body.strip_suffix('z')?.len();
    if colons == 0 || body[..colons].bytes().any(|b| b != b':') {
        return None;
    }
    let offset = tm.tm_gmtoff;
    let sign = if offset < 0 { '-' } else { '+' };
    let (h, m, s) = (offset.abs() / 3600, offset.abs() / 60 % 60, offset.abs() % 60);
    Some(match colons {
        1 => format!("{sign}{h:02}:{m:02}"),
        2 => format!("{sign}{h:02}:{m:02}:{s:02}"),
        _ if s != 0 => format!("{sign}{h:02}:{m:02}:{s:02}"),
        _ if m != 0 => format!("{sign}{h:02}:{m:02}"),
        _ => format!("{sign}{h:02}"),
    })
}

unsafe extern "C" {
    /// Reads `TZ` (the libc crate does not declare it).
    fn tzset();
}

fn local_time(sec: i64) -> Option<libc::tm> {
    // SAFETY: tzset reads TZ; localtime_r fills the tm it is given and returns null on failure.
    unsafe {
        tzset();
        let mut tm: libc::tm = std::mem::zeroed();
        let t: libc::time_t = sec;
        (!libc::localtime_r(&t, &mut tm).is_null()).then_some(tm)
    }
}

fn strftime(format: &str, tm: &libc::tm) -> String {
    if format.is_empty() {
        return String::new();
    }
    // A leading space tells an empty result from a buffer too small.
    let Ok(format) = std::ffi::CString::new(format!(" {format}")) else { return String::new() };
    let mut size = 256;
    loop {
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer is valid for `size` bytes; strftime writes at most that many.
        let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), size, format.as_ptr(), tm) };
        if n > 0 {
            return String::from_utf8_lossy(&buf[1..n]).into_owned();
        }
        if size > 1 << 16 {
            return String::new();
        }
        size *= 4;
    }
}

/// gnulib's argmatch: an exact word, or an abbreviation that names one value.
fn argmatch<T: Copy + PartialEq>(arg: &str, option: &str, table: &[(&str, T)]) -> Result<T, String> {
    if let Some((_, value)) = table.iter().find(|(word, _)| *word == arg) {
        return Ok(*value);
    }
    let matches: Vec<T> = table.iter().filter(|(word, _)| word.starts_with(arg)).map(|(_, v)| *v).collect();
    let problem = match matches.first() {
        Some(first) if matches.iter().all(|v| v == first) => return Ok(*first),
        Some(_) => "ambiguous",
        None => "invalid",
    };
    let mut message = format!("{problem} argument '{arg}' for '{option}'\nValid arguments are:");
    let mut index = 0;
    while index < table.len() {
        let value = table[index].1;
        let synonyms: Vec<String> =
            table[index..].iter().take_while(|(_, v)| *v == value).map(|(w, _)| format!("'{w}'")).collect();
        index += synonyms.len();
        message.push_str(&format!("\n  - {}", synonyms.join(", ")));
    }
    Err(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sec: i64, nsec: u32) -> Timestamp {
        Timestamp { sec, nsec }
    }

    fn utc(sec: i64) -> libc::tm {
        // SAFETY: gmtime_r fills the tm it is given.
        unsafe {
            let mut tm: libc::tm = std::mem::zeroed();
            assert!(!libc::gmtime_r(&sec, &mut tm).is_null());
            tm
        }
    }

    #[test]
    fn styles_write_what_gnu_du_writes() {
        let t = at(1_700_000_000, 123_456_789);
        let show = |style: &str| TimeFormat::new(Some(style)).unwrap().format_broken_down(t, &utc(t.sec));
        assert_eq!(show("long-iso"), "2023-11-14 22:13");
        assert_eq!(show("iso"), "2023-11-14");
        assert_eq!(show("full-iso"), "2023-11-14 22:13:20.123456789 +0000");
        assert_eq!(show("+%s.%N"), "1700000000.123456789");
        assert_eq!(show("+%3N|%:z|%::z|%:::z|%%N|%j"), "123|+00:00|+00:00:00|+00|%N|318");
        assert_eq!(show("full"), show("full-iso"), "abbreviations");
        assert_eq!(show("+"), "");
    }

    #[test]
    fn words_and_styles_are_checked_like_argmatch() {
        assert_eq!(time_field("").unwrap(), TimeField::Modified);
        assert_eq!(time_field("use").unwrap(), TimeField::Accessed);
        assert_eq!(time_field("a").unwrap(), TimeField::Accessed, "atime and access agree");
        assert_eq!(time_field("st").unwrap(), TimeField::Changed);
        let bad = time_field("bad").unwrap_err();
        assert_eq!(
            bad,
            "invalid argument 'bad' for '--time'\nValid arguments are:\n  - 'atime', 'access', 'use'\n  - 'ctime', 'status'"
        );
        assert!(
            TimeFormat::new(Some("bad")).unwrap_err().starts_with("invalid argument 'bad' for 'time style'")
        );
        assert!(TimeFormat::new(Some("")).unwrap_err().starts_with("ambiguous argument '' for 'time style'"));
    }
}
