//! The C glue's functions and values (glue/*.c, agent_glue.h), declared
//! once: what the board's configuration and the BSP give the library that
//! Rust cannot read by itself (menuconfig's options, WebNet's sessions,
//! sockets, files). The host port defines the same symbols (src/host/).
//!
//! Only C and kernel types appear here. Where the glue hands over a table
//! of a type the library defines higher up (the channel's ops, the runtime
//! configuration's storage), it is declared as an opaque type and cast
//! once where it is used.

use super::kernel::{rt_device_t, rt_err_t, rt_size_t};
use core::ffi::{c_char, c_int, c_void};

/// The glue's typedef of the same name (agent_glue.h).
pub type agent_rx_indicate_t =
    Option<unsafe extern "C" fn(dev: rt_device_t, size: rt_size_t) -> rt_err_t>;

/// WebNet's `struct webnet_session`, only ever handled by pointer (its
/// layout depends on WebNet's options; the glue reads it).
#[repr(C)]
pub struct WebSession {
    _opaque: [u8; 0],
}

/// A channel's `AgentChannelOps` (runtime::agent_loop), as the glue hands
/// its address over.
#[repr(C)]
pub struct ChannelOpsTable {
    _opaque: [u8; 0],
}

/// The glue's `agent_runtime_config_t` (runtime::config), by address only.
#[repr(C)]
pub struct RuntimeConfigStorage {
    _opaque: [u8; 0],
}

extern "C" {
    // ---- the agent's start and the board's tool file ------------------
    /// AGENT_CHANNEL_OPS, as the C glue sees it.
    pub fn agent_glue_channel_ops() -> *const ChannelOpsTable;
    /// The extra channels chosen in menuconfig (`PKG_AGENT_ALSO_*`), one
    /// per index from 0; NULL past the last.
    pub fn agent_glue_extra_channel_ops(index: c_int) -> *const ChannelOpsTable;
    /// Both in the user-editable src/tool_func.c.
    pub fn init_tools();
    pub fn agent_tools_cleanup();
    /// The runtime configuration's storage (glue/agent_board_config.c).
    pub static mut agent_runtime_config_storage: RuntimeConfigStorage;
    /// `PKG_AGENT_API_FORMAT` (glue/agent_board_config.c).
    pub static agent_api_format: [c_char; 0];
    /// glue/agent_board_config.c: the MQTT toolset built without a broker.
    pub static agent_mqtt_broker_unset: c_int;

    // ---- the console (glue/agent_console.c) -----------------------------
    pub fn agent_glue_rx_indicate(dev: rt_device_t) -> agent_rx_indicate_t;
    /// The device the shell reads, or NULL.
    pub fn agent_glue_console() -> rt_device_t;
    /// Bytes of the calling thread's stack ever used; 0 on the host.
    pub fn agent_glue_stack_used() -> rt_size_t;

    // ---- files: the state file, a file set aside -------------------------
    pub fn agent_glue_state_file() -> *const c_char;
    pub fn agent_glue_state_read(path: *const c_char, buf: *mut c_char, size: c_int) -> c_int;
    pub fn agent_glue_state_write(path: *const c_char, data: *const c_char, len: c_int) -> c_int;
    /// Rename `path` to `<path>.bad` (an older one is replaced); 0 on success.
    pub fn agent_glue_file_set_aside(path: *const c_char) -> c_int;

    // ---- abilities' options ---------------------------------------------
    /// PKG_AGENT_PROFILES_FILE; on the host RTT_AGENT_PROFILES_FILE.
    pub fn agent_glue_profiles_file() -> *const c_char;
    /// PKG_AGENT_SUMMARY_MAX_LEN with PKG_AGENT_SUMMARY, else 0.
    pub fn agent_glue_summary_max_len() -> c_int;
    /// PKG_AGENT_NOTES_FILE ("" : no notes); on the host
    /// RTT_AGENT_NOTES_FILE from the environment.
    pub fn agent_glue_notes_file() -> *const c_char;
    /// PKG_AGENT_NOTES_MAX.
    pub fn agent_glue_notes_max() -> c_int;
    /// PKG_AGENT_SCHEDULE_FILE; on the host RTT_AGENT_SCHEDULE_FILE.
    pub fn agent_glue_schedule_file() -> *const c_char;
    /// The board's local time, when its clock is set: 0, or -1.
    pub fn agent_glue_local_time(tm: *mut c_int) -> c_int;
    /// 1 with PKG_AGENT_TOOLS_TEXT, else 0.
    pub fn agent_glue_tools_text() -> c_int;

    // ---- the MCP client (glue/agent_mcp_client.c) -----------------------
    /// PKG_AGENT_MCP_SERVERS: a static string.
    pub fn agent_glue_mcp_servers() -> *const c_char;
    /// PKG_AGENT_MCP_MAX_TOOLS.
    pub fn agent_glue_mcp_max_tools() -> c_int;
    /// PKG_AGENT_MCP_MAX_RESPONSE.
    pub fn agent_glue_mcp_max_response() -> c_int;

    // ---- the MCP server: its options and its sockets ----------------------
    pub fn agent_glue_mcp_option(which: c_int) -> c_int;
    pub fn agent_glue_mcp_text(which: c_int) -> *const c_char;
    pub fn agent_glue_mcp_entropy() -> u32;
    pub fn agent_mcp_listen(port: c_int, loopback_only: c_int, accept_poll_ms: c_int) -> c_int;
    pub fn agent_mcp_port(fd: c_int) -> c_int;
    pub fn agent_mcp_accept(fd: c_int, io_timeout_ms: c_int) -> c_int;
    pub fn agent_mcp_peer(fd: c_int, addr: *mut u8) -> c_int;
    pub fn agent_mcp_recv(fd: c_int, buf: *mut c_void, len: c_int) -> c_int;
    pub fn agent_mcp_send(fd: c_int, buf: *const c_void, len: c_int) -> c_int;
    pub fn agent_mcp_set_timeout(fd: c_int, ms: c_int) -> c_int;
    pub fn agent_mcp_shutdown_write(fd: c_int);
    pub fn agent_mcp_close(fd: c_int);

    // ---- the WebNet page (glue/agent_webnet.c) ------------------------------
    pub fn agent_glue_web_token() -> *const c_char;
    pub fn agent_glue_web_open_chat() -> c_int;
    pub fn agent_glue_web_start() -> c_int;
    pub fn agent_glue_web_port() -> c_int;
    pub fn agent_glue_web_method(session: *mut WebSession) -> c_int;
    pub fn agent_glue_web_body(
        session: *mut WebSession,
        declared_length: *mut c_int,
    ) -> *const c_char;
    pub fn agent_glue_web_query(session: *mut WebSession, name: *const c_char) -> *const c_char;
    pub fn agent_glue_web_header(
        session: *mut WebSession,
        mimetype: *const c_char,
        code: c_int,
        status: *const c_char,
        length: c_int,
    );
    pub fn agent_glue_web_write(session: *mut WebSession, data: *const c_char, size: rt_size_t);
    pub fn agent_glue_web_peer(session: *mut WebSession, addr: *mut u8) -> c_int;
    pub fn agent_glue_web_unread(session: *mut WebSession) -> c_int;
    pub fn agent_glue_web_linger(session: *mut WebSession, poll_ms: c_int);
    pub fn agent_glue_web_recv(session: *mut WebSession, buf: *mut c_void, len: c_int) -> c_int;
}
