//! Pure stream logic: no FFI, no allocation beyond `alloc`, no panics on any
//! input.
