//! Durations on the command line: `500us`, `0.5ms`, `2ms`, `1s`, `0`.

use std::time::Duration;

/// Parses a duration with a unit (`ns`, `us`/`µs`, `ms`, `s`); a bare `0` needs none.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("'{text}' needs a unit: ns, us, ms or s (e.g. 500us)"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 =
        number.parse().map_err(|_| format!("'{text}' is not a duration (e.g. 500us, 2ms, 0)"))?;
    let nanos_per_unit = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(format!("'{unit}' is not a unit: use ns, us, ms or s")),
    };
    let nanos = value * nanos_per_unit;
    if !nanos.is_finite() || nanos > u64::MAX as f64 {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

/// Prints a duration the way it is typed: `500us`, `2ms`, `1.5s`, `0`.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    match nanos {
        0 => "0".to_string(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n if n < 1_000 => format!("{n}ns"),
        n => format!("{}us", n as f64 / 1e3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("500µs"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("0.5ms"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("2ms"), Ok(Duration::from_millis(2)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("750ns"), Ok(Duration::from_nanos(750)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0ms"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_missing_or_unknown_units() {
        assert!(parse_duration("500").is_err());
        assert!(parse_duration("5m").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("1.2.3ms").is_err());
        assert!(parse_duration("-1ms").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for text in ["0", "500us", "2ms", "1s", "750ns", "1.5us"] {
            let parsed = parse_duration(text).unwrap();
            assert_eq!(parse_duration(&format_duration(parsed)), Ok(parsed), "{text}");
        }
        assert_eq!(format_duration(Duration::from_micros(500)), "500us");
    }
}
