//! The human-readable rendering of a [`SummaryDocument`].

use super::document::{Owner, SummaryDocument};
use super::totals::Totals;
use crate::common::records::EncodedPath;
use std::fmt::Write;

const DAY_SECS: i64 = 86_400;
const YEAR_SECS: i64 = 365 * DAY_SECS;

pub fn render(r: &SummaryDocument) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "{} entries, {} apparent ({} bytes), {} allocated",
        grouped(r.totals.entries),
        bytes(r.totals.apparent_bytes),
        grouped(r.totals.apparent_bytes),
        bytes(r.totals.allocated_bytes),
    );
    let _ = writeln!(
        w,
        "{} errors, {:.2} s, {} entries/s, {} threads",
        grouped(r.errors),
        r.elapsed_secs,
        grouped(r.entries_per_sec as u64),
        r.threads
    );

    table_header(w, "type", "entries");
    for (name, t) in r.by_type.iter() {
        if t.entries > 0 {
            totals_row(w, name, t);
        }
    }

    table_header(w, "file size", "files");
    for b in &r.file_sizes {
        let label = match (b.min_bytes, b.max_bytes) {
            (0, 0) => "empty".to_string(),
            (1, 1) => "1 B".to_string(),
            (low, high) => format!("{} – {}", bytes(low), bytes(high.saturating_add(1))),
        };
        totals_row(w, &label, &b.totals);
    }

    table_header(w, "file age (mtime)", "files");
    for b in &r.file_ages {
        let label = match (b.min_age_secs, b.max_age_secs) {
            (None, _) => "future".to_string(),
            (Some(0), Some(max)) => format!("< {}", age(max)),
            (Some(min), Some(max)) => format!("{} – {}", age(min), age(max)),
            (Some(min), None) => format!("≥ {}", age(min)),
        };
        totals_row(w, &label, &b.totals);
    }

    owners(w, "users by allocated bytes", &r.users.by_allocated_bytes);
    owners(w, "users by entries", &r.users.by_entries);
    owners(w, "groups by allocated bytes", &r.groups.by_allocated_bytes);
    owners(w, "groups by entries", &r.groups.by_entries);

    if !r.largest_files.is_empty() {
        let _ = writeln!(w, "\nlargest files");
        for f in &r.largest_files {
            let _ = writeln!(w, "  {:>12}  {}", bytes(f.size), shown(&f.path));
        }
    }
    if !r.widest_dirs.is_empty() {
        let _ = writeln!(w, "\nwidest directories (entries)");
        for d in &r.widest_dirs {
            let _ = writeln!(w, "  {:>12}  {}", grouped(d.entries), shown(&d.path));
        }
    }
    if let Some(d) = &r.deepest {
        let _ = writeln!(w, "\ndeepest (depth {})\n  {}", d.depth, shown(&d.path));
    }
    if let Some(rec) = &r.records {
        let _ = writeln!(
            w,
            "\n{} records written to {} ({})",
            grouped(rec.records),
            shown(&rec.path),
            rec.format
        );
    }
    out
}

fn table_header(w: &mut String, what: &str, count: &str) {
    let _ = writeln!(w, "\n{what:<26} {count:>14} {:>12} {:>12}", "apparent", "allocated");
}

fn totals_row(w: &mut String, label: &str, t: &Totals) {
    let _ = writeln!(
        w,
        "  {label:<24} {:>14} {:>12} {:>12}",
        grouped(t.entries),
        bytes(t.apparent_bytes),
        bytes(t.allocated_bytes)
    );
}

fn owners(w: &mut String, title: &str, list: &[Owner]) {
    if list.is_empty() {
        return;
    }
    table_header(w, title, "entries");
    for o in list {
        let label = match &o.name {
            Some(name) => format!("{name} ({})", o.id),
            None => o.id.to_string(),
        };
        totals_row(w, &label, &o.totals);
    }
}

/// A path for a terminal: control characters (newlines in names…) escaped, invalid UTF-8 as U+FFFD.
fn shown(path: &EncodedPath) -> String {
    let mut out = String::with_capacity(path.path.len());
    for c in path.path.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// Binary units: `512 B`, `1.5 KiB`, `3 GiB` (whole numbers when exact).
fn bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `1 day`, `30 days`, `1 year`, `3 years`.
fn age(secs: i64) -> String {
    let (n, unit) = if secs % YEAR_SECS == 0 { (secs / YEAR_SECS, "year") } else { (secs / DAY_SECS, "day") };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(2048), "2 KiB");
        assert_eq!(bytes(1_000_000), "976.6 KiB");
        assert_eq!(bytes(u64::MAX), "16 EiB");
        assert_eq!(age(DAY_SECS), "1 day");
        assert_eq!(age(90 * DAY_SECS), "90 days");
        assert_eq!(age(3 * YEAR_SECS), "3 years");
        assert_eq!(shown(&EncodedPath::new(b"a\nb\xff")), "a\\nb\u{fffd}");
    }
}
