//! The agent's settings: what tests, the simulator and `agent_config`
//! chose instead of the board's `PKG_AGENT_*` options. They are one value,
//! [`Settings`], behind one lock; a request or a start reads one
//! [`snapshot`], so a change made meanwhile applies to the next one, never
//! half to this one. A `None` keeps the board's option.
//!
//! (The URL, key and model that `agent_config` sets are strings of any
//! length; they live in `runtime::config`, snapshotted per request beside
//! this.)
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

use crate::rtt::sleep_cell::SleepCell;
use crate::wire::stream::Format;

/// Replacements for the chat client's caps and network options (the
/// simulator and tests use them to exercise the limit paths without a new
/// build).
#[derive(Clone, Copy, Debug, Default)]
pub struct ChatOverrides {
    pub max_content: Option<usize>,
    pub max_reasoning: Option<usize>,
    pub max_tool_args: Option<usize>,
    pub max_token: Option<usize>,
    pub timeout_ms: Option<usize>,
    pub retries: Option<usize>,
    pub retry_base_ms: Option<usize>,
    /// `PKG_AGENT_REQUEST_TIMEOUT_MS`: the whole request's deadline.
    pub request_timeout_ms: Option<usize>,
}

/// Every run-time choice; `None` keeps the board's option.
#[derive(Clone, Copy, Default)]
pub struct Settings {
    pub chat: ChatOverrides,
    /// The wire format (`agent_config format`).
    pub format: Option<Format>,
    /// Summaries of at most this many bytes; `Some(0)`: off
    /// (`PKG_AGENT_SUMMARY_MAX_LEN`).
    pub summary_max_len: Option<usize>,
    /// Tools as text (`true`) or native (`agent_config tools`,
    /// `PKG_AGENT_TOOLS_TEXT`).
    pub tools_as_text: Option<bool>,
    /// The native-mode fallback (`PKG_AGENT_TEXT_CALL_FALLBACK`).
    pub text_call_fallback: Option<bool>,
    /// How long a Debug or WebNet sender waits for its reply
    /// (`PKG_AGENT_REPLY_TIMEOUT_MS`).
    pub reply_timeout_ms: Option<u32>,
    #[cfg(feature = "channel-webnet")]
    pub web: web::Overrides,
    #[cfg(feature = "mcp-server")]
    pub mcp_server: mcp_server::Overrides,
    /// The largest JSON-RPC message the MCP client takes
    /// (`PKG_AGENT_MCP_MAX_RESPONSE`).
    #[cfg(feature = "mcp-client")]
    pub mcp_max_response: Option<usize>,
}

static CURRENT: SleepCell<Settings> = SleepCell::new(Settings {
    chat: ChatOverrides {
        max_content: None,
        max_reasoning: None,
        max_tool_args: None,
        max_token: None,
        timeout_ms: None,
        retries: None,
        retry_base_ms: None,
        request_timeout_ms: None,
    },
    format: None,
    summary_max_len: None,
    tools_as_text: None,
    text_call_fallback: None,
    reply_timeout_ms: None,
    #[cfg(feature = "channel-webnet")]
    web: web::Overrides {
        token: None,
        open_chat: None,
    },
    #[cfg(feature = "mcp-server")]
    mcp_server: mcp_server::Overrides::NONE,
    #[cfg(feature = "mcp-client")]
    mcp_max_response: None,
});

/// The settings now, as one copy.
pub fn snapshot() -> Settings {
    CURRENT.with(|s| *s)
}

/// Change some settings; the next snapshot sees all of the change at once.
pub fn change(f: impl FnOnce(&mut Settings)) {
    CURRENT.with(f);
}

#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
use crate::rtt::glue::agent_api_format;

/// The board's `PKG_AGENT_API_FORMAT`, when it names a built-in format.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
fn board_format() -> Option<Format> {
    // SAFETY: a NUL-terminated const array in the glue, never written.
    let name = unsafe { core::ffi::CStr::from_ptr(agent_api_format.as_ptr()) };
    Format::from_name(name.to_bytes())
}

/// Choose the format at run time (`None`: back to the board's choice and
/// the URL). Takes effect from the next request.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub fn set_format(format: Option<Format>) {
    change(|s| s.format = format);
}

/// The run-time choice, if any.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub fn format_setting() -> Option<Format> {
    snapshot().format
}

/// The format of a request to `url` under `settings` (see the module
/// documentation).
pub fn format_for(url: &core::ffi::CStr, settings: &Settings) -> Format {
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    {
        if let Some(f) = settings.format.or_else(board_format) {
            return f;
        }
        Format::from_url(url.to_bytes())
    }
    // Without an adapter: not even the URL's length is taken.
    #[cfg(not(any(feature = "provider-anthropic", feature = "provider-ollama")))]
    {
        let _ = (url, settings);
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
    use core::ffi::CStr;

    use crate::rtt::glue::{agent_glue_web_open_chat, agent_glue_web_token};

    /// The WebNet channel's run-time choices.
    #[derive(Clone, Copy, Default)]
    pub struct Overrides {
        /// Instead of PKG_AGENT_WEB_TOKEN (an empty one disables the
        /// configuration endpoints).
        pub token: Option<&'static CStr>,
        /// Instead of PKG_AGENT_WEB_OPEN_CHAT.
        pub open_chat: Option<bool>,
    }

    /// Use `token` instead of PKG_AGENT_WEB_TOKEN (`None`: the board's again;
    /// an empty one disables the configuration endpoints). A token set at run
    /// time (`agent_config web-token`) still takes precedence.
    pub fn set_token(token: Option<&'static CStr>) {
        super::change(|s| s.web.token = token);
    }

    /// Use `open` instead of PKG_AGENT_WEB_OPEN_CHAT (`None`: the board's).
    pub fn set_open_chat(open: Option<bool>) {
        super::change(|s| s.web.open_chat = open);
    }

    /// Whether chat is open to anyone while no token is set
    /// (PKG_AGENT_WEB_OPEN_CHAT).
    pub fn open_chat_allowed() -> bool {
        // SAFETY: a plain getter of the glue.
        super::snapshot()
            .web
            .open_chat
            .unwrap_or_else(|| unsafe { agent_glue_web_open_chat() } != 0)
    }

    /// The build's token (or the one of [`set_token`]), which one set at run
    /// time replaces.
    pub fn base_token() -> &'static CStr {
        super::snapshot().web.token.unwrap_or_else(|| {
            // SAFETY: the glue returns a static NUL-terminated string.
            unsafe { CStr::from_ptr(agent_glue_web_token()) }
        })
    }
}

/// The MCP server's settings: the board's `PKG_AGENT_MCP_*` options (from
/// the glue), or what tests and the simulator chose instead
/// ([`mcp_server::set_overrides`]). A token set at run time
/// (`agent_config mcp-token`, `crate::runtime::config::tokens`) takes
/// precedence over the build's.
#[cfg(feature = "mcp-server")]
pub mod mcp_server {
    use core::ffi::{c_int, CStr};

    use crate::rtt::glue::{agent_glue_mcp_option, agent_glue_mcp_text};

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

    impl Overrides {
        pub(super) const NONE: Overrides = Overrides {
            enabled: None,
            port: None,
            token: None,
            allow_anonymous: None,
            origins: None,
            max_body: None,
            max_sessions: None,
            session_idle_s: None,
            page_size: None,
        };
    }

    /// Use `o` from the next agent start on.
    pub fn set_overrides(o: Overrides) {
        super::change(|s| s.mcp_server = o);
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
        super::snapshot().mcp_server
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
