//! Our own declarations of the board's cJSON (1.7.x), the `cjson-sys` of the
//! design: on the device the firmware's cJSON package, on the host Debian's
//! `libcjson`. Never a bundled copy.
//!
//! Only functions that exist, with these signatures, in every 1.7.x release
//! are declared. The `cJSON_AddItemTo*` functions returned `void` before
//! 1.7.13 and `cJSON_bool` after, so they are declared without a result and
//! success is checked on the tree instead (see [`crate::cjson::json`]).

#![allow(non_upper_case_globals)]

use core::ffi::{c_char, c_double, c_int, c_void};

pub const cJSON_Invalid: c_int = 0;
pub const cJSON_False: c_int = 1 << 0;
pub const cJSON_True: c_int = 1 << 1;
pub const cJSON_NULL: c_int = 1 << 2;
pub const cJSON_Number: c_int = 1 << 3;
pub const cJSON_String: c_int = 1 << 4;
pub const cJSON_Array: c_int = 1 << 5;
pub const cJSON_Object: c_int = 1 << 6;
pub const cJSON_Raw: c_int = 1 << 7;
pub const cJSON_IsReference: c_int = 256;
pub const cJSON_StringIsConst: c_int = 512;

/// `struct cJSON`, member for member.
#[repr(C)]
pub struct cJSON {
    pub next: *mut cJSON,
    pub prev: *mut cJSON,
    pub child: *mut cJSON,
    pub type_: c_int,
    pub valuestring: *mut c_char,
    pub valueint: c_int,
    pub valuedouble: c_double,
    pub string: *mut c_char,
}

#[repr(C)]
pub struct cJSON_Hooks {
    pub malloc_fn: Option<unsafe extern "C" fn(sz: usize) -> *mut c_void>,
    pub free_fn: Option<unsafe extern "C" fn(ptr: *mut c_void)>,
}

pub type cJSON_bool = c_int;

extern "C" {
    pub fn cJSON_InitHooks(hooks: *mut cJSON_Hooks);
    pub fn cJSON_Parse(value: *const c_char) -> *mut cJSON;
    pub fn cJSON_PrintUnformatted(item: *const cJSON) -> *mut c_char;
    pub fn cJSON_Delete(item: *mut cJSON);
    pub fn cJSON_free(object: *mut c_void);
    pub fn cJSON_GetArraySize(array: *const cJSON) -> c_int;
    pub fn cJSON_GetArrayItem(array: *const cJSON, index: c_int) -> *mut cJSON;
    pub fn cJSON_GetObjectItemCaseSensitive(
        object: *const cJSON,
        string: *const c_char,
    ) -> *mut cJSON;
    pub fn cJSON_CreateBool(boolean: cJSON_bool) -> *mut cJSON;
    pub fn cJSON_CreateNumber(num: c_double) -> *mut cJSON;
    pub fn cJSON_CreateString(string: *const c_char) -> *mut cJSON;
    pub fn cJSON_CreateArray() -> *mut cJSON;
    pub fn cJSON_CreateObject() -> *mut cJSON;
    pub fn cJSON_AddItemToArray(array: *mut cJSON, item: *mut cJSON);
    pub fn cJSON_AddItemToObject(object: *mut cJSON, string: *const c_char, item: *mut cJSON);
    pub fn cJSON_DeleteItemFromArray(array: *mut cJSON, which: c_int);
    pub fn cJSON_Duplicate(item: *const cJSON, recurse: cJSON_bool) -> *mut cJSON;
    pub fn cJSON_DetachItemFromObjectCaseSensitive(
        object: *mut cJSON,
        string: *const c_char,
    ) -> *mut cJSON;
}
