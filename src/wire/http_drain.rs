//! Closing an HTTP connection after an answer given before the request was
//! read to its end (a refusal decided on the head: 401, 413, 429, ...),
//! without the close costing the client that answer.
//!
//! # Why
//! A TCP stack that closes a socket with request bytes still unread, or
//! that gets more of them after the close, sends a reset (Linux and lwIP
//! both do). A reset can overtake the answer: the answer's bytes still
//! waiting to be sent are dropped with it, and a client that is still
//! writing its body (HTTP clients write the head and the body apart, as
//! Python's `http.client` does) gets the reset on that write and never
//! reads the answer at all, `Retry-After` included.
//!
//! # How (the servers that use this)
//! After the answer (which says `Connection: close`), the server:
//! 1. shuts down its sending side: the answer and then the end of the
//!    stream go out at once, so the client sees a whole answer even while
//!    it is still writing;
//! 2. reads and drops what is left of the request ([`budget`]): the body
//!    its `Content-Length` declares when that is at most the cap, and then
//!    closes at once (nothing is unread: no reset); otherwise (no known
//!    length, or a longer body) at most the cap, until the client closes;
//! 3. stops after [`LINGER_MS`] whatever came, and closes.
//!
//! So a refusal never makes the board read more than the cap (nor wait
//! longer than [`LINGER_MS`]), reads into a small buffer on the stack
//! ([`drain`]), and allocates nothing. A client that goes on sending more
//! than the cap may still see a reset, after it had the answer and the
//! end of the stream for the whole linger.
//!
//! Pure: the reads are the caller's (`drain` takes them as a function).

/// Most bytes of a refused request read and dropped (whatever its
/// declared length): twice WebNet's own limit for a body it reads (8 KB).
pub const DRAIN_MAX: usize = 16 * 1024;
/// Longest time spent draining after an answer.
pub const LINGER_MS: u32 = 1000;
/// Socket timeout of one read while draining, so that the deadline is
/// looked at often enough.
pub const LINGER_POLL_MS: u32 = 100;

/// What is left of a request when its answer has been sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unread {
    /// This many bytes of its body (0: nothing; no need to linger).
    Bytes(usize),
    /// Some bytes of unknown number may follow (no usable length, or a
    /// head that could not be read).
    Unknown,
}

impl Unread {
    /// What is left once `received` more bytes of it are in.
    pub fn less(self, received: usize) -> Unread {
        match self {
            Unread::Bytes(n) => Unread::Bytes(n.saturating_sub(received)),
            Unread::Unknown => Unread::Unknown,
        }
    }
}

/// Bytes to read and drop before closing, for what is `unread`, at most
/// `cap`: all of a known rest that fits (then the close is clean), else
/// the cap (read until the client closes, at most that).
pub fn budget(unread: Unread, cap: usize) -> usize {
    match unread {
        Unread::Bytes(n) if n <= cap => n,
        Unread::Bytes(_) | Unread::Unknown => cap,
    }
}

/// Read and drop up to `budget` bytes: `recv` reads into the buffer it is
/// given and returns the bytes read, or `None` when the stream ended
/// (closed, failed, or out of time: the caller's deadline). The bytes
/// dropped.
pub fn drain(budget: usize, mut recv: impl FnMut(&mut [u8]) -> Option<usize>) -> usize {
    let mut scrap = [0u8; 128];
    let mut dropped = 0;
    while dropped < budget {
        let want = (budget - dropped).min(scrap.len());
        match recv(scrap.get_mut(..want).unwrap_or_default()) {
            Some(n) if n > 0 => dropped += n.min(want),
            _ => break,
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_rest_that_fits_is_read_whole_else_the_cap() {
        assert_eq!(budget(Unread::Bytes(0), 4096), 0);
        assert_eq!(budget(Unread::Bytes(4096), 4096), 4096);
        assert_eq!(budget(Unread::Bytes(4097), 4096), 4096);
        assert_eq!(budget(Unread::Bytes(usize::MAX), 4096), 4096);
        assert_eq!(budget(Unread::Unknown, 4096), 4096);
        assert_eq!(Unread::Bytes(10).less(4), Unread::Bytes(6));
        assert_eq!(Unread::Bytes(10).less(40), Unread::Bytes(0));
        assert_eq!(Unread::Unknown.less(4), Unread::Unknown);
    }

    #[test]
    fn drain_reads_the_budget_and_stops_at_the_end() {
        // A stream of 1000 bytes in reads of at most 70; the sizes asked.
        let mut left = 1000usize;
        let mut asked = Vec::new();
        let mut stream = |buf: &mut [u8], asked: &mut Vec<usize>| {
            asked.push(buf.len());
            let n = buf.len().min(left).min(70);
            left -= n;
            (n > 0).then_some(n)
        };
        assert_eq!(drain(300, |b| stream(b, &mut asked)), 300);
        assert!(asked.iter().all(|&n| n > 0 && n <= 128), "{asked:?}");
        // Never asks for more than the budget's rest.
        assert_eq!(drain(5, |b| stream(b, &mut asked)), 5);
        assert_eq!(asked.last(), Some(&5));
        // The end of the stream (or its deadline) ends it early.
        assert_eq!(drain(10_000, |b| stream(b, &mut asked)), 695);
        assert_eq!(drain(0, |_| panic!("no read for a budget of 0")), 0);
        // A reader that claims more than it was given is not believed.
        assert_eq!(drain(10, |_| Some(1 << 20)), 10);
    }
}
