//! The provider adapter layer: which wire format a request speaks, and the
//! request writer for each (the stream reader for each is in
//! [`crate::stream`], chosen by the same [`Format`]).
//!
//! The format is, in order of precedence:
//! 1. the run-time choice ([`set_format`]; `agent_config format <name>`);
//! 2. the board's `PKG_AGENT_API_FORMAT` (`openai`, `anthropic`, `ollama`;
//!    empty or `auto` means no choice), compiled into the glue as
//!    `agent_api_format`;
//! 3. the URL ([`Format::from_url`]): `…/v1/messages` is Anthropic's,
//!    `…/api/chat` Ollama's, anything else OpenAI's.
//!
//! A format whose feature is not built in is never chosen. Without the
//! `provider-*` features everything here reduces to the OpenAI writer.
//!
//! Every writer walks the caller's cJSON trees straight into the sink, as
//! [`super::request`] does (once to count, once to send): nothing is copied.

use super::request::{ByteCounter, ByteSink, ChatRequest, WriteError};
use crate::stream::Format;
use core::ffi::CStr;

#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
mod choice {
    use super::Format;
    use core::sync::atomic::{AtomicU8, Ordering};

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
pub fn format_for(url: &CStr) -> Format {
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    if let Some(f) = choice::get().or_else(choice::board) {
        return f;
    }
    Format::from_url(url.to_bytes())
}

/// Write the request body in `format`.
///
/// # Safety
/// As for [`super::request::write_body`].
pub unsafe fn write_body(
    format: Format,
    req: &ChatRequest<'_>,
    out: &mut dyn ByteSink,
) -> Result<(), WriteError> {
    match format {
        // SAFETY: our caller's guarantees on `req`'s trees.
        Format::OpenAi => unsafe { super::request::write_body(req, out) },
        // SAFETY: as above.
        #[cfg(feature = "provider-anthropic")]
        Format::Anthropic => unsafe { super::anthropic::write_body(req, out) },
        // SAFETY: as above.
        #[cfg(feature = "provider-ollama")]
        Format::Ollama => unsafe { super::ollama::write_body(req, out) },
    }
}

/// The exact length [`write_body`] will produce.
///
/// # Safety
/// As for [`write_body`].
pub unsafe fn body_length(format: Format, req: &ChatRequest<'_>) -> Result<usize, WriteError> {
    let mut counter = ByteCounter::default();
    // SAFETY: our caller gives the guarantees `write_body` needs.
    unsafe { write_body(format, req, &mut counter)? };
    Ok(counter.0)
}

/// Shared by the writers of the other formats.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
#[allow(non_upper_case_globals)]
pub(crate) mod common {
    use super::super::request::{cstr_bytes, write_string, ByteSink, WriteError};
    use crate::cjson_sys::*;
    use crate::json;
    use core::ffi::CStr;

    /// `object[key]` as bytes when it is a string.
    ///
    /// # Safety
    /// `object` is NULL or a live cJSON item that outlives `'a`.
    pub unsafe fn str_of<'a>(object: *const cJSON, key: &CStr) -> Option<&'a [u8]> {
        // SAFETY: our caller's contract.
        unsafe { json::get_str(object, key) }.map(CStr::to_bytes)
    }

    /// The type of an item (NULL: `cJSON_Invalid`).
    ///
    /// # Safety
    /// `item` is NULL or live.
    pub unsafe fn type_of(item: *const cJSON) -> core::ffi::c_int {
        if item.is_null() {
            cJSON_Invalid
        } else {
            // SAFETY: non-NULL and live (contract).
            unsafe { (*item).type_ & 0xFF }
        }
    }

    /// Is `text` exactly one JSON object (whitespace around it allowed)?
    /// Tool arguments go into Anthropic's and Ollama's requests as JSON,
    /// not as a string: anything else would make the whole body invalid.
    pub fn is_object_text(text: &[u8]) -> bool {
        crate::stream::is_json_object(text)
    }

    /// Write a tool call's `arguments` string as the JSON object it holds,
    /// or `{}` when it holds none (empty, or not an object).
    pub fn write_arguments(args: &[u8], out: &mut dyn ByteSink) -> Result<(), WriteError> {
        if is_object_text(args) {
            out.put(args)
        } else {
            out.put(b"{}")
        }
    }

    /// The text of a message's `content`: a string as it is, an array of
    /// content parts as its `text` parts joined by `\n`, anything else as "".
    /// Written as one JSON string.
    ///
    /// # Safety
    /// `content` is NULL or a live cJSON item unchanged during the call.
    pub unsafe fn write_text_of(
        content: *const cJSON,
        out: &mut dyn ByteSink,
    ) -> Result<(), WriteError> {
        // SAFETY: `content` is NULL or live (contract).
        match unsafe { type_of(content) } {
            cJSON_String => {
                // SAFETY: a live string item (contract).
                let text = unsafe { cstr_bytes((*content).valuestring) }.unwrap_or(b"");
                write_string(text, out)
            }
            cJSON_Array => {
                // Written as one string: the escaped text of each part, the
                // quotes once.
                out.put(b"\"")?;
                let mut first = true;
                // SAFETY: a live array (contract).
                for part in unsafe { json::children(content) } {
                    // SAFETY: `part` is a live element.
                    let Some(text) = (unsafe { str_of(part, c"text") }) else {
                        continue;
                    };
                    if !first {
                        out.put(b"\\n")?;
                    }
                    first = false;
                    write_string(text, &mut Unquoted(out))?;
                }
                out.put(b"\"")
            }
            _ => out.put(b"\"\""),
        }
    }

    /// Passes a JSON string's escaped text on, without its two quotes.
    struct Unquoted<'a>(&'a mut dyn ByteSink);

    impl ByteSink for Unquoted<'_> {
        fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
            // `write_string` puts each quote on its own and escapes every
            // quote inside, so a lone `"` is always one of the two.
            if bytes == b"\"" {
                Ok(())
            } else {
                self.0.put(bytes)
            }
        }
    }

    /// Write a tool's JSON Schema with the package's types mapped, or an
    /// empty object schema when the tool has none.
    ///
    /// # Safety
    /// `schema` is NULL or a live cJSON item unchanged during the call.
    #[cfg(feature = "provider-anthropic")]
    pub unsafe fn write_schema(
        schema: *const cJSON,
        out: &mut dyn ByteSink,
    ) -> Result<(), WriteError> {
        // SAFETY: `schema` is NULL or live (contract).
        if unsafe { type_of(schema) } == cJSON_Object {
            // SAFETY: non-NULL and live.
            unsafe { super::super::request::write_value(schema, true, 1, out) }
        } else {
            out.put(b"{\"type\":\"object\",\"properties\":{}}")
        }
    }
}
