//! Time tests (`-mtime`, `-mmin`, `-newer`…) exactly as GNU find computes them: a reference time is
//! derived when the expression is parsed and each file's time is compared with it.

use canopy_engine::Timestamp;

pub const DAY: i64 = 86_400;

/// Which timestamp of a file a test reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeField {
    Access,
    Change,
    Modify,
}

impl TimeField {
    pub fn from_letter(c: u8) -> Option<Self> {
        Some(match c {
            b'a' => TimeField::Access,
            b'c' => TimeField::Change,
            b'm' => TimeField::Modify,
            _ => return None,
        })
    }

    pub fn of(self, meta: &canopy_engine::Metadata) -> Timestamp {
        match self {
            TimeField::Access => meta.atime,
            TimeField::Change => meta.ctime,
            TimeField::Modify => meta.mtime,
        }
    }
}

/// A comparison against a reference time, in GNU's inverted sense (`+N` days ago means *before*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeWindow {
    Before(Timestamp),
    After(Timestamp),
    /// After `start` and no more than `length` seconds later.
    Within {
        start: Timestamp,
        length: i64,
    },
}

impl TimeWindow {
    pub fn contains(self, t: Timestamp) -> bool {
        match self {
            TimeWindow::Before(r) => t < r,
            TimeWindow::After(r) => t > r,
            TimeWindow::Within { start, length } => {
                let delta = nanos(t) - nanos(start);
                delta > 0 && delta <= i128::from(length) * 1_000_000_000
            }
        }
    }
}

fn nanos(t: Timestamp) -> i128 {
    i128::from(t.sec) * 1_000_000_000 + i128::from(t.nsec)
}

fn from_nanos(n: i128) -> Timestamp {
    Timestamp { sec: n.div_euclid(1_000_000_000) as i64, nsec: n.rem_euclid(1_000_000_000) as u32 }
}

/// The clock find's relative tests measure from: the start time minus a day, or with `-daystart`
/// the local midnight that began today.
#[derive(Clone, Copy, Debug)]
pub struct DayStart {
    pub origin: Timestamp,
    pub full_days: bool,
}

impl DayStart {
    pub fn new(start: Timestamp) -> Self {
        DayStart { origin: Timestamp { sec: start.sec - DAY, nsec: start.nsec }, full_days: false }
    }

    /// `-daystart` (only the first one counts).
    pub fn use_day_start(&mut self) {
        if self.full_days {
            return;
        }
        let today = self.origin.sec + DAY;
        self.origin = Timestamp { sec: today - seconds_since_local_midnight(today), nsec: 0 };
        self.full_days = true;
    }

    /// `-atime/-ctime/-mtime N` (units of days) or `-amin/-cmin/-mmin N` (minutes).
    pub fn window(&self, arg: &str, unit_secs: i64) -> Result<TimeWindow, String> {
        let (sign, number) = split_sign(arg);
        let amount: f64 = number.parse().map_err(|_| format!("invalid argument '{arg}'"))?;
        if !amount.is_finite() || !(0.0..=1e15).contains(&amount) {
            return Err(format!("invalid argument '{arg}'"));
        }
        let mut origin = nanos(self.origin);
        if unit_secs == DAY {
            if sign == b'-' {
                // "-N days" reaches to the end of today.
                origin += i128::from(DAY - 1) * 1_000_000_000;
            }
        } else {
            origin += i128::from(DAY) * 1_000_000_000;
        }
        let reference = from_nanos(origin - (amount * unit_secs as f64 * 1e9) as i128);
        Ok(match sign {
            b'+' => TimeWindow::Before(reference),
            b'-' => TimeWindow::After(reference),
            _ => TimeWindow::Within { start: reference, length: unit_secs },
        })
    }
}

fn split_sign(arg: &str) -> (u8, &str) {
    match arg.as_bytes().first() {
        Some(&c @ (b'+' | b'-')) => (c, &arg[1..]),
        _ => (0, arg),
    }
}

fn seconds_since_local_midnight(t: i64) -> i64 {
    match crate::clock::local_tm(t) {
        Some(tm) => i64::from(tm.tm_sec) + 60 * i64::from(tm.tm_min) + 3600 * i64::from(tm.tm_hour),
        None => t.rem_euclid(DAY),
    }
}

/// `-used N`: the file was last accessed N days after its status last changed, as GNU find 4.9
/// counts it (measured against it): with `x` = atime − ctime, `N` is `N-1 < x <= N` days, `+N`
/// is `x > N` days, `-N` is `x < N` days — and never a file accessed before its last change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsedWindow {
    sign: u8,
    limit_ns: i128,
}

impl UsedWindow {
    pub fn contains(self, meta: &canopy_engine::Metadata) -> bool {
        self.contains_times(meta.atime, meta.ctime)
    }

    fn contains_times(self, atime: Timestamp, ctime: Timestamp) -> bool {
        let x = nanos(atime) - nanos(ctime);
        let day = i128::from(DAY) * 1_000_000_000;
        x > 0
            && match self.sign {
                b'+' => x > self.limit_ns,
                b'-' => x < self.limit_ns,
                _ => x > self.limit_ns - day && x <= self.limit_ns,
            }
    }
}

/// Parses `-used`'s argument (`N`, `+N`, `-N`, N a decimal number of days).
pub fn used_window(arg: &str) -> Option<UsedWindow> {
    let (sign, number) = split_sign(arg);
    let days: f64 = number.parse().ok()?;
    if !days.is_finite() || !(0.0..=1e15).contains(&days) {
        return None;
    }
    Some(UsedWindow { sign, limit_ns: (days * DAY as f64 * 1e9) as i128 })
}

/// Parses the date of `-newerXt` as GNU find does (gnulib's `parse_datetime`, the parser of
/// `date -d`): `@SECONDS`, ISO dates, `Jun 1 2023`, `yesterday`, `1 day ago`, zones and offsets —
/// relative forms counted from `now`, in the local time zone (`TZ`).
pub fn parse_date(text: &str, now: Timestamp) -> Option<Timestamp> {
    let now = jiff::Timestamp::new(now.sec, now.nsec as i32).ok()?.to_zoned(jiff::tz::TimeZone::system());
    let parsed = parse_datetime::parse_datetime_at_date(now, text).ok()?;
    Some(Timestamp { sec: parsed.unix_epoch_second(), nsec: parsed.subsec_nanosecond() as u32 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Timestamp = Timestamp { sec: 1_000_000_000, nsec: 0 };

    fn ago(secs: i64) -> Timestamp {
        Timestamp { sec: NOW.sec - secs, nsec: 0 }
    }

    #[test]
    fn days_like_gnu() {
        let d = DayStart::new(NOW);
        // From GNU's observed behaviour: half a day old matches -mtime 0, 1.5 days matches 1 and +0.
        assert!(d.window("0", DAY).unwrap().contains(ago(DAY / 2)));
        assert!(!d.window("+0", DAY).unwrap().contains(ago(DAY / 2)));
        assert!(d.window("1", DAY).unwrap().contains(ago(DAY * 3 / 2)));
        assert!(d.window("+0", DAY).unwrap().contains(ago(DAY * 3 / 2)));
        assert!(!d.window("+1", DAY).unwrap().contains(ago(DAY * 3 / 2)));
        assert!(d.window("-1", DAY).unwrap().contains(ago(DAY / 2)));
        assert!(d.window("-1", DAY).unwrap().contains(Timestamp { sec: NOW.sec + 100, nsec: 0 }), "future");
    }

    #[test]
    fn minutes_like_gnu() {
        let d = DayStart::new(NOW);
        // 30 s old: -mmin 0 no, -mmin 1 yes, +0 yes, +1 no; 90 s old: +1 yes.
        assert!(!d.window("0", 60).unwrap().contains(ago(30)));
        assert!(d.window("1", 60).unwrap().contains(ago(30)));
        assert!(d.window("+0", 60).unwrap().contains(ago(30)));
        assert!(!d.window("+1", 60).unwrap().contains(ago(30)));
        assert!(d.window("+1", 60).unwrap().contains(ago(90)));
        assert!(d.window("-1", 60).unwrap().contains(ago(30)));
        assert!(d.window("x", 60).is_err());
    }

    #[test]
    fn dates_like_gnu_date() {
        let date = |text: &str| parse_date(text, NOW);
        assert_eq!(date("@1000.5"), Some(Timestamp { sec: 1000, nsec: 500_000_000 }));
        assert_eq!(date("1969-12-31T23:59:59Z"), Some(Timestamp { sec: -1, nsec: 0 }));
        assert_eq!(date("2001-09-09 01:46:40+00:00"), Some(NOW));
        assert_eq!(date("1 day ago"), Some(ago(DAY)));
        assert!(date("2024-02-03 10:20:30.25").is_some());
        assert!(date("yesterday").is_some());
        assert!(date("Jun 1 2023").is_some());
        assert!(date("not a date").is_none());
    }

    #[test]
    fn used_counts_days_from_change_to_access() {
        // Measured with GNU find 4.9: accessed 1 h and 23 h after the change are -used 1, 25 h and
        // 47 h are -used 2; +1 is beyond a day, -2 below two; accessed before the change, never.
        let accessed = |hours: i64| Timestamp { sec: NOW.sec + hours * 3600, nsec: 0 };
        let used = |arg: &str, hours: i64| used_window(arg).unwrap().contains_times(accessed(hours), NOW);
        assert!(used("1", 1) && used("1", 23) && !used("1", 25));
        assert!(used("2", 25) && used("2", 47) && !used("2", 49));
        assert!(used("+1", 25) && !used("+1", 23));
        assert!(used("-2", 47) && !used("-2", 49) && used("-1", 1));
        assert!(!used("0", -1) && !used("-1", -1) && !used("+0", -1));
        assert!(used_window("x").is_none());
    }
}
