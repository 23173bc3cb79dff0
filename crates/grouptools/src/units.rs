//! Numbers for people: sizes in binary units, durations, rates.

/// `n` scaled to its binary unit: the value and the unit's index (0 for bytes, 1 for Ki, ...).
fn scaled(n: f64) -> (f64, usize) {
    let mut value = n;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit + 1 < PREFIXES.len() {
        value /= 1024.0;
        unit += 1;
    }
    (value, unit)
}

const PREFIXES: [&str; 7] = ["", "K", "M", "G", "T", "P", "E"];

/// `1.5 MiB`, `512 B`: a byte count in binary units with one decimal.
pub fn bytes(n: f64) -> String {
    match scaled(n) {
        (value, 0) => format!("{value:.0} B"),
        (value, unit) => format!("{value:.1} {}iB", PREFIXES[unit]),
    }
}

/// `1.5M`, `512B`: top's compact form, for narrow columns.
pub fn compact_bytes(n: u64) -> String {
    match scaled(n as f64) {
        (_, 0) => format!("{n}B"),
        (value, unit) => format!("{value:.1}{}", PREFIXES[unit]),
    }
}

/// `2 d 3 h`, `5 h 12 min`, `3 min 4 s`, `0.42 s`: the two largest units of a duration.
pub fn duration(seconds: f64) -> String {
    if seconds < 60.0 {
        return if seconds < 10.0 { format!("{seconds:.2} s") } else { format!("{seconds:.0} s") };
    }
    let s = seconds as u64;
    let (days, hours, minutes) = (s / 86_400, s / 3600 % 24, s / 60 % 60);
    match (days, hours) {
        (0, 0) => format!("{minutes} min {} s", s % 60),
        (0, _) => format!("{hours} h {minutes} min"),
        _ => format!("{days} d {hours} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_read_naturally() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0 * 1024.0), "3.0 GiB");
        assert_eq!(compact_bytes(1023), "1023B");
        assert_eq!(compact_bytes(1 << 20), "1.0M");
        assert_eq!(duration(0.4234), "0.42 s");
        assert_eq!(duration(184.0), "3 min 4 s");
        assert_eq!(duration(5.0 * 3600.0 + 720.0), "5 h 12 min");
        assert_eq!(duration(2.0 * 86_400.0 + 3.0 * 3600.0 + 5.0), "2 d 3 h");
    }
}
