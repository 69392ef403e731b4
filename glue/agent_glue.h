/*
 * What the Rust library needs from the board's C headers and cannot read
 * itself: error numbers (they depend on RT_USING_LIBC), RT_ALIGN_SIZE, the
 * tick rate and every PKG_AGENT_* option of rtconfig.h.
 *
 * agent_board_config is defined in agent_board_config.c, compiled with the
 * board's flags; src/rtt/board.rs mirrors this struct member for member.
 */
#ifndef RTT_AGENT_GLUE_H
#define RTT_AGENT_GLUE_H

#include <rtthread.h>

struct agent_board_config
{
    rt_base_t struct_size; /* sizeof(struct agent_board_config), checked by Rust */

    /* Kernel error numbers as this board defines them (positive values). */
    rt_base_t rt_eok;
    rt_base_t rt_error;
    rt_base_t rt_etimeout;
    rt_base_t rt_efull;
    rt_base_t rt_eempty;
    rt_base_t rt_enomem;
    rt_base_t rt_einval;

    rt_base_t align_size;      /* RT_ALIGN_SIZE: what rt_malloc guarantees */
    rt_base_t tick_per_second; /* RT_TICK_PER_SECOND */

    /* PKG_AGENT_* defaults */
    const char *api_key;
    const char *api_url;
    const char *model_name;
    rt_base_t resp_bufsz;
    rt_base_t web_socket_bufsz;
    rt_base_t max_reasoning_len;
    rt_base_t max_content_len;
    rt_base_t stream_line_bufsz;
    rt_base_t max_tool_arg_len;
    rt_base_t message_trim;
    rt_base_t max_tokens;
    rt_base_t max_tool_rounds;
    rt_base_t http_timeout_ms;
    rt_base_t http_retries;
    rt_base_t retry_base_ms;
    rt_base_t keep_reasoning;
    rt_base_t loop_stack_size; /* the AgentLoop thread's stack */
    rt_base_t loop_priority;
    rt_base_t reply_timeout_ms; /* agent_send_message's wait for the reply */
    const char *console_device; /* RT_CONSOLE_DEVICE_NAME */
    rt_base_t webclient_tls;    /* webclient built with TLS: https:// URLs work */
    /* Added after the first release: keep new members at the end, so that
     * struct_size tells the library which ones a glue provides. */
    rt_base_t request_timeout_ms; /* PKG_AGENT_REQUEST_TIMEOUT_MS: one chat() in all */
    /* Multimodal messages (PKG_AGENT_MULTIMODAL_*): 0 off, 1 files uploaded
     * to the file server (PKG_AGENT_MULTIMODAL_UPLOAD, the C package's way),
     * 2 files sent inline as data: URLs (PKG_AGENT_MULTIMODAL_INLINE). */
    rt_base_t multimodal_mode;
    const char *upload_url;          /* PKG_AGENT_UPLOAD_URL */
    const char *download_url;        /* PKG_AGENT_DOWNLOAD_URL */
    rt_base_t file_op_thread_size;   /* PKG_AGENT_FILE_OP_THREAD_SIZE */
    rt_base_t multimodal_max_bytes;  /* PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE */
    rt_base_t cli_stack_size;        /* PKG_AGENT_CLI_STACK_SIZE */
};

extern const struct agent_board_config agent_board_config;

/* PKG_AGENT_API_FORMAT ("" when unset: the URL decides). */
extern const char agent_api_format[];

/* Log one complete line through ulog (or rt_kprintf without ulog).
 * level: 3 error, 4 warning, 6 info, 7 debug (ulog's LOG_LVL_* values). */
void agent_glue_log(int level, const char *text);
/* Text bytes of one log line as it will be printed now (ulog's line, or a
 * console line where ulog is not built or not started). */
int agent_glue_log_piece(void);

/* The panic handler's hand-over to the board's assert path (see
 * agent_log.c). */
void agent_glue_panic(const char *what, int line);

/* The WebNet channel (agent_webnet.c): which CGI a request came to, and
 * the request methods the channel tells apart. */
#define AGENT_WEB_CHAT 0
#define AGENT_WEB_CONFIG 1
#define AGENT_WEB_GET_CONFIG 2
#define AGENT_WEB_CLEANUP 3
#define AGENT_WEB_PAGE 4
#define AGENT_WEB_GET 1
#define AGENT_WEB_POST 2
#define AGENT_WEB_OTHER 0
struct webnet_session;
/* Register the CGI handlers and start WebNet, once; webnet_init's result. */
int agent_glue_web_start(void);
const char *agent_glue_web_token(void); /* PKG_AGENT_WEB_TOKEN ("" if unset) */
int agent_glue_web_port(void);          /* webnet_get_port() */
int agent_glue_web_method(struct webnet_session *session); /* AGENT_WEB_GET/POST/OTHER */
/* The body WebNet read (NUL-terminated, *declared_length bytes), or RT_NULL
 * when there is none or WebNet left it unread (8 KB or more, multipart). */
const char *agent_glue_web_body(struct webnet_session *session, int *declared_length);
/* The lingering close after a handler (src/wire/http_drain.rs): the body
 * bytes WebNet left unread; shut down sending and give reads a timeout;
 * one read (> 0 bytes, 0 closed or failed, < 0 nothing yet). */
int agent_glue_web_unread(struct webnet_session *session);
void agent_glue_web_linger(struct webnet_session *session, int poll_ms);
int agent_glue_web_recv(struct webnet_session *session, void *buf, int len);
/* A GET request's URL query value, or RT_NULL. */
const char *agent_glue_web_query(struct webnet_session *session, const char *name);
void agent_glue_web_header(struct webnet_session *session, const char *mimetype, int code,
                           const char *status, int length);
void agent_glue_web_write(struct webnet_session *session, const char *data, rt_size_t size);
/* The library's handler for every CGI (endpoint: AGENT_WEB_CHAT...). */
void agent_web_cgi(struct webnet_session *session, int endpoint);

/* agent_options.c: PKG_AGENT_SUMMARY_MAX_LEN with PKG_AGENT_SUMMARY, else
 * 0; 1 with PKG_AGENT_TOOLS_TEXT, else 0. */
int agent_glue_summary_max_len(void);

/* The MCP server (glue/agent_mcp_socket.c, options in agent_options.c). */
int agent_glue_mcp_option(int which);
const char *agent_glue_mcp_text(int which);
unsigned int agent_glue_mcp_entropy(void);
int agent_mcp_listen(int port, int loopback_only, int accept_poll_ms);
int agent_mcp_port(int fd);
int agent_mcp_accept(int fd, int io_timeout_ms);
int agent_mcp_set_timeout(int fd, int ms);
int agent_mcp_recv(int fd, void *buf, int len);
int agent_mcp_send(int fd, const void *buf, int len);
void agent_mcp_shutdown_write(int fd);
void agent_mcp_close(int fd);
int agent_glue_tools_text(void);
const char *agent_glue_mcp_servers(void);
int agent_glue_mcp_max_tools(void);
int agent_glue_mcp_max_response(void);

/* The channel chosen in menuconfig (AGENT_CHANNEL_OPS), or RT_NULL. */
struct AgentChannelOps;
const struct AgentChannelOps *agent_glue_channel_ops(void);
/* The extra channels chosen in menuconfig (PKG_AGENT_ALSO_WEBNET_CHANNEL,
 * PKG_AGENT_ALSO_DEBUG_CHANNEL), one per index from 0; RT_NULL past the
 * last. Their tables are the library's (channels/web.rs, debug.rs). */
const struct AgentChannelOps *agent_glue_extra_channel_ops(int index);

/* The receive indicator installed on `dev` right now (finsh's own, the
 * POSIX stdio layer's, or RT_NULL). struct rt_device's layout depends on the
 * board's options, so only C reads the member. The CLI channel saves it when
 * it takes the console and puts exactly it back when it leaves:
 * finsh_set_device() cannot do that (it returns at once for the device the
 * shell already has), and with RT_USING_POSIX_STDIO the shell waits on the
 * serial driver's indicator, not on finsh's. */
typedef rt_err_t (*agent_rx_indicate_t)(rt_device_t dev, rt_size_t size);
agent_rx_indicate_t agent_glue_rx_indicate(rt_device_t dev);
rt_device_t agent_glue_console(void);
rt_size_t agent_glue_stack_used(void);

/* How many values wait in `mb` now (0 for RT_NULL): agent_is_busy counts a
 * message put but not yet taken. */
rt_uint16_t agent_glue_mailbox_entries(rt_mailbox_t mb);

/* The kernel's interrupt lock (rt_hw_interrupt_disable/enable, macros with
 * RT_USING_SMP) for the library's atomics on CPUs without compare-and-swap. */
rt_base_t agent_atomic_lock(void);
void agent_atomic_unlock(rt_base_t level);

/* Multimodal only: the size of the regular file at `path` through the
 * board's stat() (struct stat is the board's C library's, so only C reads
 * it). Returns 0 and sets *size (files of 4 GB or more read as 0xFFFFFFFF);
 * AGENT_FILE_MISSING when there is no such file, AGENT_FILE_NOT_REGULAR for
 * a directory or device, AGENT_FILE_ERROR for any other failure. */
#define AGENT_FILE_MISSING (-1)
#define AGENT_FILE_NOT_REGULAR (-2)
#define AGENT_FILE_ERROR (-3)
int agent_glue_file_size(const char *path, rt_uint32_t *size);

/* HTTPS (agent_tls.c; src/net/tls_watch.rs). agent_tls_budget: the ms the
 * request on the calling thread may still wait (0: its deadline passed),
 * AGENT_TLS_BUDGET_CANCELLED when cleanup cancelled it, or
 * AGENT_TLS_BUDGET_UNWATCHED when no request of the library runs on this
 * thread; *silence_ms gets the longest silence allowed
 * (PKG_AGENT_HTTP_TIMEOUT_MS; untouched when unwatched). agent_tls_note:
 * why the calling thread's connection failed (AGENT_TLS_FAIL_*, with
 * mbedTLS's code). */
#define AGENT_TLS_BUDGET_CANCELLED (-1)
#define AGENT_TLS_BUDGET_UNWATCHED (-2)
#define AGENT_TLS_FAIL_CANCELLED 1
#define AGENT_TLS_FAIL_DEADLINE 2
#define AGENT_TLS_FAIL_SILENT 3
#define AGENT_TLS_FAIL_CLOSED 4
#define AGENT_TLS_FAIL_CA 5
#define AGENT_TLS_FAIL_NAME 6
#define AGENT_TLS_FAIL_EXPIRED 7
#define AGENT_TLS_FAIL_FUTURE 8
#define AGENT_TLS_FAIL_RECORD 9
#define AGENT_TLS_FAIL_HANDSHAKE 10
#define AGENT_TLS_FAIL_CONNECT 11
int agent_tls_budget(unsigned int *silence_ms);
void agent_tls_note(int failure, int detail);
/* Log, at the agent's start, what this firmware's HTTPS cannot protect
 * against (record size, no clock, no RNG); nothing without TLS. */
void agent_tls_report(void);
/* Drop the TLS session kept for resumption (the agent's cleanup). */
void agent_tls_forget(void);

/* TLS entropy on a board without a hardware RNG (agent_tls_seed.c, used by
 * agent_tls.c). The seed file's path (PKG_AGENT_TLS_SEED_FILE with DFS's
 * POSIX API, else ""). agent_glue_board_ids: what differs between boards
 * (the MAC addresses of lwIP's interfaces, then agent_board_unique_id's
 * bytes), at most `size` bytes into buf; their count. */
#define AGENT_TLS_SEED_LEN 32
const char *agent_glue_tls_seed_file(void);
int agent_glue_board_ids(unsigned char *buf, int size);
/* How agent_tls_seed_boot reaches the entropy: mix bytes into it (mbedTLS's
 * entropy accumulator on a board), draw from the DRBG seeded with what was
 * mixed (seeding it at the first draw). Each returns 0 on success. */
struct agent_tls_seed_io
{
    void *ctx;
    int (*mix)(void *ctx, const unsigned char *data, rt_size_t len);
    int (*draw)(void *ctx, unsigned char *out, rt_size_t len);
};
/* agent_tls_seed_boot's result: the seed file's state, with
 * AGENT_TLS_SEED_NOT_WRITTEN when the next one could not be written;
 * AGENT_TLS_SEED_FAILED when mixing or drawing failed (pool zeroed). */
#define AGENT_TLS_SEED_OFF 0        /* no seed file (`path` NULL or "") */
#define AGENT_TLS_SEED_READ 1       /* read whole and mixed in */
#define AGENT_TLS_SEED_MISSING 2    /* none yet: a first boot */
#define AGENT_TLS_SEED_SHORT 3      /* under AGENT_TLS_SEED_LEN bytes (mixed in all the same) */
#define AGENT_TLS_SEED_UNREADABLE 4 /* there, but a read failed */
#define AGENT_TLS_SEED_NOT_WRITTEN 0x10
#define AGENT_TLS_SEED_FAILED (-1)
/* Once per boot: mix the seed file at `path` (if any) and the board's IDs
 * in, write the next boot's seed drawn from the seeded DRBG (whole, to
 * "<path>.tmp" renamed over it), then draw `pool_len` bytes into `pool`.
 * Logs one line (path and counts, never the seed). */
int agent_tls_seed_boot(const char *path, const struct agent_tls_seed_io *io, unsigned char *pool,
                        rt_size_t pool_len);

/* Tokens (issue 30). The WebNet channel: 1 with PKG_AGENT_WEB_OPEN_CHAT
 * (chat without a token while none is set); the client's address of the
 * request (IPv4: 4 bytes into addr; returns their count). The MCP server:
 * its client's address the same way (-1 when unknown). The state file
 * (agent_options.c): its path ("" for none), read (bytes, or -1) and
 * written atomically (0, or -1). */
int agent_glue_web_open_chat(void);
int agent_glue_web_peer(struct webnet_session *session, unsigned char *addr);
int agent_mcp_peer(int fd, unsigned char *addr);
const char *agent_glue_state_file(void);
/* The file's bytes: their count, -1 (no such file), -2 (a read failed). */
int agent_glue_state_read(const char *path, char *buf, int size);
int agent_glue_state_write(const char *path, const char *data, int len);
int agent_glue_file_set_aside(const char *path);
/* The notes file (PKG_AGENT_NOTES): its path ("" : none) and bound. */
const char *agent_glue_notes_file(void);
int agent_glue_notes_max(void);
/* The schedule file (PKG_AGENT_SCHEDULE) and the local time for its cron
 * entries (out: minute, hour, day, month 1-12, weekday; -1: no clock). */
const char *agent_glue_schedule_file(void);
/* The sub-agent profiles file (PKG_AGENT_SUBAGENTS; "" : none). */
const char *agent_glue_profiles_file(void);
int agent_glue_local_time(int *out);

#endif /* RTT_AGENT_GLUE_H */

/* The extension API (include/AgentExt.h), here too so that everything that
 * includes the glue header sees its prototypes. */
#include "AgentExt.h"
