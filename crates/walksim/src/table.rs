//! The results as a Markdown table, one row per (ranks, scheduler), with ratios against CP's row of
//! the same rank count when there is one.

use crate::outcome::Outcome;
use std::fmt::Write;

pub fn markdown(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| N | scheduler | time | vs cp | messages | cp/msgs | bytes | cp/bytes | requests fruitful/sent | offers | entries max/min | histogram | stop after work | hottest rank | threads |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let cp = outcomes.iter().find(|c| c.sched == "cp" && c.ranks == o.ranks && c.tree == o.tree);
        let ratio = |f: fn(&Outcome) -> f64| match cp {
            Some(cp) if f(o) > 0.0 => format!("{:.1}×", f(cp) / f(o)),
            Some(_) => "∞".to_string(),
            None => "–".to_string(),
        };
        let histogram: Vec<String> = o.histogram.iter().map(u32::to_string).collect();
        if o.flooded {
            let _ = writeln!(
                out,
                "| {} | {} | stopped at {} after {} messages | | | | | | | | | | | | |",
                o.ranks,
                o.sched,
                seconds(o.time),
                thousands(o.messages)
            );
            continue;
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {}/{} | {} | {} | {} | {} | {:.0} % | {} |",
            o.ranks,
            o.sched,
            seconds(o.time),
            ratio(|c| c.time),
            thousands(o.messages),
            ratio(|c| c.messages as f64),
            thousands(o.bytes),
            ratio(|c| c.bytes as f64),
            thousands(o.requests_fruitful),
            thousands(o.requests_sent),
            thousands(o.offers),
            if o.balance.is_finite() { format!("{:.2}", o.balance) } else { "∞".to_string() },
            histogram.join("·"),
            seconds(o.termination_latency),
            o.hottest_share * 100.0,
            o.max_threads,
        );
    }
    out
}

/// `12.3 ms`, `1.23 s`.
pub fn seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_easily() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(100), "100");
        assert_eq!(seconds(0.000_25), "250 µs");
        assert_eq!(seconds(0.0123), "12.3 ms");
        assert_eq!(seconds(2.5), "2.50 s");
    }
}
