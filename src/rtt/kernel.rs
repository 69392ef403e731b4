//! Hand-written declarations of the RT-Thread 5.x kernel API the library
//! calls (see `shared/spec/rtthread-api.md`). Few on purpose: each one is a
//! symbol the board must provide.

use core::ffi::{c_char, c_int, c_void};

pub type rt_base_t = isize;
pub type rt_ubase_t = usize;
pub type rt_err_t = rt_base_t;
pub type rt_off_t = rt_base_t;
pub type rt_size_t = usize;
pub type rt_ssize_t = isize;
pub type rt_int32_t = i32;
pub type rt_uint32_t = u32;
pub type rt_uint8_t = u8;
pub type rt_uint16_t = u16;
pub type rt_tick_t = rt_uint32_t;
pub type rt_bool_t = c_int;

pub const RT_NULL: *mut c_void = core::ptr::null_mut();
pub const RT_TRUE: rt_bool_t = 1;
pub const RT_FALSE: rt_bool_t = 0;
pub const RT_WAITING_FOREVER: rt_int32_t = -1;
pub const RT_WAITING_NO: rt_int32_t = 0;
pub const RT_IPC_FLAG_FIFO: rt_uint8_t = 0x00;
pub const RT_IPC_FLAG_PRIO: rt_uint8_t = 0x01;

/// Opaque kernel objects: only ever handled through their pointers.
#[repr(C)]
pub struct rt_mailbox {
    _private: [u8; 0],
}
#[repr(C)]
pub struct rt_semaphore {
    _private: [u8; 0],
}
#[repr(C)]
pub struct rt_mutex {
    _private: [u8; 0],
}
#[repr(C)]
pub struct rt_thread {
    _private: [u8; 0],
}
#[repr(C)]
pub struct rt_device {
    _private: [u8; 0],
}
#[repr(C)]
pub struct rt_messagequeue {
    _private: [u8; 0],
}
pub type rt_mq_t = *mut rt_messagequeue;
pub type rt_mailbox_t = *mut rt_mailbox;
pub type rt_sem_t = *mut rt_semaphore;
pub type rt_mutex_t = *mut rt_mutex;
pub type rt_thread_t = *mut rt_thread;
pub type rt_device_t = *mut rt_device;

// Memory.
extern "C" {
    pub fn rt_malloc(size: rt_size_t) -> *mut c_void;
    pub fn rt_free(ptr: *mut c_void);
    pub fn rt_realloc(ptr: *mut c_void, newsize: rt_size_t) -> *mut c_void;
    pub fn rt_malloc_align(size: rt_size_t, align: rt_size_t) -> *mut c_void;
    pub fn rt_free_align(ptr: *mut c_void);
    pub fn rt_memory_info(total: *mut rt_size_t, used: *mut rt_size_t, max_used: *mut rt_size_t);
}

// Inter-thread communication.
extern "C" {
    pub fn rt_mb_create(name: *const c_char, size: rt_size_t, flag: rt_uint8_t) -> rt_mailbox_t;
    pub fn rt_mb_delete(mb: rt_mailbox_t) -> rt_err_t;
    pub fn rt_mb_send(mb: rt_mailbox_t, value: rt_ubase_t) -> rt_err_t;
    pub fn rt_mb_send_wait(mb: rt_mailbox_t, value: rt_ubase_t, timeout: rt_int32_t) -> rt_err_t;
    pub fn rt_mb_recv(mb: rt_mailbox_t, value: *mut rt_ubase_t, timeout: rt_int32_t) -> rt_err_t;
    pub fn rt_sem_create(name: *const c_char, value: rt_uint32_t, flag: rt_uint8_t) -> rt_sem_t;
    pub fn rt_sem_delete(sem: rt_sem_t) -> rt_err_t;
    pub fn rt_sem_take(sem: rt_sem_t, timeout: rt_int32_t) -> rt_err_t;
    pub fn rt_sem_release(sem: rt_sem_t) -> rt_err_t;
    pub fn rt_mutex_create(name: *const c_char, flag: rt_uint8_t) -> rt_mutex_t;
    pub fn rt_mutex_delete(mutex: rt_mutex_t) -> rt_err_t;
    pub fn rt_mutex_take(mutex: rt_mutex_t, timeout: rt_int32_t) -> rt_err_t;
    pub fn rt_mutex_release(mutex: rt_mutex_t) -> rt_err_t;
}

// Message queues (multimodal: the file-operation thread of utils.h).
#[cfg(feature = "multimodal")]
extern "C" {
    pub fn rt_mq_create(
        name: *const c_char,
        msg_size: rt_size_t,
        max_msgs: rt_size_t,
        flag: rt_uint8_t,
    ) -> rt_mq_t;
    pub fn rt_mq_delete(mq: rt_mq_t) -> rt_err_t;
    pub fn rt_mq_send(mq: rt_mq_t, buffer: *const c_void, size: rt_size_t) -> rt_err_t;
    /// RT-Thread 5.x: the message's length, or a negative error (4.x
    /// returned `RT_EOK`): success is `>= 0` in both.
    pub fn rt_mq_recv(
        mq: rt_mq_t,
        buffer: *mut c_void,
        size: rt_size_t,
        timeout: rt_int32_t,
    ) -> rt_ssize_t;
}

// Threads and time.
extern "C" {
    pub fn rt_thread_create(
        name: *const c_char,
        entry: Option<unsafe extern "C" fn(parameter: *mut c_void)>,
        parameter: *mut c_void,
        stack_size: rt_uint32_t,
        priority: rt_uint8_t,
        tick: rt_uint32_t,
    ) -> rt_thread_t;
    pub fn rt_thread_startup(thread: rt_thread_t) -> rt_err_t;
    pub fn rt_thread_delete(thread: rt_thread_t) -> rt_err_t;
    pub fn rt_thread_self() -> rt_thread_t;
    /// The thread object named `name` (NULL when none): a finished dynamic
    /// thread stays findable until the kernel has freed it.
    pub fn rt_thread_find(name: *mut c_char) -> rt_thread_t;
    pub fn rt_thread_mdelay(ms: rt_int32_t) -> rt_err_t;
    pub fn rt_tick_get() -> rt_tick_t;
    pub fn rt_tick_from_millisecond(ms: rt_int32_t) -> rt_tick_t;
}

// Console.
extern "C" {
    pub fn rt_kprintf(fmt: *const c_char, ...) -> c_int;
}

// Devices (the console's, read by the CLI channel).
extern "C" {
    pub fn rt_device_read(
        dev: rt_device_t,
        pos: rt_off_t,
        buffer: *mut c_void,
        size: rt_size_t,
    ) -> rt_ssize_t;
    pub fn rt_device_set_rx_indicate(
        dev: rt_device_t,
        rx_ind: Option<unsafe extern "C" fn(dev: rt_device_t, size: rt_size_t) -> rt_err_t>,
    ) -> rt_err_t;
}
