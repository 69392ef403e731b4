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
