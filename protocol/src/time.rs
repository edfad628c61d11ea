//! Times as people read them, in UTC, shared by the gateway (`gateway devices list`) and the UI
//! (the export): no time zone database, no date crate.

/// `ms` since 1970-01-01 UTC as `(year, month, day, hour, minute, second)`.
pub fn civil(ms: i64) -> (i64, i64, i64, i64, i64, i64) {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rest / 3600, rest % 3600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::civil;

    #[test]
    fn a_moment_is_read_as_a_utc_date_and_time() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil(951_782_400_000), (2000, 2, 29, 0, 0, 0));
        assert_eq!(civil(1_796_220_562_166), (2026, 12, 2, 14, 9, 22));
        assert_eq!(civil(-1), (1969, 12, 31, 23, 59, 59));
    }
}
