//! What the Anthropic and Ollama request writers share.

#![allow(non_upper_case_globals)]

use super::request::cstr_bytes;
use crate::base::json_writer::{write_string, ByteSink, WriteError};
use crate::cjson::json;
use crate::cjson::sys::*;
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
/// A small checker of its own, without recursion or memory (the stream
/// tokenizer would do, at the cost of another copy of it in flash):
/// structure, strings (escapes; control characters refused; other
/// bytes as they are), numbers, literals; 32 levels at most.
pub fn is_object_text(text: &[u8]) -> bool {
    check_object(text).is_some()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Value,
    ValueOrClose,
    Key,
    KeyOrClose,
    After,
}

fn ws(t: &[u8], mut i: usize) -> usize {
    while matches!(t.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the string starting at `t[i]` (a quote).
fn string(t: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match *t.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => {
                i += 1;
                match *t.get(i)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        let hex = t.get(i + 1..i + 5)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 4;
                    }
                    _ => return None,
                }
            }
            0..=0x1F => return None,
            _ => {}
        }
        i += 1;
    }
}

fn digits(t: &[u8], i: usize) -> Option<usize> {
    let n = t
        .get(i..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (n > 0).then_some(i + n)
}

/// The end of the number starting at `t[i]`.
fn number(t: &[u8], mut i: usize) -> Option<usize> {
    if t.get(i) == Some(&b'-') {
        i += 1;
    }
    i = if t.get(i) == Some(&b'0') {
        i + 1
    } else {
        digits(t, i)?
    };
    if t.get(i) == Some(&b'.') {
        i = digits(t, i + 1)?;
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(t, i)?;
    }
    Some(i)
}

fn check_object(t: &[u8]) -> Option<()> {
    let mut i = ws(t, 0);
    if t.get(i) != Some(&b'{') {
        return None;
    }
    // Bit d: the container at depth d + 1 is an object.
    let (mut depth, mut objects) = (0u32, 0u32);
    let mut want = Want::Value;
    loop {
        i = ws(t, i);
        let b = *t.get(i)?;
        let close = match (want, b) {
            (Want::ValueOrClose, b']') | (Want::KeyOrClose, b'}') => true,
            (Want::After, b'}' | b']') => true,
            (Want::After, b',') => {
                i += 1;
                want = if objects & (1 << (depth - 1)) != 0 {
                    Want::Key
                } else {
                    Want::Value
                };
                continue;
            }
            (Want::Key | Want::KeyOrClose, b'"') => {
                i = ws(t, string(t, i)?);
                if t.get(i) != Some(&b':') {
                    return None;
                }
                i += 1;
                want = Want::Value;
                continue;
            }
            (Want::Value | Want::ValueOrClose, b'{' | b'[') => {
                if depth == 32 {
                    return None;
                }
                if b == b'{' {
                    objects |= 1 << depth;
                    want = Want::KeyOrClose;
                } else {
                    objects &= !(1 << depth);
                    want = Want::ValueOrClose;
                }
                depth += 1;
                i += 1;
                continue;
            }
            (Want::Value | Want::ValueOrClose, _) => {
                i = match b {
                    b'"' => string(t, i)?,
                    b'-' | b'0'..=b'9' => number(t, i)?,
                    _ => {
                        let lit: &[u8] = match b {
                            b't' => b"true",
                            b'f' => b"false",
                            b'n' => b"null",
                            _ => return None,
                        };
                        if t.get(i..i + lit.len())? != lit {
                            return None;
                        }
                        i + lit.len()
                    }
                };
                want = Want::After;
                continue;
            }
            _ => return None,
        };
        // A closing bracket: it must match the open container.
        let object = objects & (1 << (depth - 1)) != 0;
        if close && object != (b == b'}') {
            return None;
        }
        depth -= 1;
        i += 1;
        want = Want::After;
        if depth == 0 {
            return (ws(t, i) == t.len()).then_some(());
        }
    }
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
pub unsafe fn write_schema(schema: *const cJSON, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    // SAFETY: `schema` is NULL or live (contract).
    if unsafe { type_of(schema) } == cJSON_Object {
        // SAFETY: non-NULL and live.
        unsafe { super::request::write_value(schema, true, 1, out) }
    } else {
        out.put(b"{\"type\":\"object\",\"properties\":{}}")
    }
}
