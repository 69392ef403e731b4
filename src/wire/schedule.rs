//! When a scheduled prompt is due (`PKG_AGENT_SCHEDULE`): `every <N>s|m|h`,
//! or a five-field cron expression (minute hour day-of-month month
//! day-of-week) on a board whose clock is set. Pure: the runtime passes the
//! time in.

/// A parsed `<when>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Every `ms` milliseconds, from the agent's start (or the entry's).
    Every { ms: u32 },
    /// At the minutes the expression matches, on the board's clock.
    Cron(Cron),
}

/// A cron expression as bit sets: bit n set when value n matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cron {
    minutes: u64,
    hours: u32,
    days: u32,
    months: u16,
    weekdays: u8,
}

/// A broken-down local time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tm {
    pub minute: u8,
    pub hour: u8,
    /// 1..=31.
    pub day: u8,
    /// 1..=12.
    pub month: u8,
    /// 0 (Sunday) ..= 6.
    pub weekday: u8,
}

/// Why a `<when>` is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadWhen {
    /// Nothing given.
    Missing,
    /// `every` without `<N>s|m|h`, N from 1, at most 24 days.
    Interval,
    /// Cron field number n (1..=5) is not a value, list, range or step in
    /// its range.
    Field(u8),
    /// Fewer than five cron fields.
    Fields,
}

impl BadWhen {
    /// The reason, for the shell and the C API's log.
    pub fn text(self) -> &'static str {
        match self {
            BadWhen::Missing => "no <when>: every <N>s|m|h, or five cron fields",
            BadWhen::Interval => "every needs <N>s, <N>m or <N>h (N at least 1, at most 24 days)",
            BadWhen::Field(1) => "the cron minute field (0-59) is not valid",
            BadWhen::Field(2) => "the cron hour field (0-23) is not valid",
            BadWhen::Field(3) => "the cron day-of-month field (1-31) is not valid",
            BadWhen::Field(4) => "the cron month field (1-12) is not valid",
            BadWhen::Field(_) => "the cron day-of-week field (0-7, 0 and 7 Sunday) is not valid",
            BadWhen::Fields => "a cron expression has five fields: minute hour day month weekday",
        }
    }
}

fn number(text: &[u8]) -> Option<u32> {
    if text.is_empty() || text.len() > 9 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(text.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')))
}

/// `every <N>s|m|h`'s interval, from `N` with its unit.
fn interval(text: &[u8]) -> Result<u32, BadWhen> {
    let (unit, digits) = text.split_last().ok_or(BadWhen::Interval)?;
    let scale: u64 = match unit {
        b's' => 1000,
        b'm' => 60_000,
        b'h' => 3_600_000,
        _ => return Err(BadWhen::Interval),
    };
    let n = number(digits).filter(|&n| n > 0).ok_or(BadWhen::Interval)?;
    let ms = u64::from(n) * scale;
    // At most 24 days: half the tick counter at 1 kHz, as every deadline.
    if ms > 24 * 24 * 3_600_000 {
        return Err(BadWhen::Interval);
    }
    Ok(ms as u32)
}

/// `text` before and after the first `sep`.
fn split_once(text: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let at = text.iter().position(|&b| b == sep)?;
    Some((text.get(..at)?, text.get(at + 1..)?))
}

/// One cron field's bit set over `lo..=hi` (`field` numbers it for the
/// error).
fn field(text: &[u8], lo: u32, hi: u32, n: u8) -> Result<u64, BadWhen> {
    let bad = BadWhen::Field(n);
    let mut set = 0u64;
    for part in text.split(|&b| b == b',') {
        let (range, step) = match split_once(part, b'/') {
            Some((r, s)) => (r, number(s).filter(|&s| s > 0).ok_or(bad)?),
            None => (part, 1),
        };
        let (from, to) = if range == b"*" {
            (lo, hi)
        } else if let Some((a, b)) = split_once(range, b'-') {
            (number(a).ok_or(bad)?, number(b).ok_or(bad)?)
        } else {
            let v = number(range).ok_or(bad)?;
            // `5/15`: from 5 to the end, every 15.
            (v, if step > 1 { hi } else { v })
        };
        if from < lo || to > hi || from > to {
            return Err(bad);
        }
        let mut v = from;
        while v <= to {
            set |= 1u64 << v;
            v += step;
        }
    }
    Ok(set)
}

/// The first five space-separated words of `text`, and how many it has
/// (counted on past five).
pub fn words_of(text: &[u8]) -> ([&[u8]; 5], usize) {
    let mut words: [&[u8]; 5] = [b""; 5];
    let mut n = 0;
    for w in text.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        if let Some(slot) = words.get_mut(n) {
            *slot = w;
        }
        n += 1;
    }
    (words, n)
}

/// Parse `<when>` from the first words of `words`: the When and how many
/// words it took.
pub fn parse(words: &[&[u8]]) -> Result<(When, usize), BadWhen> {
    let first = *words.first().ok_or(BadWhen::Missing)?;
    if first == b"every" {
        let n = words.get(1).ok_or(BadWhen::Interval)?;
        return Ok((When::Every { ms: interval(n)? }, 2));
    }
    // Five words, or one word holding the five (quoted at the shell).
    let mut fields: [&[u8]; 5] = [b""; 5];
    let (inside, n) = words_of(first);
    let used = if n == 5 {
        fields = inside;
        1
    } else {
        if words.len() < 5 {
            return Err(BadWhen::Fields);
        }
        for (slot, w) in fields.iter_mut().zip(words) {
            *slot = w;
        }
        5
    };
    let [mi, h, d, mo, wd] = fields;
    let weekdays = field(wd, 0, 7, 5)?;
    let cron = Cron {
        minutes: field(mi, 0, 59, 1)?,
        hours: field(h, 0, 23, 2)? as u32,
        days: field(d, 1, 31, 3)? as u32,
        months: field(mo, 1, 12, 4)? as u16,
        // 7 is Sunday too.
        weekdays: ((weekdays | (weekdays >> 7)) & 0x7f) as u8,
    };
    Ok((When::Cron(cron), used))
}

impl Cron {
    /// Whether the minute `t` matches (day of month and day of week: either
    /// matches when both are restricted, as cron does).
    pub fn matches(&self, t: &Tm) -> bool {
        let bit = |set: u64, v: u8| set.checked_shr(u32::from(v)).is_some_and(|s| s & 1 == 1);
        let all_days = self.days == 0xffff_fffe;
        let all_weekdays = self.weekdays == 0x7f;
        let day = bit(u64::from(self.days), t.day);
        let weekday = bit(u64::from(self.weekdays), t.weekday);
        let day_ok = match (all_days, all_weekdays) {
            (false, false) => day || weekday,
            _ => day && weekday,
        };
        bit(self.minutes, t.minute)
            && bit(u64::from(self.hours), t.hour)
            && bit(u64::from(self.months), t.month)
            && day_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> alloc::vec::Vec<&[u8]> {
        s.split(' ').map(str::as_bytes).collect()
    }

    fn tm(minute: u8, hour: u8, day: u8, month: u8, weekday: u8) -> Tm {
        Tm {
            minute,
            hour,
            day,
            month,
            weekday,
        }
    }

    #[test]
    fn intervals() {
        type Parsed = Result<(When, usize), BadWhen>;
        let table: &[(&str, Parsed)] = &[
            ("every 2s what", Ok((When::Every { ms: 2000 }, 2))),
            ("every 5m", Ok((When::Every { ms: 300_000 }, 2))),
            ("every 1h", Ok((When::Every { ms: 3_600_000 }, 2))),
            ("every 576h", Ok((When::Every { ms: 2_073_600_000 }, 2))),
            ("every 577h", Err(BadWhen::Interval)),
            ("every 0s", Err(BadWhen::Interval)),
            ("every 5", Err(BadWhen::Interval)),
            ("every s", Err(BadWhen::Interval)),
            ("every 5d", Err(BadWhen::Interval)),
            ("every", Err(BadWhen::Interval)),
            ("", Err(BadWhen::Fields)),
        ];
        for (input, want) in table {
            assert_eq!(parse(&words(input)), *want, "{input}");
        }
        assert_eq!(parse(&[]), Err(BadWhen::Missing));
    }

    #[test]
    fn cron_fields_and_matching() {
        let (When::Cron(c), 5) = parse(&words("*/15 9-17 * * 1-5 prompt")).unwrap() else {
            panic!("not cron")
        };
        assert!(c.matches(&tm(30, 9, 3, 12, 4)));
        assert!(!c.matches(&tm(31, 9, 3, 12, 4)));
        assert!(!c.matches(&tm(0, 18, 3, 12, 4)));
        assert!(!c.matches(&tm(0, 10, 6, 12, 6)), "Saturday");
        // One quoted word holding the five fields.
        let (When::Cron(q), 1) = parse(&[b"*/15 9-17 * * 1-5", b"prompt"]).unwrap() else {
            panic!("not cron")
        };
        assert_eq!(q, c);
        // Lists, a start with a step, 7 as Sunday.
        let (When::Cron(c), _) = parse(&words("0,30 5/6 1 1,7 7")).unwrap() else {
            panic!()
        };
        assert!(c.matches(&tm(30, 11, 1, 7, 2)), "day of month matches");
        assert!(c.matches(&tm(0, 17, 9, 1, 0)), "Sunday matches");
        assert!(!c.matches(&tm(0, 12, 9, 1, 0)), "hour 12 is not 5/6");
        assert!(!c.matches(&tm(0, 5, 9, 2, 0)), "February");
        let bad: &[(&str, BadWhen)] = &[
            ("60 * * * *", BadWhen::Field(1)),
            ("* 24 * * *", BadWhen::Field(2)),
            ("* * 0 * *", BadWhen::Field(3)),
            ("* * * 13 *", BadWhen::Field(4)),
            ("* * * * 8", BadWhen::Field(5)),
            ("*/0 * * * *", BadWhen::Field(1)),
            ("5-1 * * * *", BadWhen::Field(1)),
            ("x * * * *", BadWhen::Field(1)),
            ("* * * *", BadWhen::Fields),
        ];
        for (input, want) in bad {
            assert_eq!(parse(&words(input)), Err(*want), "{input}");
        }
    }
}
