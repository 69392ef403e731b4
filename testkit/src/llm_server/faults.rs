//! Faults on purpose, for load runs: a model server that now and then
//! answers HTTP 500, cuts a stream in the middle, or stalls. Every request
//! draws from a random number generator seeded from the spec, so a run can
//! be repeated.
//!
//! The spec: `seed=N,http500=P,cut=P,stall=P[,stall_s=S][,force_stall_s=T]`
//! (P in percent, decimals allowed; commas or spaces; any part may be left
//! out: 0 %, seed 1, a 20 s stall, nothing forced).
//!
//! `force_stall_s=T`: the first request that carries tool results (a
//! turn's second round, its largest request) arriving T seconds or more
//! after the first request stalls, whatever it drew: a load run can put
//! the heavy moment of a stalled second round (every other client waiting
//! meanwhile) where it wants it, e.g. in its warm-up. Its draw is still
//! made, so the rest of the sequence is the same with or without it. A cut takes the normal answer and closes the
//! connection after half of its body; a stall sends the 200 head, then only
//! an SSE comment every 2 s for `stall_s` seconds (no read waits as long as
//! a read timeout, so the client's request deadline must end it).

use super::response::ScriptedResponse;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The percentages of each fault, in hundredths of a percent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    pub seed: u64,
    pub http500: u32,
    pub cut: u32,
    pub stall: u32,
    pub stall_s: u64,
    /// Seconds after the first request from which the next request with
    /// tool results stalls (`None`: nothing forced).
    pub force_stall_s: Option<u64>,
}

/// What a request drew.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    None,
    Http500,
    Cut,
    Stall,
    /// A stall made on purpose (`force_stall_s`), not drawn.
    ForcedStall,
}

impl Fault {
    /// The word a log line names it by.
    pub fn name(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Http500 => "fault-http500",
            Fault::Cut => "fault-cut",
            Fault::Stall => "fault-stall",
            Fault::ForcedStall => "fault-stall-forced",
        }
    }
}

impl Faults {
    /// Parse a spec (see the module docs).
    pub fn parse(spec: &str) -> Result<Faults, String> {
        let mut f = Faults {
            seed: 1,
            stall_s: 20,
            ..Faults::default()
        };
        for part in spec.split([',', ' ']).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?}: not key=value"))?;
            let pct = || -> Result<u32, String> {
                let p: f64 = v.parse().map_err(|_| format!("{part:?}: not a number"))?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(format!("{part:?}: not a percentage"));
                }
                Ok((p * 100.0).round() as u32)
            };
            match k {
                "seed" => f.seed = v.parse().map_err(|_| format!("{part:?}: not a number"))?,
                "http500" => f.http500 = pct()?,
                "cut" => f.cut = pct()?,
                "stall" => f.stall = pct()?,
                "stall_s" => f.stall_s = v.parse().map_err(|_| format!("{part:?}: not seconds"))?,
                "force_stall_s" => {
                    f.force_stall_s = Some(v.parse().map_err(|_| format!("{part:?}: not seconds"))?)
                }
                _ => {
                    return Err(format!(
                        "{k:?}: not one of seed, http500, cut, stall, stall_s, force_stall_s"
                    ))
                }
            }
        }
        if f.http500 + f.cut + f.stall > 10_000 {
            return Err("the percentages add up to more than 100".into());
        }
        Ok(f)
    }

    /// The fault of the draw `r` (any u64).
    pub fn pick(&self, r: u64) -> Fault {
        let x = (r % 10_000) as u32;
        if x < self.http500 {
            Fault::Http500
        } else if x < self.http500 + self.cut {
            Fault::Cut
        } else if x < self.http500 + self.cut + self.stall {
            Fault::Stall
        } else {
            Fault::None
        }
    }

    /// A one-line description for a log.
    pub fn describe(&self) -> String {
        let pct = |p: u32| format!("{}.{:02}%", p / 100, p % 100);
        let forced = match self.force_stall_s {
            Some(t) => format!(", a stall forced on the first second round from {t} s"),
            None => String::new(),
        };
        format!(
            "seed {}, HTTP 500 {}, cut {}, stall {} ({} s){forced}",
            self.seed,
            pct(self.http500),
            pct(self.cut),
            pct(self.stall),
            self.stall_s
        )
    }

    /// The answer of a request that drew `fault`: `normal` itself, or the
    /// fault made of it (a cut closes after half of its body).
    pub fn answer(&self, fault: Fault, normal: ScriptedResponse) -> ScriptedResponse {
        match fault {
            Fault::None => normal,
            Fault::Http500 => {
                ScriptedResponse::error(500, "scripted fault of the load run", "server_error", None)
            }
            Fault::Stall | Fault::ForcedStall => {
                // A write every 2 s: the head, the comments, the end.
                let comments = (0..(self.stall_s / 2).saturating_sub(1).max(1))
                    .map(|_| b": stalled on purpose\n\n".to_vec())
                    .collect();
                ScriptedResponse::sse(comments).delay(Duration::from_secs(2))
            }
            Fault::Cut => {
                let half = normal.wire_body().len() / 2;
                normal.cut_after(half)
            }
        }
    }
}

/// The draws of one server, in the order its requests arrive (one lock:
/// each request draws once).
pub struct Draws {
    faults: Faults,
    state: Mutex<DrawState>,
}

struct DrawState {
    rng: u64,
    /// When the first request came.
    first: Option<Instant>,
    /// The forced stall was made.
    forced: bool,
}

impl Draws {
    pub fn new(faults: Faults) -> Draws {
        Draws {
            faults,
            state: Mutex::new(DrawState {
                rng: faults.seed,
                first: None,
                forced: false,
            }),
        }
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The next request's fault, drawn.
    pub fn next(&self) -> Fault {
        self.next_request(false, Instant::now())
    }

    /// The fault of a request arriving `now`, which carries tool results
    /// or not (see `force_stall_s`).
    pub fn next_request(&self, tool_results: bool, now: Instant) -> Fault {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let drawn = self.faults.pick(splitmix64(&mut st.rng));
        let first = *st.first.get_or_insert(now);
        match self.faults.force_stall_s {
            Some(t)
                if tool_results
                    && !st.forced
                    && now.saturating_duration_since(first) >= Duration::from_secs(t) =>
            {
                st.forced = true;
                Fault::ForcedStall
            }
            _ => drawn,
        }
    }
}

/// splitmix64: the draws, reproducible from the seed.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_draw_in_proportion() {
        let f = Faults::parse("seed=7,http500=5,cut=2,stall=1").unwrap();
        assert_eq!(
            (f.seed, f.http500, f.cut, f.stall, f.stall_s),
            (7, 500, 200, 100, 20)
        );
        assert!(Faults::parse("http500=60,cut=50").is_err());
        assert!(Faults::parse("bogus=1").is_err());
        assert!(Faults::parse("cut").is_err());
        let draws = Draws::new(f);
        let mut seen = [0usize; 5];
        for _ in 0..100_000 {
            seen[draws.next() as usize] += 1;
        }
        // 5 %, 2 %, 1 % of 100 000, within a few tenths of a percent.
        assert!(
            (4_600..5_400).contains(&seen[Fault::Http500 as usize]),
            "{seen:?}"
        );
        assert!(
            (1_700..2_300).contains(&seen[Fault::Cut as usize]),
            "{seen:?}"
        );
        assert!(
            (800..1_200).contains(&seen[Fault::Stall as usize]),
            "{seen:?}"
        );
        // The same seed draws the same sequence.
        let (a, b) = (Draws::new(f), Draws::new(f));
        assert!((0..1000).all(|_| a.next() == b.next()));
    }

    #[test]
    fn a_forced_stall_takes_the_first_second_round_after_its_time_once() {
        let f = Faults::parse("seed=7,force_stall_s=10").unwrap();
        assert_eq!(f.force_stall_s, Some(10));
        let forced = Draws::new(f);
        let t0 = Instant::now();
        let at = |s| t0 + Duration::from_secs(s);
        // Before its time, or a first round: as drawn (no fault at 0 %).
        assert_eq!(forced.next_request(false, at(0)), Fault::None);
        assert_eq!(forced.next_request(true, at(9)), Fault::None);
        assert_eq!(forced.next_request(false, at(11)), Fault::None);
        // The first second round from 10 s on, and only that one.
        assert_eq!(forced.next_request(true, at(12)), Fault::ForcedStall);
        assert_eq!(forced.next_request(true, at(13)), Fault::None);
        // The draws go on as without it.
        let g = Faults::parse("seed=9,http500=30,cut=20,force_stall_s=0").unwrap();
        let (a, b) = (
            Draws::new(g),
            Draws::new(Faults {
                force_stall_s: None,
                ..g
            }),
        );
        let firsts: Vec<_> = (0..50).map(|_| a.next_request(true, t0)).collect();
        let seconds: Vec<_> = (0..50).map(|_| b.next_request(true, t0)).collect();
        assert_eq!(firsts[0], Fault::ForcedStall);
        assert_eq!(firsts[1..], seconds[1..]);
    }
}
