//! Times as the store writes them: RFC 3339 in UTC with milliseconds and a `Z`, so that
//! text order is time order.

use chrono::{DateTime, SecondsFormat, Utc};

/// The stored text of `time`.
pub fn time_text(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The first instant of the calendar month (UTC) that `time` falls in.
pub fn start_of_month(time: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::{Datelike as _, TimeZone as _};
    Utc.with_ymd_and_hms(time.year(), time.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone as _;

    #[test]
    fn stored_times_sort_as_text() {
        let earlier = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
        let later = earlier + chrono::Duration::milliseconds(1);
        assert_eq!(time_text(earlier), "2026-01-02T03:04:05.000Z");
        assert!(time_text(earlier) < time_text(later));
    }

    #[test]
    fn month_starts_at_midnight_on_the_first() {
        let time = Utc.with_ymd_and_hms(2026, 11, 30, 23, 59, 59).unwrap();
        assert_eq!(time_text(start_of_month(time)), "2026-11-01T00:00:00.000Z");
    }
}
