/*
 * Host-port-only extensions for tests and the simulator. Nothing in the
 * library uses these; firmware code must not either.
 */
#ifndef RT_HOST_H__
#define RT_HOST_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Heap fault injection for the calling thread: after `n` more successful
 * allocations every allocation fails until called again with n < 0. */
void rt_host_heap_fail_after(long n);
/* Process-wide fault injection (every thread not excluded): fail exactly the
 * k-th allocation from now, or every one from the k-th on; count only. */
void rt_host_heap_fail_nth(long k);
void rt_host_heap_fail_from(long k);
void rt_host_heap_count_allocs(void);
unsigned long rt_host_heap_alloc_count(void);
unsigned long rt_host_heap_injected_count(void);
/* Forget the high-water mark: max_used becomes the current used. */
void rt_host_heap_reset_max_used(void);

/* Console capture: while on, console output goes to a fixed buffer instead
 * of stdout. take copies out (and clears) at most size-1 bytes, NUL-ended,
 * and returns how many bytes were captured in all. */
void rt_host_console_capture(rt_bool_t on);
size_t rt_host_console_take(char *buf, size_t size);

/* Run a shell command line against the commands registered by
 * MSH_CMD_EXPORT; returns the command's result or -1 if there is none. */
int rt_host_msh_exec(const char *line);

/* Shut down a webclient session's socket from another thread: a read or
 * write blocked on it returns -WEBCLIENT_DISCONNECT at once. The owner still
 * calls webclient_close. */
struct webclient_session;
int rt_host_webclient_abort(struct webclient_session *session);

/* The TCP port the host WebNet listens on after webnet_init (useful with
 * webnet_set_port(0)), or -1 before. */
int rt_host_webnet_bound_port(void);

/* Type bytes into the console device, as a terminal would. */
void rt_host_console_input(const char *bytes, size_t len);

/* Multimodal settings in place of the build's (PKG_AGENT_MULTIMODAL_*):
 * mode 0 off, 1 upload, 2 inline; NULL URLs and max_bytes <= 0 keep the
 * build's value; mode < 0 restores them all. The strings are copied. */
void rt_host_multimodal_set(int mode, const char *upload_url, const char *download_url,
                            long max_bytes);

#ifdef __cplusplus
}
#endif

#endif
