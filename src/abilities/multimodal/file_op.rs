//! utils.h's C API: the file-operation thread with its two message queues,
//! `agent_up_load` and `down_load`.

use super::upload::{download_url, upload, FileId};
use super::with_urls;
use crate::net::error::ErrorText;
use crate::rtt::name::ObjectName;
use crate::rtt::sleep_cell::SleepCell;
use crate::rtt::sleep_lock::SleepLock;
use crate::rtt::webclient::*;
use crate::rtt::*;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_void, CStr};
use core::ptr;

/// `file_op_type_t`.
pub type file_op_type_t = crate::abi::messages::c_enum;
pub const CMD_AGENT_FILE_UPLOAD: file_op_type_t = 0;
pub const CMD_AGENT_FILE_DOWNLOAD: file_op_type_t = 1;
pub const CMD_AGENT_FILE_EXIT: file_op_type_t = 2;
pub const CMD_AGENT_FILE_EXIT_COMPLETE: file_op_type_t = 3;
pub const CMD_AGENT_FILE_URL: file_op_type_t = 4;

/// `file_op_req`: a request to the file-operation thread, or its answer.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct file_op_req {
    pub op: file_op_type_t,
    pub path: [c_char; 128],
    pub file_id: [c_char; 128],
}

impl file_op_req {
    const fn empty(op: file_op_type_t) -> Self {
        file_op_req {
            op,
            path: [0; 128],
            file_id: [0; 128],
        }
    }
}

/// Copy `src` into `dst` with a NUL; false (nothing written) if it does not
/// fit.
fn put_text(dst: &mut [c_char], src: &[u8]) -> bool {
    let Some(end) = dst.get_mut(src.len()) else {
        return false;
    };
    *end = 0;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = s as c_char;
    }
    true
}

/// The text of a fixed field up to its first NUL (all of it without one).
fn field_text(field: &[c_char]) -> &[u8] {
    // SAFETY: `c_char` and `u8` have the same size and alignment.
    let bytes = unsafe { core::slice::from_raw_parts(field.as_ptr() as *const u8, field.len()) };
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// The file-operation thread's kernel objects.
struct FileOp {
    input: rt_mq_t,
    output: rt_mq_t,
    thread: rt_thread_t,
    /// Released by the thread as it ends.
    done: rt_sem_t,
}

// SAFETY: kernel object handles, usable from any thread; the worker reads
// them once at its start, and they stay valid until it has said it ended.
unsafe impl Send for FileOp {}

static FILE_OP: SleepCell<FileOp> = SleepCell::new(FileOp {
    input: ptr::null_mut(),
    output: ptr::null_mut(),
    thread: ptr::null_mut(),
    done: ptr::null_mut(),
});

/// The C package's names where the board holds them (`list thread`).
const FILE_OP_THREAD: ObjectName = ObjectName::new(c"fileop_wk", c"fopWk");
const QUEUE_IN: ObjectName = ObjectName::new(c"fileop_mq_in", c"fopIn");
const QUEUE_OUT: ObjectName = ObjectName::new(c"fileop_mq_out", c"fopOut");
const DONE_NAME: ObjectName = ObjectName::new(c"fileop_done", c"fopDone");
/// As the C package: four requests in each queue, priority 9, tick 20.
const FILE_OP_QUEUE: rt_size_t = 4;
const FILE_OP_PRIORITY: u8 = 9;

fn file_op<R>(f: impl FnOnce(&mut FileOp) -> R) -> R {
    FILE_OP.with(f)
}

/// The URL in the static buffer `agent_up_load` returns.
struct UrlBuf(UnsafeCell<[c_char; 128]>);
// SAFETY: written only under URL_LOCK (what a caller does with the pointer
// afterwards is the ABI's: "copy it at once").
unsafe impl Sync for UrlBuf {}
static UP_LOAD_URL: UrlBuf = UrlBuf(UnsafeCell::new([0; 128]));
static URL_LOCK: SleepLock = SleepLock::new();

/// What the worker is given: its queues and the semaphore it ends with.
struct WorkerObjects {
    input: rt_mq_t,
    output: rt_mq_t,
    done: rt_sem_t,
}

// SAFETY: kernel object handles, usable from any thread; they stay live
// until the worker has said it ended (`agent_file_op_deinit`).
unsafe impl Send for WorkerObjects {}

/// The worker: uploads and downloads for the requests on the input queue.
fn file_op_worker(objects: WorkerObjects) {
    let WorkerObjects {
        input,
        output,
        done,
    } = objects;
    loop {
        let mut req = file_op_req::empty(CMD_AGENT_FILE_EXIT);
        // SAFETY: `input` is live until this thread says it ended;
        // `req` has room for one message.
        let n = unsafe {
            rt_mq_recv(
                input,
                &mut req as *mut file_op_req as *mut c_void,
                core::mem::size_of::<file_op_req>(),
                RT_WAITING_FOREVER,
            )
        };
        if n < 0 || req.op == CMD_AGENT_FILE_EXIT {
            break;
        }
        // Both requests name a file: its path with a NUL.
        let path = field_text(&req.path);
        let mut cpath = [0u8; 129];
        crate::base::text::copy_prefix(&mut cpath, path);
        let cpath = CStr::from_bytes_until_nul(&cpath).unwrap_or(c"");
        match req.op {
            CMD_AGENT_FILE_UPLOAD => {
                let mut answer = file_op_req::empty(CMD_AGENT_FILE_URL);
                let mut error = ErrorText::new();
                match upload(cpath, "file", &mut error) {
                    Some(id) => {
                        let url = with_urls(|_, down| download_url(down, &id));
                        let url = url.as_deref().unwrap_or_default();
                        let url = crate::base::text::strip_last(url, 0);
                        if !put_text(&mut answer.path, url)
                            || !put_text(&mut answer.file_id, id.as_bytes())
                        {
                            answer = file_op_req::empty(CMD_AGENT_FILE_URL);
                            crate::log_e!("[fileop] the URL does not fit 127 bytes");
                        }
                    }
                    None => crate::log_e!("[fileop] ", error.as_str()),
                }
                // SAFETY: `output` is live while this thread runs.
                let sent = unsafe {
                    rt_mq_send(
                        output,
                        &answer as *const file_op_req as *const c_void,
                        core::mem::size_of::<file_op_req>(),
                    )
                };
                if sent != rt_eok() {
                    crate::log_w!("[fileop] the upload's answer was dropped (queue full)");
                }
            }
            CMD_AGENT_FILE_DOWNLOAD => {
                let id = field_text(&req.file_id);
                let url = with_urls(|_, down| download_url(down, &FileId::from_bytes(id)));
                let rc = match url {
                    // SAFETY: both are NUL-terminated (made above).
                    Some(url) => unsafe {
                        webclient_get_file(url.as_ptr() as *const c_char, cpath.as_ptr())
                    },
                    None => -WEBCLIENT_NOMEM,
                };
                if rc == WEBCLIENT_OK {
                    crate::log_i!("[fileop] downloaded ", id, " to ", path);
                } else {
                    crate::log_e!("[fileop] download of ", id, " failed: ", rc);
                }
            }
            _ => crate::log_w!("[fileop] unknown request ", req.op as isize),
        }
    }
    // SAFETY: `done` is live until deinit has taken it (after this).
    unsafe { rt_sem_release(done) };
}

/// Delete whichever of the objects exist.
///
/// # Safety
/// Each is NULL or a live object nobody uses any more.
unsafe fn delete_objects(input: rt_mq_t, output: rt_mq_t, done: rt_sem_t) {
    // SAFETY: each is NULL or live and unused (contract).
    unsafe {
        if !input.is_null() {
            rt_mq_delete(input);
        }
        if !output.is_null() {
            rt_mq_delete(output);
        }
        if !done.is_null() {
            rt_sem_delete(done);
        }
    }
}

/// Start the file-operation thread (`fileop_wk`, stack
/// `PKG_AGENT_FILE_OP_THREAD_SIZE`) and its queues. Returns the thread
/// (owned by the kernel; the running one if already started), or `RT_NULL`
/// when an object cannot be created (nothing is left behind).
pub fn agent_file_op_init() -> rt_thread_t {
    file_op(|s| {
        if !s.thread.is_null() {
            return s.thread;
        }
        let size = core::mem::size_of::<file_op_req>();
        // SAFETY: names are NUL-terminated; every result is NULL-checked
        // and deleted again on a later failure.
        unsafe {
            let input = rt_mq_create(QUEUE_IN.get().as_ptr(), size, FILE_OP_QUEUE, 0);
            let output = rt_mq_create(QUEUE_OUT.get().as_ptr(), size, FILE_OP_QUEUE, 0);
            let done = rt_sem_create(DONE_NAME.get().as_ptr(), 0, 0);
            if input.is_null() || output.is_null() || done.is_null() {
                delete_objects(input, output, done);
                return ptr::null_mut();
            }
            s.input = input;
            s.output = output;
            s.done = done;
        }
        let spec = crate::rtt::thread::Spec {
            name: FILE_OP_THREAD,
            stack_size: board().file_op_thread_size().min(u32::MAX as usize) as u32,
            priority: FILE_OP_PRIORITY,
            tick: 20,
        };
        let objects = WorkerObjects {
            input: s.input,
            output: s.output,
            done: s.done,
        };
        match crate::rtt::thread::Thread::spawn_with(&spec, objects, file_op_worker) {
            Some(t) => {
                s.thread = t;
                t
            }
            None => {
                // SAFETY: the objects made above; no thread uses them.
                unsafe { delete_objects(s.input, s.output, s.done) };
                *s = FileOp {
                    input: ptr::null_mut(),
                    output: ptr::null_mut(),
                    thread: ptr::null_mut(),
                    done: ptr::null_mut(),
                };
                ptr::null_mut()
            }
        }
    })
}

/// Stop the file-operation thread: it finishes the request in hand, ends,
/// and its queues are deleted. Safe to call when it never started.
pub fn agent_file_op_deinit() {
    let (input, output, done) = file_op(|s| (s.input, s.output, s.done));
    if input.is_null() {
        return;
    }
    let exit = file_op_req::empty(CMD_AGENT_FILE_EXIT);
    // A request in hand may take the file server's timeout, twice over
    // (the send and the answer), before the thread sees the exit.
    let patience = board().http_timeout_ms.clamp(1000, 600_000) as u32 * 3;
    let mut waited = 0;
    // SAFETY: the queue is live (the thread has not ended); `exit` is
    // one message.
    while unsafe {
        rt_mq_send(
            input,
            &exit as *const file_op_req as *const c_void,
            core::mem::size_of::<file_op_req>(),
        )
    } != rt_eok()
    {
        if waited >= patience {
            crate::log_e!("[fileop] the thread does not take its exit; left running");
            return;
        }
        crate::rtt::thread::sleep_ms(50);
        waited += 50;
    }
    // SAFETY: `done` is live until deleted below.
    if unsafe { rt_sem_take(done, crate::rtt::ipc::ticks_from_ms(patience)) } != rt_eok() {
        crate::log_e!("[fileop] the thread did not end in time; its queues are left");
        return;
    }
    file_op(|s| {
        // SAFETY: the thread has ended; nobody else uses the objects.
        unsafe { delete_objects(s.input, s.output, s.done) };
        *s = FileOp {
            input: ptr::null_mut(),
            output: ptr::null_mut(),
            thread: ptr::null_mut(),
            done: ptr::null_mut(),
        };
    });
    let _ = output;
    // The kernel frees an ended thread a little later (the idle thread).
    for _ in 0..200 {
        if !crate::rtt::thread::exists(FILE_OP_THREAD) {
            break;
        }
        crate::rtt::thread::sleep_ms(5);
    }
}

/// The file-operation thread's input queue (`file_op_req` messages), or
/// `RT_NULL` while it is not running. Owned by the library.
pub fn get_agent_file_op_mq_input() -> rt_mq_t {
    file_op(|s| s.input)
}

/// The file-operation thread's output queue (a `CMD_AGENT_FILE_URL` answer
/// per upload request: `path` the URL, `file_id` the id, both empty after a
/// failure), or `RT_NULL` while it is not running. Owned by the library.
pub fn get_agent_file_op_mq_output() -> rt_mq_t {
    file_op(|s| s.output)
}

/// Upload the file at `path` now, on the calling thread, and return its
/// URL (`{PKG_AGENT_DOWNLOAD_URL}/{file_id}`) in a static buffer the
/// library owns: copy it before the next call. `""` when the upload fails
/// (the reason is logged), `RT_NULL` for a NULL path. Borrows `path`.
pub unsafe fn agent_up_load(path: *const c_char) -> *mut c_char {
    if path.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: non-NULL and NUL-terminated (the caller's contract).
    let path = unsafe { CStr::from_ptr(path) };
    let mut error = ErrorText::new();
    let url = upload(path, "file", &mut error)
        .and_then(|id| with_urls(|_, down| download_url(down, &id)));
    if url.is_none() && error.len == 0 {
        error.set(&[b"out of memory"]);
    }
    let _held = URL_LOCK.lock();
    // SAFETY: the buffer is written only under URL_LOCK, held.
    let out = unsafe { &mut *UP_LOAD_URL.0.get() };
    if let Some(first) = out.first_mut() {
        *first = 0;
    }
    if let Some(url) = url {
        let url = crate::base::text::strip_last(&url, 0);
        if !put_text(out, url) {
            crate::log_e!("agent_up_load: the URL is longer than 127 bytes");
        }
    } else {
        crate::log_e!("agent_up_load: ", error.as_str());
    }
    out.as_mut_ptr()
}

/// Ask the file-operation thread to download `{PKG_AGENT_DOWNLOAD_URL}/
/// {file_id}` into the file `path` (created or replaced). Returns `RT_EOK`
/// once queued; `-RT_ERROR` when the thread is not running, an argument is
/// NULL or longer than 127 bytes, or the queue is full. Borrows both.
pub unsafe fn down_load(path: *const c_char, file_id: *const c_char) -> rt_err_t {
    if path.is_null() || file_id.is_null() {
        return -rt_error();
    }
    let mut req = file_op_req::empty(CMD_AGENT_FILE_DOWNLOAD);
    // SAFETY: both non-NULL and NUL-terminated (the caller's contract).
    let (p, id) = unsafe { (CStr::from_ptr(path), CStr::from_ptr(file_id)) };
    if !put_text(&mut req.path, p.to_bytes()) || !put_text(&mut req.file_id, id.to_bytes()) {
        crate::log_e!("down_load: the path or the file id is longer than 127 bytes");
        return -rt_error();
    }
    file_op(|s| {
        if s.input.is_null() {
            crate::log_e!("down_load: the file-operation thread is not running");
            return -rt_error();
        }
        // SAFETY: the queue is live while the lock is held; `req` is one
        // message.
        let sent = unsafe {
            rt_mq_send(
                s.input,
                &req as *const file_op_req as *const c_void,
                core::mem::size_of::<file_op_req>(),
            )
        };
        if sent == rt_eok() {
            rt_eok()
        } else {
            -rt_error()
        }
    })
}
