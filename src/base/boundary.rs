//! The one shape of every function the library hands to C (see
//! `src/ffi/mod.rs`, "One boundary"). Defined here, in the base layer,
//! because the kernel bindings' thread entries are such functions too.

/// The body of every function handed to C (see the module documentation):
/// `ffi_fn!(failure = v, { body })` or `ffi_fn!(failure = v, nonnull(a, b), { body })`.
///
/// `v` is what the function returns when it cannot complete; with
/// `nonnull(..)` it is returned when any listed pointer argument is NULL.
/// Panics are not caught (see "Panic policy").
#[macro_export]
macro_rules! ffi_fn {
    (failure = $failure:expr, nonnull($($arg:ident),+ $(,)?), $body:block) => {{
        #[allow(clippy::unused_unit)]
        if $($arg.is_null())||+ {
            return $failure;
        }
        $crate::ffi_fn!(failure = $failure, $body)
    }};
    (failure = $failure:expr, $body:block) => {{
        // Never runs: makes the compiler check that the failure value has
        // the function's return type.
        #[allow(unreachable_code, clippy::unused_unit)]
        if false {
            return $failure;
        }
        $body
    }};
}
