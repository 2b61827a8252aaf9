//! Parsing and printing of the quantities given on the command line: byte
//! sizes (`4KiB`, `16MiB`, `1MB`) and durations (`10s`, `500ms`, `2m`).
//!
//! Sizes follow warp's conventions: `KiB`/`Ki` are powers of 1024 and
//! `KB`/`K` powers of 1000, so `--obj-size 4KiB` means the same to both tools.

use std::time::Duration;

/// Parses a byte size: a whole number with an optional unit, case-insensitive.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    if digits.is_empty() {
        return Err(format!(
            "{text:?} is not a size: expected e.g. 4KiB or 16MiB"
        ));
    }
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is too large"))?;
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "ki" | "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mi" | "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gi" | "gib" => 1 << 30,
        other => return Err(format!("unknown size unit {other:?} in {text:?}")),
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Parses a duration: a whole number with `ms`, `s`, `m` or `h`; a bare
/// number means seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: expected e.g. 10s or 2m"))?;
    let millis_per_unit: u64 = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        other => return Err(format!("unknown duration unit {other:?} in {text:?}")),
    };
    number
        .checked_mul(millis_per_unit)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("{text:?} is too long"))
}

/// Prints a byte count in the largest binary unit that keeps it at least 1.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal_units() {
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kib"), Ok(4096));
        assert_eq!(parse_size("4Ki"), Ok(4096));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("4k"), Ok(4000));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("5 MiB"), Ok(5 << 20));
        assert_eq!(parse_size("1234"), Ok(1234));
        assert_eq!(parse_size("0B"), Ok(0));
    }

    #[test]
    fn bad_sizes_are_refused() {
        for bad in [
            "",
            "KiB",
            "4 KiBs",
            "4TB",
            "-1",
            "1.5MiB",
            "99999999999999999999",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
        assert!(parse_size("18446744073709551615GiB").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        for bad in ["", "s", "10x", "1.5s", "-3s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1536), "1.5 KiB");
        assert_eq!(format_size(16 << 20), "16 MiB");
        assert_eq!(format_size(3 << 30), "3 GiB");
    }
}
