//! What is retried, and how long to wait first: pure rules, no FFI (the
//! transport applies them; `docs/requests.md` explains them).

/// Is a request answered with HTTP `status` worth sending again?
///
/// - 408 Request Timeout: the server gave up waiting for the request (a
///   slow link); the same request on a new connection usually gets through.
/// - 429 Too Many Requests: a rate limit; it passes (the server often says
///   when, see [`retry_after_ms`] and [`retry_after`]).
/// - 5xx: the server or a gateway in front of it failed (500, 502, 503, 504,
///   and providers' own such as 529 "overloaded"); transient by nature.
///
/// Every other status is an answer about the request itself (400 malformed,
/// 401/403 key, 404 URL, 413 too large, 422 ...): sent again it would fail
/// again, so it is reported at once. So are 1xx and 3xx, which webclient
/// hands over as they are.
pub fn retryable_status(status: i32) -> bool {
    status == 408 || status == 429 || (500..600).contains(&status)
}

/// The longest wait of our own between two attempts, whatever the base and
/// the count (a server's Retry-After is bounded by the deadline only).
pub const MAX_BACKOFF_MS: u32 = 60_000;

/// What a failed attempt leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Report the failure.
    GiveUp,
    /// Report it: the wait before a retry (ms) would pass the deadline.
    PastDeadline(u32),
    /// Wait this many ms, then send the request again.
    RetryIn(u32),
}

/// One failed attempt of a request, as the retry rule sees it.
#[derive(Clone, Copy, Debug)]
pub struct Failed {
    /// The failure is worth another attempt (see [`retryable_status`]).
    pub retryable: bool,
    /// Attempts made before this one (0 for the first).
    pub attempt: u32,
    /// Some of the answer reached the caller: sent again, it would be
    /// delivered twice.
    pub delivered: bool,
    /// The server's own wait (`retry-after-ms` or `Retry-After`).
    pub retry_after_ms: Option<u32>,
}

/// After `failed`: give up, or wait and retry. At most `retries` retries;
/// the wait is the server's, else `base_ms` doubled per retry (at most
/// [`MAX_BACKOFF_MS`]); a wait that is not shorter than `remaining_ms`, the
/// time left before the request's deadline, is not made.
pub fn next(failed: Failed, retries: u32, base_ms: u32, remaining_ms: u32) -> Next {
    if !failed.retryable || failed.attempt >= retries || failed.delivered {
        return Next::GiveUp;
    }
    let backoff = base_ms
        .saturating_mul(1u32 << failed.attempt.min(16))
        .min(MAX_BACKOFF_MS);
    let wait = failed.retry_after_ms.unwrap_or(backoff);
    if wait >= remaining_ms {
        Next::PastDeadline(wait)
    } else {
        Next::RetryIn(wait)
    }
}

/// Strip leading and trailing blanks (webclient keeps trailing ones).
pub fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    b.get(start..end.max(start)).unwrap_or_default()
}

/// Leading decimal digits as a number, saturating; `None` without digits.
///
/// All of this file's arithmetic is `u32`: a 32-bit board has no 64-bit
/// divide instruction, and the compiler's helper for one costs flash.
fn digits(b: &[u8]) -> Option<(u32, &[u8])> {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let (run, rest) = b.split_at_checked(n)?;
    let value = run.iter().fold(0u32, |acc, d| {
        acc.saturating_mul(10).saturating_add(u32::from(d - b'0'))
    });
    Some((value, rest))
}

/// `retry-after-ms` (sent by OpenAI and Azure OpenAI next to
/// `Retry-After`): milliseconds, an integer or a decimal fraction (rounded
/// up). Anything else is ignored (`None`).
pub fn retry_after_ms(value: &[u8]) -> Option<u32> {
    let v = trim(value);
    let (whole, rest) = digits(v)?;
    let round_up = match rest {
        [] => false,
        [b'.', frac @ ..] if !frac.is_empty() && frac.iter().all(u8::is_ascii_digit) => {
            frac.iter().any(|&d| d != b'0')
        }
        _ => return None,
    };
    Some(whole.saturating_add(u32::from(round_up)))
}

/// `Retry-After` (RFC 9110 10.2.3) in milliseconds: delay-seconds, or an
/// HTTP-date. A date needs "now": a board may have no clock at all, so the
/// response's own `Date` header (`date`, which every origin server with a
/// clock sends) is taken as the server's now, and the wait is the
/// difference (0 when the date has passed). A date without a usable `Date`
/// header, or a value that is neither, is ignored (`None`: the normal
/// backoff applies).
pub fn retry_after(value: &[u8], date: Option<&[u8]>) -> Option<u32> {
    let v = trim(value);
    if let Some((secs, [])) = digits(v) {
        return Some(secs.saturating_mul(1000));
    }
    let when = http_date(v)?;
    let now = http_date(trim(date?))?;
    Some(when.saturating_sub(now).saturating_mul(1000))
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

fn month(b: &[u8]) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| b.eq_ignore_ascii_case(&m[..]))
        .map(|i| i as u32 + 1)
}

/// A number made of exactly `b`'s digits (1 to 4 of them).
fn number(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 4 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
}

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian; a
/// 4-digit year keeps every step far below `u32::MAX`).
fn days_from_civil(year: u32, month: u32, day: u32) -> u32 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).saturating_sub(719_468)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// An HTTP-date (RFC 9110 5.6.7) in seconds since 1970: the IMF-fixdate
/// `Sun, 06 Nov 1994 08:49:37 GMT`, and the two obsolete forms a recipient
/// must accept, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year
/// below 70 is 20xx) and asctime `Sun Nov  6 08:49:37 1994`. Dates before
/// 1970, after 2106 (beyond `u32` seconds) and anything malformed give
/// `None`.
pub fn http_date(b: &[u8]) -> Option<u32> {
    // The fields are the runs of letters or digits; anything else (blanks,
    // commas, dashes, colons) separates them. At most 8.
    let mut fields: [&[u8]; 8] = [&[]; 8];
    let mut count = 0;
    for field in b
        .split(|c| !c.is_ascii_alphanumeric())
        .filter(|f| !f.is_empty())
    {
        *fields.get_mut(count)? = field;
        count += 1;
    }
    let [weekday, f1, f2, f3, f4, f5, f6, f7] = fields;
    if weekday.is_empty() || !weekday.iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    // IMF-fixdate and RFC 850: weekday day month year hh mm ss GMT;
    // asctime: weekday month day hh mm ss year.
    // (asctime's year has 4 digits; only RFC 850's has 2.)
    let (day, mon, year, [h, m, s]) = match count {
        8 if f7.eq_ignore_ascii_case(b"GMT") => (f1, month(f2)?, f3, [f4, f5, f6]),
        7 if f6.len() == 4 => (f2, month(f1)?, f6, [f3, f4, f5]),
        _ => return None,
    };
    // The time is `HH:MM:SS`: two digits each.
    if [h, m, s].iter().any(|f| f.len() != 2) {
        return None;
    }
    let year = match (year.len(), number(year)?) {
        // A two-digit year (RFC 850) below 70 is 20xx.
        (2, y @ 0..=69) => 2000 + y,
        (2, y) => 1900 + y,
        (4, y) => y,
        _ => return None,
    };
    let day = number(day)?;
    let (h, m, s) = (number(h)?, number(m)?, number(s)?);
    // 60: a leap second, as RFC 5322 allows.
    if year < 1970 || day == 0 || day > days_in_month(year, mon) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    days_from_civil(year, mon, day)
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_gives_up_waits_or_stops_at_the_deadline() {
        let f = |retryable, attempt, delivered, retry_after_ms| Failed {
            retryable,
            attempt,
            delivered,
            retry_after_ms,
        };
        // (failed, retries, base, remaining) -> next
        let table = [
            (f(false, 0, false, None), 3, 500, 10_000, Next::GiveUp),
            (f(true, 3, false, None), 3, 500, 10_000, Next::GiveUp),
            (f(true, 0, true, None), 3, 500, 10_000, Next::GiveUp),
            (f(true, 0, false, None), 3, 500, 10_000, Next::RetryIn(500)),
            (
                f(true, 2, false, None),
                3,
                500,
                10_000,
                Next::RetryIn(2_000),
            ),
            // The server's wait wins over the backoff.
            (
                f(true, 2, false, Some(700)),
                3,
                500,
                10_000,
                Next::RetryIn(700),
            ),
            // Capped, and never past the deadline (equal counts as past).
            (
                f(true, 16, false, None),
                99,
                500,
                100_000,
                Next::RetryIn(MAX_BACKOFF_MS),
            ),
            (
                f(true, 40, false, None),
                99,
                500,
                100_000,
                Next::RetryIn(MAX_BACKOFF_MS),
            ),
            (
                f(true, 1, false, None),
                3,
                500,
                1_000,
                Next::PastDeadline(1_000),
            ),
            (
                f(true, 0, false, Some(9_000)),
                3,
                500,
                8_000,
                Next::PastDeadline(9_000),
            ),
            (
                f(true, 0, false, None),
                3,
                u32::MAX,
                8_000,
                Next::PastDeadline(MAX_BACKOFF_MS),
            ),
        ];
        for (failed, retries, base, remaining, want) in table {
            assert_eq!(next(failed, retries, base, remaining), want, "{failed:?}");
        }
    }
}
