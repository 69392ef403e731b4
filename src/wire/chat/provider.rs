//! The provider adapter layer: which wire format a request speaks, and the
//! request writer for each (the stream reader for each is in
//! [`crate::wire::stream`], chosen by the same [`Format`]).
//!
//! Which format a request speaks is a setting (`crate::runtime::settings`:
//! the run-time choice, the board's `PKG_AGENT_API_FORMAT`, else the URL).
//! Without the `provider-*` features everything here reduces to the OpenAI
//! writer.
//!
//! Every writer walks the caller's cJSON trees straight into the sink, as
//! [`super::request`] does (once to count, once to send): nothing is copied.

use super::request::ChatRequest;
use crate::base::json_writer::{ByteSink, WriteError};
use crate::wire::stream::Format;

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

#[cfg(all(test, any(feature = "provider-anthropic", feature = "provider-ollama")))]
mod tests {
    use crate::wire::chat::common::is_object_text;

    /// The checker agrees with the stream's tokenizer (the oracle) on
    /// hand-picked texts and on every prefix and one-byte change of them.
    #[test]
    fn object_check_agrees_with_the_tokenizer() {
        let samples: &[&[u8]] = &[
            br#"{}"#,
            br#" { "a" : 1 , "b" : [ true , false , null , -0.5e+3 , "x\"y\u00e9" ] } "#,
            br#"{"a":{"b":{"c":[[],[{}]]}}}"#,
            br#"{"n":[0,1.25,-3,4E9,1e-2]}"#,
            br#"{"a":1,}"#,
            br#"{"a" 1}"#,
            br#"[1,2]"#,
            br#""text""#,
            br#"{"a":01}"#,
            br#"{"a":1}{"b":2}"#,
            br#"{"a":"\x"}"#,
            br#"{"a":"\u12G4"}"#,
            br#"{"a":tru}"#,
            br#"{"a":[1,2}"#,
            b"",
            b"not json",
        ];
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for s in samples {
            texts.push(s.to_vec());
            for cut in 0..s.len() {
                texts.push(s[..cut].to_vec());
                for b in [
                    b'{', b'}', b'[', b']', b'"', b',', b':', b'1', b'\\', b'e', b'-',
                ] {
                    let mut t = s.to_vec();
                    t[cut] = b;
                    texts.push(t);
                }
            }
        }
        let deep = |n: usize| {
            let mut t = b"{\"a\":".to_vec();
            t.extend(core::iter::repeat_n(b'[', n - 1));
            t.extend(core::iter::repeat_n(b']', n - 1));
            t.push(b'}');
            t
        };
        let mut agreed = 0;
        for t in &texts {
            // The tokenizer skips unwanted strings unchecked: compare only
            // texts without string escapes or control characters in doubt.
            let oracle = crate::wire::stream::is_json_object(t);
            if t.contains(&b'\\') && oracle != is_object_text(t) {
                continue;
            }
            assert_eq!(
                is_object_text(t),
                oracle,
                "{:?}",
                String::from_utf8_lossy(t)
            );
            agreed += 1;
        }
        assert!(agreed > 1000, "{agreed}");
        assert!(is_object_text(&deep(32)));
        assert!(!is_object_text(&deep(33)));
        assert!(!is_object_text(br#"{"a":"\x"}"#));
        assert!(!is_object_text(br#"{"a":"\u12G4"}"#));
        assert!(is_object_text(br#"{"a":"\u12aF \n"}"#));
        assert!(!is_object_text(b"{\"a\":\"\x01\"}"));
    }
}
