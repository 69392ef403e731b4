//! The board's configuration, as `glue/agent_board_config.c` compiled it from
//! `rtconfig.h` and `rtthread.h`. Mirrors `struct agent_board_config`.

use super::kernel::{rt_base_t, rt_err_t};
use core::ffi::c_char;

#[repr(C)]
pub struct BoardConfig {
    pub struct_size: rt_base_t,
    pub rt_eok: rt_base_t,
    pub rt_error: rt_base_t,
    pub rt_etimeout: rt_base_t,
    pub rt_efull: rt_base_t,
    pub rt_eempty: rt_base_t,
    pub rt_enomem: rt_base_t,
    pub rt_einval: rt_base_t,
    pub align_size: rt_base_t,
    pub tick_per_second: rt_base_t,
    pub api_key: *const c_char,
    pub api_url: *const c_char,
    pub model_name: *const c_char,
    pub resp_bufsz: rt_base_t,
    pub web_socket_bufsz: rt_base_t,
    pub max_reasoning_len: rt_base_t,
    pub max_content_len: rt_base_t,
    pub stream_line_bufsz: rt_base_t,
    pub max_tool_arg_len: rt_base_t,
    pub message_trim: rt_base_t,
    pub max_tokens: rt_base_t,
    pub max_tool_rounds: rt_base_t,
    pub http_timeout_ms: rt_base_t,
    pub http_retries: rt_base_t,
    pub retry_base_ms: rt_base_t,
    pub keep_reasoning: rt_base_t,
    pub loop_stack_size: rt_base_t,
    pub loop_priority: rt_base_t,
    pub reply_timeout_ms: rt_base_t,
    pub console_device: *const c_char,
    /// Whether the board's webclient speaks TLS (WEBCLIENT_USING_MBED_TLS or
    /// WEBCLIENT_USING_SAL_TLS): 1 or 0.
    pub webclient_tls: rt_base_t,
    /// `PKG_AGENT_REQUEST_TIMEOUT_MS`: the deadline of one whole `chat()`
    /// (connect, every attempt and wait, every byte). Read it through
    /// [`BoardConfig::request_timeout_ms`].
    pub request_timeout_ms: rt_base_t,
    /// Multimodal messages: 0 off, 1 upload to the file server
    /// (`PKG_AGENT_MULTIMODAL_ENABLE`), 2 inline `data:` URLs
    /// (`PKG_AGENT_MULTIMODAL_INLINE`). Read through the accessors below.
    pub multimodal_mode: rt_base_t,
    /// `PKG_AGENT_UPLOAD_URL`.
    pub upload_url: *const c_char,
    /// `PKG_AGENT_DOWNLOAD_URL`.
    pub download_url: *const c_char,
    /// `PKG_AGENT_FILE_OP_THREAD_SIZE`.
    pub file_op_thread_size: rt_base_t,
    /// `PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE`: the largest file sent.
    pub multimodal_max_bytes: rt_base_t,
    /// `PKG_AGENT_CLI_STACK_SIZE`: the CLI channel thread's stack.
    pub cli_stack_size: rt_base_t,
}

/// `PKG_AGENT_REQUEST_TIMEOUT_MS`'s default (the glue's and the Kconfig's).
pub const DEFAULT_REQUEST_TIMEOUT_MS: usize = 120_000;

impl BoardConfig {
    /// The request deadline in ms: the board's value, or the default when
    /// the glue's struct is older than the member (`struct_size` says so)
    /// or the value is not positive.
    pub fn request_timeout_ms(&self) -> usize {
        let end = core::mem::offset_of!(BoardConfig, request_timeout_ms)
            + core::mem::size_of::<rt_base_t>();
        if self.struct_size < 0 || (self.struct_size as usize) < end {
            return DEFAULT_REQUEST_TIMEOUT_MS;
        }
        match cap(self.request_timeout_ms) {
            0 => DEFAULT_REQUEST_TIMEOUT_MS,
            ms => ms,
        }
    }
}

/// `PKG_AGENT_FILE_OP_THREAD_SIZE`'s default.
pub const DEFAULT_FILE_OP_THREAD_SIZE: usize = 4096;
/// `PKG_AGENT_CLI_STACK_SIZE`'s default.
pub const DEFAULT_CLI_STACK_SIZE: usize = 4096;
/// `PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE`'s default: 1 MB.
pub const DEFAULT_MULTIMODAL_MAX_BYTES: usize = 1 << 20;

impl BoardConfig {
    /// Does the glue's struct reach the end of the member at `offset`?
    fn has(&self, offset: usize, size: usize) -> bool {
        self.struct_size >= 0 && self.struct_size as usize >= offset + size
    }

    /// The multimodal mode (0 off, 1 upload, 2 inline); 0 for an older glue.
    pub fn multimodal_mode(&self) -> usize {
        let at = core::mem::offset_of!(BoardConfig, multimodal_mode);
        if !self.has(at, core::mem::size_of::<rt_base_t>()) {
            return 0;
        }
        match self.multimodal_mode {
            1 => 1,
            2 => 2,
            _ => 0,
        }
    }

    /// `PKG_AGENT_UPLOAD_URL`, or "" (an older glue, or NULL).
    pub fn upload_url(&self) -> *const c_char {
        let at = core::mem::offset_of!(BoardConfig, upload_url);
        if !self.has(at, core::mem::size_of::<*const c_char>()) || self.upload_url.is_null() {
            return c"".as_ptr();
        }
        self.upload_url
    }

    /// `PKG_AGENT_DOWNLOAD_URL`, or "" (an older glue, or NULL).
    pub fn download_url(&self) -> *const c_char {
        let at = core::mem::offset_of!(BoardConfig, download_url);
        if !self.has(at, core::mem::size_of::<*const c_char>()) || self.download_url.is_null() {
            return c"".as_ptr();
        }
        self.download_url
    }

    /// `PKG_AGENT_FILE_OP_THREAD_SIZE`, or its default.
    pub fn file_op_thread_size(&self) -> usize {
        let at = core::mem::offset_of!(BoardConfig, file_op_thread_size);
        if !self.has(at, core::mem::size_of::<rt_base_t>()) {
            return DEFAULT_FILE_OP_THREAD_SIZE;
        }
        match cap(self.file_op_thread_size) {
            0 => DEFAULT_FILE_OP_THREAD_SIZE,
            n => n,
        }
    }

    /// `PKG_AGENT_CLI_STACK_SIZE`, or its default (an older glue, or not
    /// positive).
    pub fn cli_stack_size(&self) -> usize {
        let at = core::mem::offset_of!(BoardConfig, cli_stack_size);
        if !self.has(at, core::mem::size_of::<rt_base_t>()) {
            return DEFAULT_CLI_STACK_SIZE;
        }
        match cap(self.cli_stack_size) {
            0 => DEFAULT_CLI_STACK_SIZE,
            n => n,
        }
    }

    /// `PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE`, or its default.
    pub fn multimodal_max_bytes(&self) -> usize {
        let at = core::mem::offset_of!(BoardConfig, multimodal_max_bytes);
        if !self.has(at, core::mem::size_of::<rt_base_t>()) {
            return DEFAULT_MULTIMODAL_MAX_BYTES;
        }
        match cap(self.multimodal_max_bytes) {
            0 => DEFAULT_MULTIMODAL_MAX_BYTES,
            n => n,
        }
    }
}

// SAFETY: the glue defines it `const`; nothing ever writes to it.
unsafe impl Sync for BoardConfig {}

extern "C" {
    static agent_board_config: BoardConfig;
}

/// The board's configuration (a `const` object in the C glue).
#[inline]
pub fn board() -> &'static BoardConfig {
    // SAFETY: a const, fully initialised C object that lives for the whole
    // program; its layout is checked against this struct by the ABI test.
    unsafe { &agent_board_config }
}

/// `RT_EOK` as the board defines it.
#[inline]
pub fn rt_eok() -> rt_err_t {
    board().rt_eok
}

/// `RT_ERROR` (positive) as the board defines it: 1, or 255 with libc.
#[inline]
pub fn rt_error() -> rt_err_t {
    board().rt_error
}

/// `RT_ETIMEOUT` (positive).
#[inline]
pub fn rt_etimeout() -> rt_err_t {
    board().rt_etimeout
}

/// `RT_EFULL` (positive).
#[inline]
pub fn rt_efull() -> rt_err_t {
    board().rt_efull
}

/// `RT_ENOMEM` (positive).
#[inline]
pub fn rt_enomem() -> rt_err_t {
    board().rt_enomem
}

/// `RT_EINVAL` (positive).
#[inline]
pub fn rt_einval() -> rt_err_t {
    board().rt_einval
}

/// A cap option as `usize`; a zero or negative value means "no room at all".
#[inline]
pub fn cap(value: rt_base_t) -> usize {
    if value > 0 {
        value as usize
    } else {
        0
    }
}
