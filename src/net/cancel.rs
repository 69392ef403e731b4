//! Cancellation of the agent loop's own request, asked by the agent's
//! cleanup; the transport and the TLS glue's budget look at it between
//! reads.

use crate::rtt::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Cancellation of the agent loop's own request: set by the agent's cleanup,
/// seen only on the thread registered with [`cancel_on_thread`] (the loop
/// thread), so a C caller's own `chat()` on another thread is never
/// cancelled by it.
static CANCEL: AtomicBool = AtomicBool::new(false);
static CANCEL_THREAD: AtomicPtr<crate::rtt::rt_thread> = AtomicPtr::new(core::ptr::null_mut());

/// Requests made on `thread` (NULL: none) are the ones cleanup cancels.
pub fn cancel_on_thread(thread: crate::rtt::rt_thread_t) {
    CANCEL_THREAD.store(thread, Ordering::SeqCst);
}
pub fn request_cancel() {
    CANCEL.store(true, Ordering::SeqCst);
}
pub fn clear_cancel() {
    CANCEL.store(false, Ordering::SeqCst);
}
/// Should the request running on this thread stop?
pub fn cancelled() -> bool {
    if !CANCEL.load(Ordering::SeqCst) {
        return false;
    }
    let owner = CANCEL_THREAD.load(Ordering::SeqCst);
    // SAFETY: rt_thread_self only reads the scheduler's current thread; it has
    // no preconditions.
    !owner.is_null() && owner == unsafe { crate::rtt::rt_thread_self() }
}
