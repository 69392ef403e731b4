//! The agent's settings.
//!
//! # The wire format
//! A request's format is, in order of precedence:
//! 1. the run-time choice ([`set_format`]; `agent_config format <name>`);
//! 2. the board's `PKG_AGENT_API_FORMAT` (`openai`, `anthropic`, `ollama`;
//!    empty or `auto` means no choice), compiled into the glue as
//!    `agent_api_format`;
//! 3. the URL ([`Format::from_url`]): `…/v1/messages` is Anthropic's,
//!    `…/api/chat` Ollama's, anything else OpenAI's.
//!
//! A format whose feature is not built in is never chosen.

use crate::wire::stream::Format;

#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
mod choice {
    use crate::rtt::atomic::{AtomicU8, Ordering};
    use crate::wire::stream::Format;

    /// 0: no run-time choice; else 1 + the format's number.
    static FORMAT: AtomicU8 = AtomicU8::new(0);

    fn number(f: Format) -> u8 {
        match f {
            Format::OpenAi => 1,
            #[cfg(feature = "provider-anthropic")]
            Format::Anthropic => 2,
            #[cfg(feature = "provider-ollama")]
            Format::Ollama => 3,
        }
    }

    pub fn set(f: Option<Format>) {
        FORMAT.store(f.map_or(0, number), Ordering::SeqCst);
    }

    pub fn get() -> Option<Format> {
        match FORMAT.load(Ordering::SeqCst) {
            1 => Some(Format::OpenAi),
            #[cfg(feature = "provider-anthropic")]
            2 => Some(Format::Anthropic),
            #[cfg(feature = "provider-ollama")]
            3 => Some(Format::Ollama),
            _ => None,
        }
    }

    extern "C" {
        /// `PKG_AGENT_API_FORMAT` (glue/agent_board_config.c).
        static agent_api_format: [core::ffi::c_char; 0];
    }

    /// The board's `PKG_AGENT_API_FORMAT`, when it names a built-in format.
    pub fn board() -> Option<Format> {
        // SAFETY: a NUL-terminated const array in the glue, never written.
        let name = unsafe { core::ffi::CStr::from_ptr(agent_api_format.as_ptr()) };
        Format::from_name(name.to_bytes())
    }
}

/// Choose the format at run time (`None`: back to the board's choice and
/// the URL). Takes effect from the next request.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub fn set_format(format: Option<Format>) {
    choice::set(format);
}

/// The run-time choice, if any.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub fn format_setting() -> Option<Format> {
    choice::get()
}

/// The format of a request to `url` (see the module documentation).
pub fn format_for(url: &core::ffi::CStr) -> Format {
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    {
        if let Some(f) = choice::get().or_else(choice::board) {
            return f;
        }
        Format::from_url(url.to_bytes())
    }
    // Without an adapter: not even the URL's length is taken.
    #[cfg(not(any(feature = "provider-anthropic", feature = "provider-ollama")))]
    {
        let _ = url;
        Format::OpenAi
    }
}

/// The WebNet channel's token and open chat: the board's
/// `PKG_AGENT_WEB_TOKEN` and `PKG_AGENT_WEB_OPEN_CHAT`, or what tests and
/// the simulator chose instead. A token set at run time
/// (`agent_config web-token`, `crate::runtime::config::tokens`) takes
/// precedence over both.
#[cfg(feature = "channel-webnet")]
pub mod web {
    use crate::rtt::atomic::{AtomicPtr, AtomicU8, Ordering};
    use core::ffi::{c_char, c_int, CStr};

    extern "C" {
        fn agent_glue_web_token() -> *const c_char;
        fn agent_glue_web_open_chat() -> c_int;
    }

    /// A token chosen at run time (tests, the simulator); NULL: the board's
    /// PKG_AGENT_WEB_TOKEN.
    static TOKEN_OVERRIDE: AtomicPtr<c_char> = AtomicPtr::new(core::ptr::null_mut());

    /// Use `token` instead of PKG_AGENT_WEB_TOKEN (`None`: the board's again;
    /// an empty one disables the configuration endpoints). A token set at run
    /// time (`agent_config web-token`) still takes precedence.
    pub fn set_token(token: Option<&'static CStr>) {
        TOKEN_OVERRIDE.store(
            token.map_or(core::ptr::null_mut(), |t| t.as_ptr() as *mut c_char),
            Ordering::Release,
        );
    }

    /// Open chat chosen at run time (tests, the simulator): 0 the board's
    /// PKG_AGENT_WEB_OPEN_CHAT, 1 off, 2 on.
    static OPEN_CHAT: AtomicU8 = AtomicU8::new(0);

    /// Use `open` instead of PKG_AGENT_WEB_OPEN_CHAT (`None`: the board's).
    pub fn set_open_chat(open: Option<bool>) {
        OPEN_CHAT.store(
            match open {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            },
            Ordering::Release,
        );
    }

    /// Whether chat is open to anyone while no token is set
    /// (PKG_AGENT_WEB_OPEN_CHAT).
    pub fn open_chat_allowed() -> bool {
        match OPEN_CHAT.load(Ordering::Acquire) {
            1 => false,
            2 => true,
            // SAFETY: a plain getter of the glue.
            _ => (unsafe { agent_glue_web_open_chat() }) != 0,
        }
    }

    /// The build's token (or the one of [`set_token`]), which one set at run
    /// time replaces.
    pub fn base_token() -> &'static CStr {
        let chosen = TOKEN_OVERRIDE.load(Ordering::Acquire);
        // SAFETY: a `&'static CStr` (set_token) or the glue's static string.
        unsafe {
            CStr::from_ptr(if chosen.is_null() {
                agent_glue_web_token()
            } else {
                chosen
            })
        }
    }
}

/// The MCP server's settings: the board's `PKG_AGENT_MCP_*` options (from
/// the glue), or what tests and the simulator chose instead
/// ([`mcp_server::set_overrides`]). A token set at run time
/// (`agent_config mcp-token`, `crate::runtime::config::tokens`) takes
/// precedence over the build's.
#[cfg(feature = "mcp-server")]
pub mod mcp_server {
    use crate::rtt::sleep_lock::SleepLock;
    use core::cell::UnsafeCell;
    use core::ffi::{c_char, c_int, CStr};

    extern "C" {
        fn agent_glue_mcp_option(which: c_int) -> c_int;
        fn agent_glue_mcp_text(which: c_int) -> *const c_char;
    }

    /// Settings chosen at run time (tests, the simulator); `None` fields keep
    /// the board's.
    #[derive(Clone, Copy, Default)]
    pub struct Overrides {
        pub enabled: Option<bool>,
        /// 0: any free port (the host; see the server's `port`).
        pub port: Option<u16>,
        pub token: Option<&'static CStr>,
        /// No token allowed (`PKG_AGENT_MCP_ALLOW_ANONYMOUS`).
        pub allow_anonymous: Option<bool>,
        pub origins: Option<&'static CStr>,
        pub max_body: Option<usize>,
        pub max_sessions: Option<usize>,
        pub session_idle_s: Option<u32>,
        pub page_size: Option<usize>,
    }

    struct OverrideCell(UnsafeCell<Overrides>);
    // SAFETY: reached only under OVERRIDES_LOCK.
    unsafe impl Sync for OverrideCell {}
    static OVERRIDES_LOCK: SleepLock = SleepLock::new();
    static OVERRIDES: OverrideCell = OverrideCell(UnsafeCell::new(Overrides {
        enabled: None,
        port: None,
        token: None,
        allow_anonymous: None,
        origins: None,
        max_body: None,
        max_sessions: None,
        session_idle_s: None,
        page_size: None,
    }));

    /// Use `o` from the next agent start on.
    pub fn set_overrides(o: Overrides) {
        let _held = OVERRIDES_LOCK.lock();
        // SAFETY: under the lock.
        unsafe { *OVERRIDES.0.get() = o };
    }

    pub(crate) fn option(which: c_int) -> usize {
        // SAFETY: a plain getter of the glue.
        unsafe { agent_glue_mcp_option(which) }.max(0) as usize
    }

    pub(crate) fn text(which: c_int) -> &'static CStr {
        // SAFETY: the glue returns string literals (static, NUL-terminated).
        unsafe { CStr::from_ptr(agent_glue_mcp_text(which)) }
    }

    pub(crate) fn overrides() -> Overrides {
        let _held = OVERRIDES_LOCK.lock();
        // SAFETY: under the lock.
        unsafe { *OVERRIDES.0.get() }
    }

    /// The token of the build (or of the tests' overrides), which one set at
    /// run time replaces.
    pub fn base_token() -> &'static CStr {
        overrides().token.unwrap_or_else(|| text(1))
    }

    /// Whether the server may run without a token
    /// (`PKG_AGENT_MCP_ALLOW_ANONYMOUS`).
    pub fn anonymous_allowed() -> bool {
        overrides().allow_anonymous.unwrap_or(option(9) != 0)
    }
}
