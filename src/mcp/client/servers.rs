//! The list of remote MCP servers: `PKG_AGENT_MCP_SERVERS` until the first
//! `agent_config mcp add|del`, which copies it here and changes the copy.
//! Read at each agent start.
//!
//! Bounded storage, no heap: [`MAX_SERVERS`] slots of [`URL_MAX`] bytes in
//! a static (536 bytes of `.bss` on Cortex-M4F), under a lock held only
//! to copy a slot.

use crate::rtt::sleep_lock::SleepLock;
use core::cell::UnsafeCell;
use core::ffi::{c_char, CStr};

/// Most servers in the list.
pub const MAX_SERVERS: usize = 4;
/// Longest URL, as `agent_config`'s other values.
pub const URL_MAX: usize = 127;

extern "C" {
    /// PKG_AGENT_MCP_SERVERS (glue/agent_mcp_client.c): a static string.
    fn agent_glue_mcp_servers() -> *const c_char;
}

/// One URL, NUL-terminated within its slot.
#[derive(Clone, Copy)]
pub struct Url {
    bytes: [u8; URL_MAX + 1],
    len: usize,
}

impl Url {
    const EMPTY: Url = Url {
        bytes: [0; URL_MAX + 1],
        len: 0,
    };

    fn new(text: &[u8]) -> Option<Url> {
        if text.is_empty() || text.len() > URL_MAX || text.iter().any(|&b| b <= b' ') {
            return None;
        }
        let mut url = Url::EMPTY;
        crate::text::copy_prefix(&mut url.bytes, text);
        url.len = text.len();
        Some(url)
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    pub fn as_cstr(&self) -> &CStr {
        // The slot past `len` is always 0 (a new Url starts zeroed).
        CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }
}

struct List {
    /// Set by the first add/del: from then on `urls` is the list.
    changed: bool,
    urls: [Url; MAX_SERVERS],
    count: usize,
}

struct Shared(UnsafeCell<List>);
// SAFETY: every access goes through LOCK (see `with`).
unsafe impl Sync for Shared {}

static LIST: Shared = Shared(UnsafeCell::new(List {
    changed: false,
    urls: [Url::EMPTY; MAX_SERVERS],
    count: 0,
}));
static LOCK: SleepLock = SleepLock::new();

fn with<R>(f: impl FnOnce(&mut List) -> R) -> R {
    let _held = LOCK.lock();
    // SAFETY: the only access, under the lock.
    f(unsafe { &mut *LIST.0.get() })
}

/// The URLs of `PKG_AGENT_MCP_SERVERS`, at most [`MAX_SERVERS`]; a word too
/// long for a slot is skipped with a warning.
fn configured(list: &mut List) {
    // SAFETY: the glue returns a static, NUL-terminated string (or NULL).
    let text =
        unsafe { crate::ffi::cstr_arg(agent_glue_mcp_servers()) }.map_or(&b""[..], CStr::to_bytes);
    list.count = 0;
    for word in text.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        match Url::new(word) {
            Some(url) if list.count < MAX_SERVERS => {
                if let Some(slot) = list.urls.get_mut(list.count) {
                    *slot = url;
                    list.count += 1;
                }
            }
            Some(_) => {
                crate::log_w!(
                    "mcp: PKG_AGENT_MCP_SERVERS lists more than ",
                    MAX_SERVERS,
                    " servers; the rest are left out"
                );
                break;
            }
            None => crate::log_w!(
                "mcp: a URL of PKG_AGENT_MCP_SERVERS is longer than ",
                URL_MAX,
                " bytes; left out"
            ),
        }
    }
}

/// The `i`-th server of the list, copied out.
pub fn get(i: usize) -> Option<Url> {
    with(|list| {
        if !list.changed {
            configured(list);
        }
        list.urls.get(..list.count)?.get(i).copied()
    })
}

/// How [`add`] or [`del`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Empty, longer than [`URL_MAX`], or with a blank or control byte.
    BadUrl,
    Full,
    Duplicate,
    NotFound,
}

/// Add `url` at the end of the list (for the next agent start).
pub fn add(url: &[u8]) -> Result<(), Refused> {
    let url = Url::new(url).ok_or(Refused::BadUrl)?;
    with(|list| {
        if !list.changed {
            configured(list);
            list.changed = true;
        }
        let used = list.urls.get(..list.count).unwrap_or_default();
        if used.iter().any(|u| u.as_bytes() == url.as_bytes()) {
            return Err(Refused::Duplicate);
        }
        let slot = list.urls.get_mut(list.count).ok_or(Refused::Full)?;
        *slot = url;
        list.count += 1;
        Ok(())
    })
}

/// Remove `url` from the list (for the next agent start).
pub fn del(url: &[u8]) -> Result<(), Refused> {
    with(|list| {
        if !list.changed {
            configured(list);
            list.changed = true;
        }
        let used = list.urls.get(..list.count).unwrap_or_default();
        let at = used
            .iter()
            .position(|u| u.as_bytes() == url)
            .ok_or(Refused::NotFound)?;
        // The later ones move up one slot (within the list: `at < count`;
        // through `get`s, not `copy_within`: no panic path).
        for i in at..list.count {
            let next = list.urls.get(i + 1).copied().unwrap_or(Url::EMPTY);
            if let Some(slot) = list.urls.get_mut(i) {
                *slot = next;
            }
        }
        list.count -= 1;
        if let Some(last) = list.urls.get_mut(list.count) {
            *last = Url::EMPTY;
        }
        Ok(())
    })
}

/// Back to `PKG_AGENT_MCP_SERVERS` (tests, and `agent_config mcp reset`).
pub fn reset() {
    with(|list| {
        list.changed = false;
        list.urls = [Url::EMPTY; MAX_SERVERS];
        list.count = 0;
    })
}
