//! `AgentConfig.h`: the API key, model and URL, settable at run time.
//!
//! The storage is `agent_runtime_config_storage` in the C glue, so its
//! alignment is exactly the board's `rt_align(RT_ALIGN_SIZE)`. A field holds
//! a runtime value once one was set; getters fall back to the `PKG_AGENT_*`
//! default while the field is empty.
//!
//! Writers (`agent_config_set`) and `chat()`'s snapshot take [`CONFIG_LOCK`]:
//! a request copies the three strings once at its start ([`snapshot`]), so a
//! change made while it runs, retries and back-off included, applies to the
//! next request and never tears the current one. The C getters still hand out
//! pointers into the storage, as the C package did.

use crate::rtt::sleep_lock::SleepLock;
use crate::rtt::{board, rt_bool_t, RT_TRUE};
use alloc::vec::Vec;
use core::ffi::{c_char, CStr};
use core::ptr::{addr_of, addr_of_mut};

/// Guards [`agent_runtime_config_storage`] against torn reads and writes.
static CONFIG_LOCK: SleepLock = SleepLock::new();

pub const AGENT_CFG_API_KEY_MAX: usize = 128;
pub const AGENT_CFG_MODEL_MAX: usize = 128;
pub const AGENT_CFG_API_URL_MAX: usize = 128;

/// `agent_runtime_config_t` (offsets as in C; its alignment is the board's).
#[repr(C)]
pub struct agent_runtime_config {
    pub api_key: [c_char; AGENT_CFG_API_KEY_MAX],
    pub model_name: [c_char; AGENT_CFG_MODEL_MAX],
    pub api_url: [c_char; AGENT_CFG_API_URL_MAX],
    pub is_configured: rt_bool_t,
}
pub type agent_runtime_config_t = agent_runtime_config;

fn storage() -> *mut agent_runtime_config_t {
    // Taking the address of the glue's static creates no reference; the
    // glue defines it as an `agent_runtime_config_t`.
    addr_of_mut!(crate::rtt::glue::agent_runtime_config_storage).cast()
}

/// The runtime configuration, owned by the library (never free it). Fields
/// are empty until set; see the getters for the effective values.
pub fn agent_config_get() -> *mut agent_runtime_config_t {
    storage()
}

/// Copy `value` into `field` if it fits with its NUL; refuse otherwise.
fn store(field: &mut [c_char], value: &CStr, what: &str) -> bool {
    let bytes = value.to_bytes();
    if bytes.len() >= field.len() {
        crate::log_w!(
            "agent_config_set: ",
            what,
            " is ",
            bytes.len(),
            " bytes, the limit is ",
            field.len() - 1,
            "; not changed"
        );
        return false;
    }
    for (dst, &src) in field
        .iter_mut()
        .zip(bytes.iter().chain(core::iter::once(&0)))
    {
        *dst = src as c_char;
    }
    true
}

/// Set each non-NULL value that fits (at most 127 bytes); a longer one is
/// refused with a warning, never truncated. Borrows the strings.
pub unsafe fn agent_config_set(
    api_key: *const c_char,
    model_name: *const c_char,
    api_url: *const c_char,
) {
    let _held = CONFIG_LOCK.lock();
    // SAFETY: arguments are NULL or NUL-terminated; the storage is written
    // only here, under CONFIG_LOCK.
    unsafe {
        let cfg = &mut *storage();
        let mut changed = false;
        if let Some(v) = crate::base::text::cstr_arg(api_key) {
            changed |= store(&mut cfg.api_key, v, "api_key");
        }
        if let Some(v) = crate::base::text::cstr_arg(model_name) {
            changed |= store(&mut cfg.model_name, v, "model_name");
        }
        if let Some(v) = crate::base::text::cstr_arg(api_url) {
            changed |= store(&mut cfg.api_url, v, "api_url");
        }
        if changed {
            cfg.is_configured = RT_TRUE;
        }
    }
}

/// The runtime value when set (non-empty), else the build's default.
fn effective(field: *const c_char, default: *const c_char) -> *const c_char {
    // SAFETY: `field` points into the storage, which always holds a NUL
    // within its array (zero-initialised, written only by `store`).
    if unsafe { *field } != 0 {
        field
    } else if default.is_null() {
        c"".as_ptr()
    } else {
        default
    }
}

/// The API key in use (runtime value, else `PKG_AGENT_API_KEY`). Borrowed.
pub fn get_dynamic_agent_api_key() -> *const c_char {
    // SAFETY: address of a field of the static storage.
    effective(
        unsafe { addr_of!((*storage()).api_key) } as *const c_char,
        board().api_key,
    )
}

/// The model in use (runtime value, else `PKG_AGENT_MODEL_NAME`). Borrowed.
pub fn get_dynamic_agent_model_name() -> *const c_char {
    // SAFETY: only the address of a field of the glue's static storage
    // is taken; nothing is read.
    effective(
        unsafe { addr_of!((*storage()).model_name) } as *const c_char,
        board().model_name,
    )
}

/// The chat-completions URL in use (runtime value, else `PKG_AGENT_API_URL`).
/// Borrowed.
pub fn get_dynamic_agent_api_url() -> *const c_char {
    // SAFETY: only the address of a field of the glue's static storage
    // is taken; nothing is read.
    effective(
        unsafe { addr_of!((*storage()).api_url) } as *const c_char,
        board().api_url,
    )
}

/// The key, model and URL in use, copied together (one heap block) under
/// the lock: what one request works with from start to end.
pub struct ConfigSnapshot {
    text: Vec<u8>,
    model_at: usize,
    url_at: usize,
}

impl ConfigSnapshot {
    fn part(&self, from: usize) -> &CStr {
        CStr::from_bytes_until_nul(self.text.get(from..).unwrap_or(&[])).unwrap_or(c"")
    }
    pub fn api_key(&self) -> &CStr {
        self.part(0)
    }
    pub fn model(&self) -> &CStr {
        self.part(self.model_at)
    }
    pub fn url(&self) -> &CStr {
        self.part(self.url_at)
    }
}

/// A consistent copy of the configuration; `None` without memory.
pub fn snapshot() -> Option<ConfigSnapshot> {
    let _held = CONFIG_LOCK.lock();
    // SAFETY: the getters return NUL-terminated strings (the storage's
    // fields or the build's defaults), stable while CONFIG_LOCK is held.
    let (key, model, url) = unsafe {
        (
            CStr::from_ptr(get_dynamic_agent_api_key()).to_bytes_with_nul(),
            CStr::from_ptr(get_dynamic_agent_model_name()).to_bytes_with_nul(),
            CStr::from_ptr(get_dynamic_agent_api_url()).to_bytes_with_nul(),
        )
    };
    let mut text = Vec::new();
    text.try_reserve_exact(key.len() + model.len() + url.len())
        .ok()?;
    for part in [key, model, url] {
        crate::base::fallible::extend(&mut text, part).ok()?;
    }
    Some(ConfigSnapshot {
        model_at: key.len(),
        url_at: key.len() + model.len(),
        text,
    })
}

/// The key as shown to people: its first 3 and last 2 characters and its
/// length, never the whole key.
pub fn masked_key(key: &[u8], out: &mut [u8; 48]) -> usize {
    let mut n = 0;
    // Through `get_mut`, not indexing: no panic path.
    let mut put = |bytes: &[u8], n: &mut usize| {
        for &b in bytes {
            if let Some(slot) = out.get_mut(*n) {
                *slot = b;
                *n += 1;
            }
        }
    };
    if key.is_empty() {
        put(b"(none)", &mut n);
        return n;
    }
    if key.len() >= 12 {
        put(key.get(..3).unwrap_or_default(), &mut n);
        put(b"...", &mut n);
        put(key.get(key.len() - 2..).unwrap_or_default(), &mut n);
    } else {
        put(b"***", &mut n);
    }
    let mut digits = [0u8; 20];
    put(b" (", &mut n);
    put(
        crate::base::text::decimal(key.len() as u64, &mut digits),
        &mut n,
    );
    put(b" characters)", &mut n);
    n
}

/// The network tokens (`AgentExt.h`): the WebNet channel's and the MCP
/// server's, settable at run time (`agent_config web-token|mcp-token`,
/// `agent_token_set`) over the build's `PKG_AGENT_WEB_TOKEN` and
/// `PKG_AGENT_MCP_TOKEN`, and kept in the state file when the board has one
/// (`PKG_AGENT_STATE_FILE`: written whole to `<file>.tmp`, then renamed
/// over it). A token is 16 to 127 visible ASCII characters; it is compared
/// in constant time, shown only masked and never logged.
#[cfg(any(feature = "mcp-server", feature = "channel-webnet"))]
pub mod tokens {
    use crate::ffi_fn;
    use crate::rtt::sleep_cell::SleepCell;
    use core::ffi::{c_char, c_int, CStr};

    pub const AGENT_TOKEN_WEB: c_int = 0;
    pub const AGENT_TOKEN_MCP: c_int = 1;
    /// The shortest token taken.
    pub const TOKEN_MIN: usize = 16;
    /// The longest token taken.
    pub const TOKEN_MAX: usize = 127;
    /// Room for the state file's text.
    const STATE_MAX: usize = 384;

    /// Whose token.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Which {
        Web,
        Mcp,
    }

    impl Which {
        fn index(self) -> usize {
            match self {
                Which::Web => 0,
                Which::Mcp => 1,
            }
        }
        fn key(self) -> &'static [u8] {
            match self {
                Which::Web => b"web-token",
                Which::Mcp => b"mcp-token",
            }
        }
        pub fn from_c(which: c_int) -> Option<Which> {
            match which {
                AGENT_TOKEN_WEB => Some(Which::Web),
                AGENT_TOKEN_MCP => Some(Which::Mcp),
                _ => None,
            }
        }
    }

    /// Why a token was not taken.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Refused {
        /// Shorter than [`TOKEN_MIN`] (its length).
        TooShort(usize),
        TooLong,
        /// Only visible ASCII (no blanks, no control characters).
        BadCharacter,
        /// Empty, but the option that allows no token is off.
        EmptyNotAllowed,
    }

    /// Whether the new value reached the state file.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kept {
        /// Written to the state file.
        Saved,
        /// No state file: kept until reboot.
        UntilReboot,
        /// The state file could not be written: kept until reboot.
        SaveFailed,
    }

    #[derive(Clone, Copy)]
    struct Slot {
        /// Set at run time (else the build's value applies).
        set: bool,
        len: u8,
        bytes: [u8; TOKEN_MAX],
    }

    const EMPTY: Slot = Slot {
        set: false,
        len: 0,
        bytes: [0; TOKEN_MAX],
    };

    impl Slot {
        fn value(&self) -> &[u8] {
            self.bytes.get(..self.len as usize).unwrap_or_default()
        }
    }

    struct Store {
        /// The state file was read.
        loaded: bool,
        slots: [Slot; 2],
        /// A state file chosen at run time (tests).
        file: Option<&'static CStr>,
    }

    static STORE: SleepCell<Store> = SleepCell::new(Store {
        loaded: false,
        slots: [EMPTY; 2],
        file: None,
    });

    use crate::rtt::glue::{agent_glue_state_file, agent_glue_state_read, agent_glue_state_write};

    fn with<R>(f: impl FnOnce(&mut Store) -> R) -> R {
        STORE.with(|store| {
            if !store.loaded {
                store.loaded = true;
                load(store);
            }
            f(store)
        })
    }

    fn state_file(store: &Store) -> &'static CStr {
        let file = store.file.unwrap_or_else(|| {
            // SAFETY: the glue returns a static string or NULL.
            let p = unsafe { agent_glue_state_file() };
            if p.is_null() {
                c""
            } else {
                // SAFETY: non-NULL: a NUL-terminated string that lives on
                // (a literal, or the host's environment).
                unsafe { CStr::from_ptr(p) }
            }
        });
        file
    }

    /// Check a token's form (not its length's lower bound for empty).
    pub fn check(value: &[u8]) -> Result<(), Refused> {
        if value.len() > TOKEN_MAX {
            return Err(Refused::TooLong);
        }
        if value.iter().any(|&b| !(0x21..=0x7e).contains(&b)) {
            return Err(Refused::BadCharacter);
        }
        if !value.is_empty() && value.len() < TOKEN_MIN {
            return Err(Refused::TooShort(value.len()));
        }
        Ok(())
    }

    /// Read the state file's tokens (a missing or unreadable file, or a
    /// bad line, leaves the build's values).
    fn load(store: &mut Store) {
        let path = state_file(store);
        if path.is_empty() {
            return;
        }
        let mut buf = [0u8; STATE_MAX];
        // SAFETY: `buf` is writable for its length; the path is NUL-terminated.
        let n = unsafe {
            agent_glue_state_read(
                path.as_ptr(),
                buf.as_mut_ptr() as *mut c_char,
                buf.len() as c_int,
            )
        };
        if n <= 0 {
            return;
        }
        let text = buf.get(..n as usize).unwrap_or_default();
        for line in text.split(|&b| b == b'\n') {
            let Some(eq) = line.iter().position(|&b| b == b'=') else {
                continue;
            };
            let (key, value) = (
                line.get(..eq).unwrap_or_default(),
                line.get(eq + 1..).unwrap_or_default(),
            );
            let value = crate::base::text::strip_last(value, b'\r');
            for which in [Which::Web, Which::Mcp] {
                if key == which.key() && check(value).is_ok() {
                    if let Some(slot) = store.slots.get_mut(which.index()) {
                        *slot = EMPTY;
                        slot.set = true;
                        slot.len = crate::base::text::copy_prefix(&mut slot.bytes, value) as u8;
                    }
                }
            }
        }
    }

    fn save(store: &Store) -> Kept {
        let path = state_file(store);
        if path.is_empty() {
            return Kept::UntilReboot;
        }
        let mut text = [0u8; STATE_MAX];
        let mut n = 0;
        let mut put = |b: &[u8]| {
            n += crate::base::text::copy_prefix(text.get_mut(n..).unwrap_or_default(), b)
        };
        put(b"# rtt-agent state\n");
        for which in [Which::Web, Which::Mcp] {
            if let Some(slot) = store.slots.get(which.index()).filter(|s| s.set) {
                put(which.key());
                put(b"=");
                put(slot.value());
                put(b"\n");
            }
        }
        // SAFETY: `text` holds `n` bytes; the path is NUL-terminated.
        let rc = unsafe {
            agent_glue_state_write(path.as_ptr(), text.as_ptr() as *const c_char, n as c_int)
        };
        if rc == 0 {
            Kept::Saved
        } else {
            crate::log_w!(
                "state file ",
                path,
                ": cannot write it; the token holds until reboot"
            );
            Kept::SaveFailed
        }
    }

    /// Run `f` on the token in effect: the run-time one when set, else
    /// `base` (the build's, or a test's).
    pub fn with_token<R>(which: Which, base: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
        with(
            |store| match store.slots.get(which.index()).filter(|s| s.set) {
                Some(slot) => f(slot.value()),
                // A build token that is too short (or has blanks) counts as none.
                None if check(base).is_ok() => f(base),
                None => f(b""),
            },
        )
    }

    /// Log, at a start, that the build's token for `which` is ignored
    /// because it is not a valid token (too short), unless one set at run
    /// time replaces it. Never logs the token.
    pub fn warn_if_ignored(which: Which, base: &[u8], option: &str) {
        let runtime = with(|store| store.slots.get(which.index()).is_some_and(|s| s.set));
        if runtime || base.is_empty() || check(base).is_ok() {
            return;
        }
        crate::log_w!(
            option,
            " is ignored: a token is ",
            TOKEN_MIN,
            " to ",
            TOKEN_MAX,
            " visible characters (this one has ",
            base.len(),
            ")"
        );
    }

    /// Set `which`'s token at run time (`None`: back to the build's value;
    /// empty: no token, only when `empty_allowed`), and keep it in the
    /// state file when there is one.
    pub fn set(which: Which, value: Option<&[u8]>, empty_allowed: bool) -> Result<Kept, Refused> {
        if let Some(v) = value {
            check(v)?;
            if v.is_empty() && !empty_allowed {
                return Err(Refused::EmptyNotAllowed);
            }
        }
        Ok(with(|store| {
            if let Some(slot) = store.slots.get_mut(which.index()) {
                *slot = EMPTY;
                if let Some(v) = value {
                    slot.set = true;
                    slot.len = crate::base::text::copy_prefix(&mut slot.bytes, v) as u8;
                }
            }
            crate::log_i!(
                if which == Which::Web { "web" } else { "mcp" },
                " token changed at run time"
            );
            save(store)
        }))
    }

    /// Forget the run-time tokens in memory, as a reboot does (the state
    /// file, if any, is read again at the next use); `file` replaces the
    /// board's state file (tests, the simulator). Not for a board.
    pub fn reboot(file: Option<&'static CStr>) {
        STORE.with(|store| {
            store.loaded = false;
            store.slots = [EMPTY; 2];
            store.file = file;
        })
    }

    /// How a token is shown: its length only ("(none)" when empty).
    pub fn masked(token: &[u8], out: &mut [u8; 48]) -> usize {
        let mut n = 0;
        let mut put =
            |b: &[u8]| n += crate::base::text::copy_prefix(out.get_mut(n..).unwrap_or_default(), b);
        if token.is_empty() {
            put(b"(none)");
        } else {
            let mut d = [0u8; 20];
            put(b"******** (");
            put(crate::base::text::decimal(token.len() as u64, &mut d));
            put(b" characters)");
        }
        n
    }

    /// The token in effect for `which` and whether no token is allowed
    /// there; `None` when that part is not built.
    fn part(which: Which) -> Option<(&'static CStr, bool)> {
        match which {
            #[cfg(feature = "channel-webnet")]
            Which::Web => Some((
                crate::runtime::settings::web::base_token(),
                crate::runtime::settings::web::open_chat_allowed(),
            )),
            #[cfg(feature = "mcp-server")]
            Which::Mcp => Some((
                crate::runtime::settings::mcp_server::base_token(),
                crate::runtime::settings::mcp_server::anonymous_allowed(),
            )),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// `agent_config`'s setter: the outcome in one console line.
    pub fn set_from_console(which: Which, value: &[u8]) -> bool {
        use crate::rtt::log::console_print;
        let name: &[u8] = if which == Which::Web {
            b"web-token"
        } else {
            b"mcp-token"
        };
        let Some((_, allowed)) = part(which) else {
            console_print(b"agent_config: that part is not built\n");
            return false;
        };
        // "none" (too short to be a token) or "" asks for no token.
        let value = if value == b"none" { &b""[..] } else { value };
        let mut a = [0u8; 20];
        let mut b = [0u8; 20];
        let result = set(which, Some(value), allowed);
        let said: [&[u8]; 5] = match result {
            Err(Refused::TooShort(n)) => [
                b"refused: a token needs at least ",
                crate::base::text::decimal(TOKEN_MIN as u64, &mut a),
                b" characters (this one has ",
                crate::base::text::decimal(n as u64, &mut b),
                b"); not changed",
            ],
            Err(Refused::TooLong) => [
                b"refused: at most ",
                crate::base::text::decimal(TOKEN_MAX as u64, &mut a),
                b" characters; not changed",
                b"",
                b"",
            ],
            Err(Refused::BadCharacter) => [
                b"refused: visible ASCII characters only (no blanks); not changed",
                b"",
                b"",
                b"",
                b"",
            ],
            Err(Refused::EmptyNotAllowed) => [
                b"refused: no token needs ",
                if which == Which::Web {
                    b"PKG_AGENT_WEB_OPEN_CHAT"
                } else {
                    b"PKG_AGENT_MCP_ALLOW_ANONYMOUS"
                },
                b" (off in this firmware); not changed",
                b"",
                b"",
            ],
            Ok(Kept::Saved) => [b"set (kept in the state file)", b"", b"", b"", b""],
            Ok(Kept::UntilReboot) => [b"set until reboot (no state file)", b"", b"", b"", b""],
            Ok(Kept::SaveFailed) => [
                b"set until reboot (the state file could not be written)",
                b"",
                b"",
                b"",
                b"",
            ],
        };
        console_print(name);
        console_print(b": ");
        for p in said {
            console_print(p);
        }
        console_print(b"\n");
        result.is_ok()
    }

    /// `agent_config`'s display of `which`'s token (masked); nothing when
    /// that part is not built.
    pub fn show(which: Which, out: &mut [u8; 48]) -> Option<usize> {
        let (base, _) = part(which)?;
        Some(with_token(which, base.to_bytes(), |t| masked(t, out)))
    }

    /// Set the WebNet channel's (`AGENT_TOKEN_WEB`) or the MCP server's
    /// (`AGENT_TOKEN_MCP`) token at run time; see `AgentExt.h`.
    #[no_mangle]
    pub unsafe extern "C" fn agent_token_set(which: c_int, token: *const c_char) -> c_int {
        ffi_fn!(failure = -3, {
            let Some((which, (_, allowed))) =
                Which::from_c(which).and_then(|w| Some((w, part(w)?)))
            else {
                return -3;
            };
            // SAFETY: NULL or a NUL-terminated string, borrowed for the call.
            let value = unsafe { crate::base::text::cstr_arg(token) }.map(CStr::to_bytes);
            match set(which, value, allowed) {
                Ok(Kept::Saved | Kept::UntilReboot) => 0,
                Ok(Kept::SaveFailed) => 1,
                Err(Refused::EmptyNotAllowed) => -2,
                Err(_) => -1,
            }
        })
    }

    /// Whether `which` needs a token now: 1 yes, 0 no (none set), -1 not
    /// built; see `AgentExt.h`.
    #[no_mangle]
    pub extern "C" fn agent_token_is_set(which: c_int) -> c_int {
        ffi_fn!(failure = -1, {
            let Some(which) = Which::from_c(which) else {
                return -1;
            };
            let Some((base, _)) = part(which) else {
                return -1;
            };
            with_token(which, base.to_bytes(), |t| (!t.is_empty()) as c_int)
        })
    }
}
