//! Strip rules: what is removed from a line before lines from different hosts are compared, so that the
//! same event logged on many hosts is one line. A rule is a regular expression; its first match is
//! removed, or only its first capture group when it has one.

use regex::bytes::Regex;

/// A leading timestamp: syslog's `Nov 24 10:00:01` or RFC 3339's `2026-11-24T10:00:01.123+00:00`.
macro_rules! time {
    () => {
        r"(?:[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    };
}

/// The syslog rules: the hostname after a leading timestamp, and the process id in `program[pid]:`. The
/// timestamp itself is set aside by [`cut_time`] (or kept with `--no-strip-time`).
pub const SYSLOG: [&str; 2] =
    [concat!("^", time!(), r" (\S+ )"), concat!("^(?:", time!(), r" )?[^\s\[]+(\[\d+\]):")];

static LEADING_TIME: std::sync::LazyLock<Regex> =
    std::sync::LazyLock::new(|| Regex::new(concat!("^(", time!(), ") ")).expect("a valid regex"));

/// Splits a leading timestamp off `line`: `(Some(time), rest)`, or `(None, line)` when it has none.
pub fn cut_time(line: &[u8]) -> (Option<&[u8]>, &[u8]) {
    match LEADING_TIME.captures(line) {
        Some(caps) => {
            let time = caps.get(1).expect("group 1 is the timestamp");
            (Some(time.as_bytes()), &line[caps.get(0).expect("the match").end()..])
        }
        None => (None, line),
    }
}

/// A timestamp's place in time, for keeping the earliest of a merged line's: syslog's `Mmm dd hh:mm:ss`
/// (no year) as month, day and time; RFC 3339's as its date, time and fraction (within one offset).
pub fn time_order(time: &[u8]) -> (u8, Vec<u8>) {
    const MONTHS: [&[u8]; 12] =
        [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];
    match MONTHS.iter().position(|m| time.starts_with(m)) {
        Some(month) => {
            let day = time.get(4..6).unwrap_or_default().trim_ascii_start();
            let key = format!(
                "{month:02}{:0>2}{}",
                String::from_utf8_lossy(day),
                String::from_utf8_lossy(&time[6..])
            );
            (0, key.into_bytes())
        }
        None => {
            // `YYYY-MM-DDThh:mm:ss` and the fraction's digits; the offset is left out.
            let (seconds, rest) = time.split_at(time.len().min(19));
            let fraction = rest.strip_prefix(b".").unwrap_or_default();
            let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
            (1, [seconds, &fraction[..digits]].concat())
        }
    }
}

/// Compiled strip rules.
#[derive(Clone, Debug)]
pub struct Strip {
    rules: Vec<Regex>,
}

impl Strip {
    /// Compiles `rules`; the error names the rule that does not compile.
    pub fn new<S: AsRef<str>>(rules: &[S]) -> Result<Strip, String> {
        let rules = rules
            .iter()
            .map(|r| Regex::new(r.as_ref()).map_err(|e| format!("bad --strip {:?}: {e}", r.as_ref())))
            .collect::<Result<_, _>>()?;
        Ok(Strip { rules })
    }

    /// `line` with every rule applied in order.
    pub fn apply(&self, line: &[u8]) -> Vec<u8> {
        let mut line = line.to_vec();
        for rule in &self.rules {
            let Some(caps) = rule.captures(&line) else { continue };
            let span = caps.get(1).or_else(|| caps.get(0)).expect("group 0 always matches");
            line.drain(span.start()..span.end());
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syslog_rules_remove_host_and_pid_and_the_timestamp_is_cut_apart() {
        let strip = Strip::new(&SYSLOG).unwrap();
        let stripped = strip.apply(b"Nov 24 10:00:01 node17 sshd[4121]: Failed password");
        assert_eq!(stripped, b"Nov 24 10:00:01 sshd: Failed password");
        assert_eq!(cut_time(&stripped), (Some(&b"Nov 24 10:00:01"[..]), &b"sshd: Failed password"[..]));
        assert_eq!(
            strip.apply(b"Nov  4 09:01:02 n1 kernel: Out of memory"),
            b"Nov  4 09:01:02 kernel: Out of memory"
        );
        let iso = strip.apply(b"2026-11-24T10:00:01.123+00:00 node3 cron[77]: job done");
        assert_eq!(cut_time(&iso), (Some(&b"2026-11-24T10:00:01.123+00:00"[..]), &b"cron: job done"[..]));
        assert_eq!(strip.apply(b"no syslog here [12]: x"), b"no syslog here [12]: x");
        assert_eq!(cut_time(b"no syslog here"), (None, &b"no syslog here"[..]));
        let custom = Strip::new(&[r"req=(\d+)"]).unwrap();
        assert_eq!(custom.apply(b"GET / req=991 ok"), b"GET / req= ok");
        assert!(Strip::new(&["("]).unwrap_err().contains("bad --strip"));
    }

    #[test]
    fn earlier_times_order_first() {
        assert!(time_order(b"Nov  4 09:01:02") < time_order(b"Nov 24 09:01:01"));
        assert!(time_order(b"Feb 24 09:01:01") < time_order(b"Nov  4 09:01:02"));
        assert!(time_order(b"Nov 24 10:00:01") < time_order(b"Nov 24 10:00:02"));
        assert!(time_order(b"2026-11-24T10:00:01Z") < time_order(b"2026-11-24T10:00:01.5Z"));
    }
}
