//! Kernel object names that fit the board's `RT_NAME_MAX`.
//!
//! The kernel keeps `RT_NAME_MAX - 1` bytes of a name: a longer one is cut,
//! with a warning at every creation on RT-Thread 5.x, and a lookup by the
//! full name (`rt_thread_find`, `rt_object_find`) then misses it. Many small
//! BSPs have `RT_NAME_MAX` 8. So every object the library makes has a name
//! of at most 7 bytes for such boards, and its longer, older name (the C
//! package's, where it had one) where the board holds it. The glue refuses
//! a board with `RT_NAME_MAX` below 8 at build (glue/agent_log.c).

use core::ffi::{c_int, CStr};

extern "C" {
    /// The board's `RT_NAME_MAX` (glue/agent_log.c).
    static agent_glue_name_max: c_int;
}

/// The longest name that fits every board the glue builds for.
pub const SHORT_MAX: usize = 7;

/// A kernel object's name, full or short as the board allows.
#[derive(Clone, Copy)]
pub struct ObjectName {
    full: &'static CStr,
    short: &'static CStr,
}

impl ObjectName {
    /// `short` must fit [`SHORT_MAX`] (checked when the constant is built).
    pub const fn new(full: &'static CStr, short: &'static CStr) -> ObjectName {
        assert!(
            short.to_bytes().len() <= SHORT_MAX,
            "a short name has at most 7 bytes"
        );
        assert!(full.to_bytes().len() >= short.to_bytes().len());
        ObjectName { full, short }
    }

    /// A name short enough for every board: used as it is.
    pub const fn short(name: &'static CStr) -> ObjectName {
        ObjectName::new(name, name)
    }

    /// The name this board keeps whole. (Not inlined: one copy for every
    /// object the library makes.)
    #[inline(never)]
    pub fn get(self) -> &'static CStr {
        // SAFETY: a constant of the glue, never written.
        let max = unsafe { agent_glue_name_max };
        if (self.full.to_bytes().len() as c_int) < max {
            self.full
        } else {
            self.short
        }
    }
}
