//! Strip rules: what is removed from a line before lines from different hosts are compared, so that the
//! same event logged on many hosts is one line. A rule is a regular expression; its first match is
//! removed, or only its first capture group when it has one.

use regex::bytes::Regex;

/// The syslog rules: a leading timestamp (`Nov 24 10:00:01` or RFC 3339) with the hostname after it, and
/// the process id in `program[pid]:`.
pub const SYSLOG: [&str; 2] = [
    r"^(?:[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?) \S+ ",
    r"^[^\s\[]+(\[\d+\]):",
];

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
    fn syslog_rules_remove_timestamp_host_and_pid() {
        let strip = Strip::new(&SYSLOG).unwrap();
        assert_eq!(
            strip.apply(b"Nov 24 10:00:01 node17 sshd[4121]: Failed password"),
            b"sshd: Failed password"
        );
        assert_eq!(strip.apply(b"Nov  4 09:01:02 n1 kernel: Out of memory"), b"kernel: Out of memory");
        assert_eq!(strip.apply(b"2026-11-24T10:00:01.123+00:00 node3 cron[77]: job done"), b"cron: job done");
        assert_eq!(strip.apply(b"no syslog here [12]: x"), b"no syslog here [12]: x");
        let custom = Strip::new(&[r"req=(\d+)"]).unwrap();
        assert_eq!(custom.apply(b"GET / req=991 ok"), b"GET / req= ok");
        assert!(Strip::new(&["("]).unwrap_err().contains("bad --strip"));
    }
}
