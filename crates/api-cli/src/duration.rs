//! Durations on the command line: `500ms`, `90s`, `5m`, `1h`, `1m30s`; a bare number is seconds.

use std::time::Duration;

use api_mgmt::declared::MIN_LEASE_TTL;

/// The longest wait accepted: a day.
const MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// Parses a duration such as `90s`, `5m` or `1m30s`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let invalid = || format!("invalid duration {text:?}: use e.g. 500ms, 90s, 5m, 1h or 1m30s");
    if text.is_empty() {
        return Err(invalid());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        let seconds: u64 = text.parse().map_err(|_| invalid())?;
        return check(Duration::from_secs(seconds), text);
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(invalid());
        }
        let amount: u64 = rest[..digits].parse().map_err(|_| invalid())?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let part = match &rest[..unit_len] {
            "ms" => Duration::from_millis(amount),
            "s" => Duration::from_secs(amount),
            "m" => Duration::from_secs(amount.saturating_mul(60)),
            "h" => Duration::from_secs(amount.saturating_mul(3600)),
            _ => return Err(invalid()),
        };
        rest = &rest[unit_len..];
        total = total.saturating_add(part);
    }
    check(total, text)
}

/// Parses a shared store's lease TTL: a duration of at least [`MIN_LEASE_TTL`], since each
/// renewal attempt must end within a third of it.
pub(crate) fn parse_lease_ttl(text: &str) -> Result<Duration, String> {
    let ttl = parse_duration(text)?;
    if ttl < MIN_LEASE_TTL {
        return Err(format!(
            "invalid lease TTL {:?}: at least {}s (each renewal attempt, connecting to the store \
             included, must end within a third of it)",
            text.trim(),
            MIN_LEASE_TTL.as_secs()
        ));
    }
    Ok(ttl)
}

/// Parses a wait's first pause between two polls: from 10 ms (a local emulator) to 5 minutes.
pub(crate) fn parse_poll_interval(text: &str) -> Result<Duration, String> {
    let interval = parse_duration(text)?;
    if !(MIN_POLL_INTERVAL..=MAX_POLL_INTERVAL).contains(&interval) {
        return Err(format!(
            "invalid poll interval {:?}: from 10ms to 5m",
            text.trim()
        ));
    }
    Ok(interval)
}

/// The shortest first pause of a wait.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);

/// The longest first pause of a wait.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(300);

fn check(duration: Duration, text: &str) -> Result<Duration, String> {
    if duration.is_zero() {
        return Err(format!(
            "invalid duration {text:?}: must be longer than zero"
        ));
    }
    if duration > MAX {
        return Err(format!("invalid duration {text:?}: at most 24h"));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_ttl_under_a_second_is_refused() {
        assert_eq!(parse_lease_ttl("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_lease_ttl("1500ms"), Ok(Duration::from_millis(1500)));
        let refused = parse_lease_ttl("999ms").unwrap_err();
        assert!(refused.contains("\"999ms\": at least 1s"), "{refused}");
        assert!(
            parse_lease_ttl("0")
                .unwrap_err()
                .contains("longer than zero")
        );
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        for bad in [
            "",
            "s",
            "5x",
            "-5s",
            "1.5s",
            "0s",
            "25h",
            "99999999999999999999s",
            "5 m",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
