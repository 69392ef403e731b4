//! Wrong tokens, counted per peer: after [`MAX_FAILURES`] wrong tokens
//! within [`WINDOW_MS`] from one address, that address is refused (429,
//! with `Retry-After`) until its window has passed, so a token cannot be
//! guessed at network speed. Shared by the MCP server and the WebNet
//! channel.
//!
//! Pure: the time is passed in (milliseconds of a wrapping clock), and the
//! table is a small fixed array ([`PEERS`] entries; when it is full, the
//! entry whose window started longest ago is replaced), so memory is
//! bounded whatever a network sends. A peer is an address of up to 16
//! bytes (IPv4 or IPv6), never the token it sent.

/// Wrong tokens allowed per window; the next request is refused.
pub const MAX_FAILURES: u8 = 5;
/// The window, from a peer's first wrong token.
pub const WINDOW_MS: u32 = 60_000;
/// Peers remembered at once.
pub const PEERS: usize = 8;

/// A peer's address (IPv4 in the first four bytes, `len` 4; IPv6: 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Peer {
    pub addr: [u8; 16],
    pub len: u8,
}

impl Peer {
    pub fn v4(a: [u8; 4]) -> Peer {
        let mut addr = [0u8; 16];
        crate::base::text::copy_prefix(&mut addr, &a);
        Peer { addr, len: 4 }
    }
}

#[derive(Clone, Copy, Default)]
struct Entry {
    peer: Peer,
    used: bool,
    start: u32,
    failures: u8,
    /// The block of this window has been logged.
    logged: bool,
}

/// What to do with a request from a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Check its token.
    Check,
    /// Refuse it with 429; `Retry-After` in whole seconds (at least 1).
    Blocked { retry_after_s: u32 },
}

/// The table. One per server; the caller keeps it under its own lock.
pub struct TokenLimit {
    entries: [Entry; PEERS],
}

impl Default for TokenLimit {
    fn default() -> Self {
        Self::new()
    }
}

impl TokenLimit {
    pub const fn new() -> Self {
        TokenLimit {
            entries: [Entry {
                peer: Peer {
                    addr: [0; 16],
                    len: 0,
                },
                used: false,
                start: 0,
                failures: 0,
                logged: false,
            }; PEERS],
        }
    }

    fn find(&mut self, peer: &Peer) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.used && e.peer == *peer)
    }

    /// Before checking a token from `peer` at `now`.
    pub fn verdict(&mut self, peer: &Peer, now: u32) -> Verdict {
        let Some(e) = self.find(peer) else {
            return Verdict::Check;
        };
        let age = now.wrapping_sub(e.start);
        if age >= WINDOW_MS {
            // The window passed: the peer starts afresh.
            *e = Entry::default();
            return Verdict::Check;
        }
        if e.failures >= MAX_FAILURES {
            Verdict::Blocked {
                retry_after_s: (WINDOW_MS - age).div_ceil(1000).max(1),
            }
        } else {
            Verdict::Check
        }
    }

    /// `peer` sent a wrong (or no) token at `now`. True the first time in
    /// this window that the peer is blocked from now on (log it then, and
    /// only then).
    pub fn failed(&mut self, peer: &Peer, now: u32) -> bool {
        if self.verdict(peer, now) == Verdict::Check && self.find(peer).is_none() {
            let slot = match self.entries.iter().position(|e| !e.used) {
                Some(free) => free,
                // Full: the entry whose window started longest ago goes.
                None => self
                    .entries
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, e)| now.wrapping_sub(e.start))
                    .map_or(0, |(i, _)| i),
            };
            if let Some(e) = self.entries.get_mut(slot) {
                *e = Entry {
                    peer: *peer,
                    used: true,
                    start: now,
                    failures: 0,
                    logged: false,
                };
            }
        }
        let Some(e) = self.find(peer) else {
            return false;
        };
        e.failures = e.failures.saturating_add(1);
        if e.failures >= MAX_FAILURES && !e.logged {
            e.logged = true;
            return true;
        }
        false
    }
}

/// How a request's token fared at the gate ([`gate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The token is right: serve the request.
    Pass,
    /// No token or a wrong one: refuse it (403 or 401).
    Wrong,
    /// Too many wrong tokens from this peer lately: 429 with `Retry-After`
    /// (this request's token was not even compared).
    Blocked { retry_after_s: u32 },
}

/// The one table of the board, shared by the MCP server and the WebNet
/// channel (a peer that guesses at one is refused at both).
static SHARED: crate::rtt::sleep_cell::SleepCell<TokenLimit> =
    crate::rtt::sleep_cell::SleepCell::new(TokenLimit::new());

/// Milliseconds of the kernel's tick (wrapping with it).
pub fn now_ms() -> u32 {
    // SAFETY: only reads the tick counter.
    let tick = unsafe { crate::rtt::rt_tick_get() } as u64;
    let hz = crate::rtt::board().tick_per_second.clamp(1, 1_000_000) as u64;
    (tick.wrapping_mul(1000) / hz) as u32
}

/// Check `given` against `token` for a request from `peer`, counting a
/// failure in the shared table; `what` names the server in the one log
/// line written when a peer becomes blocked (the peer's address, never
/// the token). The comparison takes constant time.
pub fn gate(peer: &Peer, given: &[u8], token: &[u8], what: &str) -> Outcome {
    gate_at(peer, given, token, what, now_ms())
}

fn gate_at(peer: &Peer, given: &[u8], token: &[u8], what: &str, now: u32) -> Outcome {
    if let Verdict::Blocked { retry_after_s } = SHARED.with(|t| t.verdict(peer, now)) {
        return Outcome::Blocked { retry_after_s };
    }
    if crate::base::text::same_secret(given, token) {
        return Outcome::Pass;
    }
    if SHARED.with(|t| t.failed(peer, now)) {
        let mut text = [0u8; 48];
        let n = peer.write(&mut text);
        crate::log_w!(
            what,
            ": ",
            text.get(..n).unwrap_or_default(),
            " sent ",
            MAX_FAILURES as u32,
            " wrong tokens: refused (429) for ",
            WINDOW_MS / 1000,
            " s"
        );
    }
    Outcome::Wrong
}

/// Forget every peer (tests; a board never needs it).
pub fn forget_all() {
    SHARED.with(|t| *t = TokenLimit::new());
}

impl Peer {
    /// The address as text (dotted IPv4, or IPv6 as eight hex groups)
    /// into `out`; its length.
    pub fn write(&self, out: &mut [u8; 48]) -> usize {
        let mut n = 0;
        let mut put =
            |b: &[u8]| n += crate::base::text::copy_prefix(out.get_mut(n..).unwrap_or_default(), b);
        if self.len == 4 {
            for (i, &b) in self.addr.iter().take(4).enumerate() {
                if i > 0 {
                    put(b".");
                }
                let mut d = [0u8; 20];
                put(crate::base::text::decimal(b as u64, &mut d));
            }
        } else {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            // Eight groups of two bytes (no `chunks`: see src/base/text.rs).
            for i in 0..8 {
                if i > 0 {
                    put(b":");
                }
                let byte = |k: usize| u16::from(self.addr.get(k).copied().unwrap_or(0));
                let v = (byte(2 * i) << 8) | byte(2 * i + 1);
                let mut started = false;
                for shift in [12u16, 8, 4, 0] {
                    let digit = ((v >> shift) & 0xF) as usize;
                    if digit != 0 || started || shift == 0 {
                        started = true;
                        put(core::slice::from_ref(HEX.get(digit).unwrap_or(&b'0')));
                    }
                }
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 4] = [10, 0, 2, 2];
    const B: [u8; 4] = [10, 0, 2, 3];

    #[test]
    fn five_failures_block_the_sixth_until_the_window_passes() {
        let mut t = TokenLimit::new();
        let a = Peer::v4(A);
        let mut logged = 0;
        for i in 0..5 {
            assert_eq!(t.verdict(&a, 1000 + i * 10), Verdict::Check, "request {i}");
            logged += t.failed(&a, 1000 + i * 10) as u32;
        }
        assert_eq!(logged, 1, "the block is logged once");
        assert_eq!(t.verdict(&a, 1050), Verdict::Blocked { retry_after_s: 60 });
        assert_eq!(
            t.verdict(&a, 1000 + 59_500),
            Verdict::Blocked { retry_after_s: 1 }
        );
        // Another peer is not affected.
        assert_eq!(t.verdict(&Peer::v4(B), 1050), Verdict::Check);
        // The window passes: checked again, and counted afresh.
        assert_eq!(t.verdict(&a, 1000 + 60_000), Verdict::Check);
        assert!(!t.failed(&a, 1000 + 60_001));
        assert_eq!(t.verdict(&a, 1000 + 60_002), Verdict::Check);
    }

    #[test]
    fn failures_spread_over_more_than_a_window_never_block() {
        let mut t = TokenLimit::new();
        let a = Peer::v4(A);
        for i in 0..20u32 {
            let now = i * 20_000;
            assert_eq!(t.verdict(&a, now), Verdict::Check, "at {now}");
            t.failed(&a, now);
        }
    }

    #[test]
    fn the_table_is_bounded_and_replaces_the_oldest() {
        let mut t = TokenLimit::new();
        let blocked = Peer::v4([192, 168, 0, 1]);
        for i in 0..5 {
            t.failed(&blocked, 100 + i);
        }
        // Many other peers, each once, later: the table never grows, and
        // the oldest entry (the blocked peer's) is the one replaced first.
        for n in 0..(PEERS as u32 - 1) {
            t.failed(&Peer::v4([10, 0, 0, n as u8]), 1000 + n);
        }
        assert!(matches!(t.verdict(&blocked, 2000), Verdict::Blocked { .. }));
        t.failed(&Peer::v4([10, 0, 1, 0]), 3000);
        assert_eq!(t.verdict(&blocked, 3001), Verdict::Check);
        assert_eq!(t.entries.len(), PEERS);
    }

    #[test]
    fn the_clock_may_wrap() {
        let mut t = TokenLimit::new();
        let a = Peer::v4(A);
        let start = u32::MAX - 1000;
        for i in 0..5 {
            t.failed(&a, start.wrapping_add(i));
        }
        assert_eq!(
            t.verdict(&a, start.wrapping_add(2000)),
            Verdict::Blocked { retry_after_s: 58 }
        );
        assert_eq!(t.verdict(&a, start.wrapping_add(60_000)), Verdict::Check);
    }

    #[test]
    fn ipv6_peers_are_told_apart_from_ipv4() {
        let mut t = TokenLimit::new();
        let v4 = Peer::v4(A);
        let mut v6 = Peer {
            addr: [0; 16],
            len: 16,
        };
        v6.addr[..4].copy_from_slice(&A);
        for i in 0..5 {
            t.failed(&v6, i);
        }
        assert!(matches!(t.verdict(&v6, 10), Verdict::Blocked { .. }));
        assert_eq!(t.verdict(&v4, 10), Verdict::Check);
    }
    #[test]
    fn the_shared_gate_counts_wrong_tokens_per_peer() {
        forget_all();
        let a = Peer::v4([127, 0, 0, 1]);
        let b = Peer::v4([127, 0, 0, 2]);
        let token = b"0123456789abcdef";
        for i in 0..5 {
            assert_eq!(gate_at(&a, b"wrong", token, "test", 10 + i), Outcome::Wrong);
        }
        assert_eq!(
            gate_at(&a, token, token, "test", 20),
            Outcome::Blocked { retry_after_s: 60 }
        );
        assert_eq!(gate_at(&b, token, token, "test", 20), Outcome::Pass);
        assert_eq!(gate_at(&a, token, token, "test", 60_010), Outcome::Pass);
        forget_all();
    }

    #[test]
    fn peers_are_written_as_text() {
        let mut out = [0u8; 48];
        let n = Peer::v4([192, 168, 0, 17]).write(&mut out);
        assert_eq!(&out[..n], b"192.168.0.17");
        let mut v6 = Peer {
            addr: [0; 16],
            len: 16,
        };
        v6.addr[0] = 0xfe;
        v6.addr[1] = 0x80;
        v6.addr[15] = 1;
        let n = v6.write(&mut out);
        assert_eq!(&out[..n], b"fe80:0:0:0:0:0:0:1");
    }
}
