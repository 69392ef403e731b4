//! The CLI channel (`channels/CLI.h`): a chat on the console device
//! (`RT_CONSOLE_DEVICE_NAME`). It takes the console from the shell while it
//! runs (its own receive callback), edits lines with [`LineEditor`], sends
//! each line to the agent and prints the reply. Ctrl-D leaves the chat and
//! gives the console back to the shell; the agent loop keeps running.
//!
//! Giving the console back means putting back exactly the receive indicator
//! that was on the device before: finsh's own (`finsh_rx_ind`), or with
//! `RT_USING_POSIX_STDIO` the serial driver's (`serial_fops_rx_ind`, which
//! the shell's `read()` sleeps on). `finsh_set_device()` cannot do it: it
//! returns at once for the device the shell already has.

use super::super::agent_loop::{last_reply_streamed, set_stream_to_console, AgentChannelOps};
use super::super::context::Context_t;
use super::super::hub::{message_hub_get_timeout, message_hub_put, MessageHub_t};
use super::super::messages::*;
use crate::ffi_fn;
use crate::line_editor::{Event, LineEditor};
use crate::rtt::log::console_print;
use crate::rtt::*;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

extern "C" {
    fn rt_device_find(name: *const c_char) -> rt_device_t;
    fn rt_device_read(
        dev: rt_device_t,
        pos: rt_off_t,
        buffer: *mut c_void,
        size: rt_size_t,
    ) -> rt_ssize_t;
    fn rt_device_set_rx_indicate(
        dev: rt_device_t,
        rx_ind: Option<unsafe extern "C" fn(dev: rt_device_t, size: rt_size_t) -> rt_err_t>,
    ) -> rt_err_t;
    fn agent_glue_rx_indicate(dev: rt_device_t) -> agent_rx_indicate_t;
}

/// The C glue's typedef of the same name (agent_glue.h).
type agent_rx_indicate_t =
    Option<unsafe extern "C" fn(dev: rt_device_t, size: rt_size_t) -> rt_err_t>;

const PROMPT: &[u8] = b"you> ";
/// The channel thread's name (the agent's cleanup waits until it is freed).
pub const CLI_THREAD_NAME: &CStr = c"AgentCLI";
const STACK: u32 = 4096;

static HUB: AtomicPtr<super::super::hub::MessageHub> = AtomicPtr::new(ptr::null_mut());
static DEVICE: AtomicPtr<rt_device> = AtomicPtr::new(ptr::null_mut());
static RX: AtomicPtr<rt_semaphore> = AtomicPtr::new(ptr::null_mut());
static EXITED: AtomicPtr<rt_semaphore> = AtomicPtr::new(ptr::null_mut());
static STOP: AtomicBool = AtomicBool::new(false);
/// The indicator that was on the console when the channel took it, as an
/// address (0: none).
static SAVED_RX: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);

#[no_mangle]
pub static mut agent_cli_ops: AgentChannelOps = AgentChannelOps {
    init: Some(cli_init),
    reset: Some(cli_reset),
};

unsafe extern "C" fn cli_init(hub: MessageHub_t, ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the channel framework passes NULL or its live hub and
        // context, the contract `agent_cli_channel` documents.
        unsafe { agent_cli_channel(hub, ctx) }
    })
}
unsafe extern "C" fn cli_reset() {
    ffi_fn!(failure = (), { agent_cli_stop() })
}

unsafe extern "C" fn on_rx(_dev: rt_device_t, _size: rt_size_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        let sem = RX.load(Ordering::Acquire);
        if !sem.is_null() {
            // SAFETY: `on_rx` is installed only while the channel runs, and
            // RX is deleted only after the thread has put the old indicator
            // back, so a non-NULL RX is a live semaphore.
            unsafe { rt_sem_release(sem) };
        }
        rt_eok()
    })
}

/// Start the chat on the console. Returns 0, or -1 without a console device,
/// a hub or memory.
#[no_mangle]
pub unsafe extern "C" fn agent_cli_channel(
    message_hub: MessageHub_t,
    _context: Context_t,
) -> c_int {
    ffi_fn!(failure = -1, {
        if message_hub.is_null() || ACTIVE.swap(true, Ordering::AcqRel) {
            return -1;
        }
        // SAFETY: kernel calls; every failure unwinds what was made.
        unsafe {
            let dev = rt_device_find(board().console_device);
            let rx = rt_sem_create(c"AgentRx".as_ptr(), 0, RT_IPC_FLAG_FIFO);
            let exited = rt_sem_create(c"AgentCliX".as_ptr(), 0, RT_IPC_FLAG_FIFO);
            let fail = |rx: rt_sem_t, exited: rt_sem_t| {
                if !rx.is_null() {
                    rt_sem_delete(rx);
                }
                if !exited.is_null() {
                    rt_sem_delete(exited);
                }
                ACTIVE.store(false, Ordering::Release);
                -1
            };
            if dev.is_null() || rx.is_null() || exited.is_null() {
                crate::log_e!("CLI channel: no console device or no memory");
                return fail(rx, exited);
            }
            HUB.store(message_hub, Ordering::Release);
            DEVICE.store(dev, Ordering::Release);
            RX.store(rx, Ordering::Release);
            EXITED.store(exited, Ordering::Release);
            STOP.store(false, Ordering::Release);
            take_console(dev);
            let prio = board().loop_priority.clamp(0, 255) as u8;
            let thread = rt_thread_create(
                CLI_THREAD_NAME.as_ptr(),
                Some(cli_thread),
                ptr::null_mut(),
                STACK,
                prio,
                10,
            );
            if thread.is_null() || rt_thread_startup(thread) != rt_eok() {
                if !thread.is_null() {
                    rt_thread_delete(thread);
                }
                give_console_back(dev);
                RX.store(ptr::null_mut(), Ordering::Release);
                EXITED.store(ptr::null_mut(), Ordering::Release);
                return fail(rx, exited);
            }
        }
        0
    })
}

/// Stop the chat (if it runs), give the console back to the shell and wait
/// until the channel's thread is gone. Idempotent.
#[no_mangle]
pub extern "C" fn agent_cli_stop() {
    ffi_fn!(failure = (), {
        if !ACTIVE.load(Ordering::Acquire) {
            return;
        }
        STOP.store(true, Ordering::Release);
        // SAFETY: the semaphores live until this function deletes them, after
        // the thread said it exited.
        unsafe {
            let rx = RX.load(Ordering::Acquire);
            if !rx.is_null() {
                rt_sem_release(rx);
            }
            // Loaded, not taken out: the thread releases it as its last act
            // and must still find it (it would wait for ever otherwise).
            let exited = EXITED.load(Ordering::Acquire);
            if !exited.is_null() {
                rt_sem_take(exited, RT_WAITING_FOREVER);
                EXITED.store(ptr::null_mut(), Ordering::Release);
                rt_sem_delete(exited);
            }
            let rx = RX.swap(ptr::null_mut(), Ordering::AcqRel);
            if !rx.is_null() {
                rt_sem_delete(rx);
            }
        }
        HUB.store(ptr::null_mut(), Ordering::Release);
        ACTIVE.store(false, Ordering::Release);
    })
}

/// Install the channel's receive indicator, saving the one in place.
///
/// # Safety
/// `dev` is the live console device (from `rt_device_find`).
unsafe fn take_console(dev: rt_device_t) {
    // SAFETY: `dev` is a live device (this function's contract); the glue
    // only reads its `rx_indicate` field.
    let saved = unsafe { agent_glue_rx_indicate(dev) };
    SAVED_RX.store(saved.map_or(0, |f| f as usize), Ordering::Release);
    // SAFETY: `dev` is a live device; `on_rx` has the indicator's C signature
    // and lives for the program.
    unsafe { rt_device_set_rx_indicate(dev, Some(on_rx)) };
}

/// Put back the indicator saved by [`take_console`], then call it once so
/// whoever sleeps on it (the shell) reads what was typed in between.
///
/// # Safety
/// `dev` is the live console device passed to [`take_console`].
unsafe fn give_console_back(dev: rt_device_t) {
    let saved = SAVED_RX.swap(0, Ordering::AcqRel);
    let saved: agent_rx_indicate_t = if saved == 0 {
        None
    } else {
        // SAFETY: stored by take_console from a function pointer of this type.
        Some(unsafe {
            core::mem::transmute::<usize, unsafe extern "C" fn(rt_device_t, rt_size_t) -> rt_err_t>(
                saved,
            )
        })
    };
    // SAFETY: `dev` is the live console device (this function's contract);
    // `saved` is the indicator that was on it, or None.
    unsafe { rt_device_set_rx_indicate(dev, saved) };
    if let Some(wake) = saved {
        // SAFETY: `wake` is the device's own indicator, which the driver calls
        // with the device and a size; 0 means "nothing new, look again".
        unsafe { wake(dev, 0) };
    }
}

/// One byte from the console, waiting in short slices so a stop is seen.
///
/// # Safety
/// Only on the channel thread, while DEVICE and RX hold the live console
/// device and receive semaphore (set before the thread starts, deleted only
/// after it exits).
unsafe fn next_byte() -> Option<u8> {
    let dev = DEVICE.load(Ordering::Acquire);
    let rx = RX.load(Ordering::Acquire);
    loop {
        if STOP.load(Ordering::Acquire) {
            return None;
        }
        let mut b = 0u8;
        // SAFETY: `dev` is the live console device (this function's
        // contract); the buffer is the local `b`, 1 byte long.
        if unsafe { rt_device_read(dev, -1, &mut b as *mut u8 as *mut c_void, 1) } == 1 {
            return Some(b);
        }
        // SAFETY: `rx` is the live receive semaphore (this function's
        // contract); the tick conversion is a pure kernel call.
        unsafe { rt_sem_take(rx, rt_tick_from_millisecond(100) as i32) };
    }
}

/// Send a line and wait for its reply, still watching for a stop.
///
/// # Safety
/// `hub` is the live hub the channel was started on (it outlives the
/// channel thread).
unsafe fn ask(hub: MessageHub_t, line: &[u8]) {
    let mut text: alloc::vec::Vec<u8> = alloc::vec::Vec::new();
    if text.try_reserve(line.len() + 1).is_err() {
        console_print(b"(out of memory)\r\n");
        return;
    }
    text.extend_from_slice(line);
    text.push(0);
    let msg = messages_create(1);
    if msg.is_null()
        // SAFETY: `msg` is the live set just created; `text` ends with the NUL
        // pushed above and is only copied.
        || unsafe { messages_append(msg, TYPE_TEXT, text.as_ptr() as *const c_char) } != rt_eok()
    {
        // SAFETY: `msg` is NULL or the set created above, owned here and not
        // used again.
        unsafe { messages_destroy(msg) };
        console_print(b"(out of memory)\r\n");
        return;
    }
    // SAFETY: `hub` is live (this function's contract), so its
    // `input_mailbox` can be read; `msg` is a live set owned here.
    if unsafe { message_hub_put(hub, msg, (*hub).input_mailbox) } != rt_eok() {
        // SAFETY: on failure the caller keeps ownership of `msg`; it is not
        // used again.
        unsafe { messages_destroy(msg) };
        console_print(b"(the agent is busy)\r\n");
        return;
    }
    console_print(b"agent> ");
    loop {
        if STOP.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: `hub` is live (this function's contract), so its
        // `output_mailbox` can be read and received from; the tick conversion
        // is a pure kernel call.
        let reply = unsafe {
            message_hub_get_timeout(
                hub,
                (*hub).output_mailbox,
                rt_tick_from_millisecond(200) as i32,
            )
        };
        if reply.is_null() {
            continue;
        }
        if !last_reply_streamed() {
            // SAFETY: `reply` is a live message set owned here; the content
            // is borrowed from it.
            let t = unsafe { messages_get_content_idx(reply, 0) };
            if !t.is_null() {
                // SAFETY: `t` is non-NULL, NUL-terminated message content
                // owned by `reply`, which is still alive.
                console_print(unsafe { CStr::from_ptr(t) }.to_bytes());
            }
        }
        console_print(b"\r\n");
        // SAFETY: `reply` is owned here and not used after this.
        unsafe { messages_destroy(reply) };
        return;
    }
}

unsafe extern "C" fn cli_thread(_parameter: *mut c_void) {
    ffi_fn!(failure = (), {
        let hub = HUB.load(Ordering::Acquire);
        set_stream_to_console(true);
        console_print(b"\r\nAgent chat: type a message and press Enter; Ctrl-D leaves.\r\n");
        console_print(PROMPT);
        let mut editor = LineEditor::new();
        // SAFETY: this is the channel thread; `agent_cli_channel` set DEVICE
        // and RX before starting it and `agent_cli_stop` deletes them only
        // after EXITED is released below.
        while let Some(b) = unsafe { next_byte() } {
            match editor.feed(b, &mut |bytes| console_print(bytes)) {
                Event::Pending => {}
                Event::Submit(line) => {
                    if !line.is_empty() {
                        // SAFETY: `hub` is the live hub `agent_cli_channel`
                        // stored before starting this thread; it outlives it.
                        unsafe { ask(hub, &line) };
                    }
                    if STOP.load(Ordering::Acquire) {
                        break;
                    }
                    console_print(PROMPT);
                }
                Event::Leave => {
                    console_print(b"\r\nleaving the agent chat (the agent keeps running; cleanup_agent_entry stops it)\r\n");
                    break;
                }
            }
        }
        set_stream_to_console(false);
        // SAFETY: DEVICE is the live console device `take_console` was given
        // when the channel started; it is cleared only after this thread exits.
        unsafe { give_console_back(DEVICE.load(Ordering::Acquire)) };
        drop(editor);
        // Counted: after Ctrl-D nobody waits yet, and agent_cli_stop takes it
        // at once later; it deletes the semaphore only after taking it.
        let exited = EXITED.load(Ordering::Acquire);
        if !exited.is_null() {
            // SAFETY: EXITED is deleted by `agent_cli_stop` only after taking
            // this release, so it is still a live semaphore here.
            unsafe { rt_sem_release(exited) };
        }
    })
}
