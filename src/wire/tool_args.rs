//! A tool call's arguments against the schema its tool registered
//! (`create_param_obj`/`create_property`), checked before the C tool runs
//! (`PKG_AGENT_CHECK_TOOL_ARGS`, cargo feature `tool-arg-check`).
//!
//! What is checked, as JSON Schema means it: every `required` property is
//! there; a property with a `type` has a value of that type (the package's
//! own `"double"`/`"float"`, `"int"` and `"bool"`/`"true"`/`"false"` read as
//! the request writer maps them: number, integer, boolean; a list of types
//! accepts any of them; an unknown type is not checked); a property with an
//! `enum` has one of its values. Properties the schema does not name are
//! allowed. A number is an `integer` when it has no fraction.
//!
//! The first mismatch is described for the model in a short text naming the
//! property and what was expected, so it can correct the call.

#![allow(non_upper_case_globals)]

use crate::base::json_writer::whole_number;
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::wire::chat::request::schema_type;
use core::ffi::{c_int, CStr};

/// The first way `args` does not fit `parameters`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch<'a> {
    /// A required property is absent.
    Missing(&'a [u8]),
    /// The property's value has another type: (property, the declared type
    /// as registered, the value's JSON type).
    Type(&'a [u8], &'a [u8], &'static [u8]),
    /// The value is not one of the property's `enum` values (the property,
    /// the schema's `enum` array).
    NotInEnum(&'a [u8], *const cJSON),
}

fn kind(item: *const cJSON) -> c_int {
    if item.is_null() {
        return cJSON_Invalid;
    }
    // SAFETY: non-NULL and live (callers pass children of live trees).
    unsafe { (*item).type_ & 0xFF }
}

/// The JSON type names of cJSON's kinds, by bit: false, true, null, number,
/// string, array, object.
const TYPE_NAMES: [&[u8]; 7] = [
    b"boolean", b"boolean", b"null", b"number", b"string", b"array", b"object",
];

/// The JSON type name of a value.
fn type_name(item: *const cJSON) -> &'static [u8] {
    let k = kind(item);
    // Each kind is one bit (cJSON_False is 1 << 0, ..., cJSON_Object 1 << 6).
    let name = if k.count_ones() == 1 {
        TYPE_NAMES.get(k.trailing_zeros() as usize)
    } else {
        None
    };
    name.copied().unwrap_or(b"invalid")
}

/// Does `value` have the JSON Schema type `declared` (package spellings
/// mapped)? `None` when the type is not one this check knows.
fn has_type(value: *const cJSON, declared: &[u8]) -> Option<bool> {
    let t = schema_type(declared).unwrap_or(declared);
    if t == b"integer" {
        // SAFETY: read only when `value` is a live number item.
        return Some(
            kind(value) == cJSON_Number && whole_number(unsafe { (*value).valuedouble }).is_some(),
        );
    }
    // Every other JSON Schema type is the name of some kind.
    if !TYPE_NAMES.contains(&t) {
        return None;
    }
    Some(type_name(value) == t)
}

/// JSON equality of two scalars (enum values are scalars in practice;
/// arrays and objects never match).
fn same_scalar(a: *const cJSON, b: *const cJSON) -> bool {
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        return false;
    }
    match ka {
        cJSON_True | cJSON_False | cJSON_NULL => true,
        // SAFETY: both are live number items.
        cJSON_Number => unsafe { (*a).valuedouble.to_bits() == (*b).valuedouble.to_bits() },
        // SAFETY: both are live string items, alive for the comparison.
        cJSON_String => unsafe { json::string_value(a) == json::string_value(b) },
        _ => false,
    }
}

fn bytes(s: Option<&CStr>) -> &[u8] {
    s.map_or(&b""[..], CStr::to_bytes)
}

/// Check `args` (a parsed object) against the tool's `parameters` schema.
/// `Ok` when they fit, or when there is no schema to check against.
///
/// # Safety
/// `parameters` is NULL or a live tree, `args` a live tree; both unchanged
/// and alive for `'a`.
pub unsafe fn check<'a>(parameters: *const cJSON, args: *const cJSON) -> Result<(), Mismatch<'a>> {
    // SAFETY: NULL or live (this function's contract); lookups only.
    let (required, properties) = unsafe {
        (
            json::get(parameters, c"required"),
            json::get(parameters, c"properties"),
        )
    };
    if kind(required) == cJSON_Array {
        // SAFETY: a live array of the schema.
        for name in unsafe { json::children(required) } {
            // SAFETY: a live element of that array.
            let Some(n) = (unsafe { json::string_value(name) }) else {
                continue;
            };
            // SAFETY: `args` is live; `n` is NUL-terminated.
            if unsafe { json::get(args, n) }.is_null() {
                return Err(Mismatch::Missing(n.to_bytes()));
            }
        }
    }
    if kind(properties) != cJSON_Object {
        return Ok(());
    }
    // SAFETY: a live object of the schema.
    for prop in unsafe { json::children(properties) } {
        // SAFETY: a live member; its key is NULL or NUL-terminated and lives
        // with the schema.
        let key = unsafe { (*prop).string };
        if key.is_null() {
            continue;
        }
        // SAFETY: as above.
        let name = unsafe { CStr::from_ptr(key) };
        // SAFETY: `args` is live.
        let value = unsafe { json::get(args, name) };
        if value.is_null() {
            continue;
        }
        // SAFETY: `prop` is live.
        let declared = unsafe { json::get(prop, c"type") };
        if kind(declared) == cJSON_String {
            // SAFETY: a live string member.
            let t = bytes(unsafe { json::string_value(declared) });
            if has_type(value, t) == Some(false) {
                return Err(Mismatch::Type(name.to_bytes(), t, type_name(value)));
            }
        } else if kind(declared) == cJSON_Array {
            let mut known = false;
            let mut fits = false;
            // SAFETY: a live array member.
            for t in unsafe { json::children(declared) } {
                // SAFETY: a live element.
                if let Some(ok) = has_type(value, bytes(unsafe { json::string_value(t) })) {
                    known = true;
                    fits |= ok;
                }
            }
            if known && !fits {
                return Err(Mismatch::Type(
                    name.to_bytes(),
                    b"one of its types",
                    type_name(value),
                ));
            }
        }
        // SAFETY: `prop` is live.
        let allowed = unsafe { json::get(prop, c"enum") };
        if kind(allowed) == cJSON_Array {
            // SAFETY: a live array member.
            let mut choices = unsafe { json::children(allowed) };
            if !choices.any(|c| same_scalar(c, value)) {
                return Err(Mismatch::NotInEnum(name.to_bytes(), allowed));
            }
        }
    }
    Ok(())
}
