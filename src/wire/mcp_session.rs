//! The MCP server's sessions (`Mcp-Session-Id`): a fixed table, made at
//! server start with `PKG_AGENT_MCP_MAX_SESSIONS` slots, never grown.
//!
//! A session is made by `initialize` and ends with an HTTP `DELETE`, or when
//! the table is full and it has been idle longer than
//! `PKG_AGENT_MCP_SESSION_IDLE_S` (a client that vanished without a
//! `DELETE`). A full table of live sessions refuses new ones: a flood of
//! `initialize` requests cannot push out the clients in use.
//!
//! Ids are 32 hex digits from a xorshift generator that mixes in fresh
//! entropy (`agent_glue_mcp_entropy`: the kernel tick by default; a board
//! with a TRNG overrides the weak function) at every id. They tell sessions
//! apart; the bearer token (`PKG_AGENT_MCP_TOKEN`) is what keeps strangers
//! out.

use alloc::vec::Vec;

pub const ID_LEN: usize = 32;

/// The protocol revisions the server speaks, newest first (the handshake
/// era's; batches, which 2025-03-26 required, are not taken).
pub const VERSIONS: [&[u8]; 2] = [b"2025-11-25", b"2025-06-18"];

/// The stateless revision: no `initialize` and no session; each request
/// names it in its `MCP-Protocol-Version` header and its `params._meta`.
pub const MODERN: &[u8] = b"2026-07-28";

#[derive(Clone, Copy)]
pub struct Slot {
    pub id: [u8; ID_LEN],
    pub live: bool,
    /// The index in [`VERSIONS`] negotiated by `initialize`.
    pub version: u8,
    /// The client sent `notifications/initialized`.
    pub initialized: bool,
    /// Kernel tick of the last request.
    pub last_tick: u32,
}

pub struct Sessions {
    slots: Vec<Slot>,
    rng: u32,
}

/// Why no session could be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// Every slot holds a session used within the idle limit.
    AllLive,
}

impl Sessions {
    /// `max` slots, or `None` without memory.
    pub fn new(max: usize, seed: u32) -> Option<Sessions> {
        let empty = Slot {
            id: [0; ID_LEN],
            live: false,
            version: 0,
            initialized: false,
            last_tick: 0,
        };
        let mut slots = Vec::new();
        crate::base::fallible::resize(&mut slots, max.max(1), empty).ok()?;
        Some(Sessions {
            slots,
            rng: seed | 1,
        })
    }

    /// A new session at `now`; a slot idle for `idle_ticks` or more is
    /// taken over when no slot is free.
    pub fn create(
        &mut self,
        now: u32,
        idle_ticks: u32,
        entropy: u32,
        version: u8,
    ) -> Result<&Slot, Full> {
        let index = match self.slots.iter().position(|s| !s.live) {
            Some(i) => i,
            None => self
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| now.wrapping_sub(s.last_tick) >= idle_ticks)
                .max_by_key(|(_, s)| now.wrapping_sub(s.last_tick))
                .map(|(i, _)| i)
                .ok_or(Full::AllLive)?,
        };
        let mut id = [0u8; ID_LEN];
        self.rng ^= entropy;
        for chunk in id.chunks_mut(8) {
            self.rng = xorshift(self.rng);
            let mut word = self.rng;
            for digit in chunk.iter_mut() {
                *digit = b"0123456789abcdef"[(word & 15) as usize];
                word >>= 4;
            }
        }
        let slot = self.slots.get_mut(index).ok_or(Full::AllLive)?;
        *slot = Slot {
            id,
            live: true,
            version,
            initialized: false,
            last_tick: now,
        };
        Ok(slot)
    }

    /// The live session `id`, its last use set to `now`.
    pub fn find(&mut self, id: &[u8], now: u32) -> Option<&mut Slot> {
        let slot = self
            .slots
            .iter_mut()
            .find(|s| s.live && super::mcp_http::same_secret(id, &s.id))?;
        slot.last_tick = now;
        Some(slot)
    }

    /// End session `id`; whether it existed.
    pub fn remove(&mut self, id: &[u8]) -> bool {
        match self.find(id, 0) {
            Some(slot) => {
                slot.live = false;
                true
            }
            None => false,
        }
    }

    pub fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.live).count()
    }
}

fn xorshift(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^ (x << 5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_table_refuses_until_a_session_idles_or_ends() {
        let mut s = Sessions::new(2, 7).unwrap();
        let a = s.create(100, 1000, 1, 0).unwrap().id;
        let b = s.create(200, 1000, 2, 1).unwrap().id;
        assert_ne!(a, b);
        assert!(a.iter().all(u8::is_ascii_hexdigit));
        assert_eq!(s.create(300, 1000, 3, 0).err(), Some(Full::AllLive));
        assert!(s.find(&a, 1050).is_some());
        // b idle since 200: at 1200 it has idled 1000 ticks and is taken.
        let c = s.create(1200, 1000, 4, 0).unwrap().id;
        assert!(s.find(&b, 1200).is_none());
        assert!(s.remove(&a));
        assert!(!s.remove(&a));
        assert_eq!(s.live(), 1);
        assert!(s.find(&c, 1300).is_some());
        assert!(s.find(b"short", 1300).is_none());
    }
}
