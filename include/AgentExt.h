/*
 * AgentExt.h - additions of this package over the C Agent package's API
 * (its headers are unchanged). Implemented in Rust (src/ffi/config.rs,
 * src/ffi/tools.rs).
 *
 * Network tokens: the WebNet channel's (PKG_AGENT_WEB_TOKEN: the web chat
 * and its settings) and the MCP server's (PKG_AGENT_MCP_TOKEN: the bearer
 * token). A token set here replaces the build's value at once and, with a
 * state file (PKG_AGENT_STATE_FILE), across reboots. See docs/security.md.
 */
#ifndef __AGENT_EXT_H__
#define __AGENT_EXT_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AGENT_TOKEN_WEB 0
#define AGENT_TOKEN_MCP 1
#define AGENT_TOKEN_MIN_LEN 16
#define AGENT_TOKEN_MAX_LEN 127

/*
 * Set `which`'s token: 16 to 127 visible ASCII characters; "" for no token
 * (only with PKG_AGENT_WEB_OPEN_CHAT / PKG_AGENT_MCP_ALLOW_ANONYMOUS);
 * NULL: back to the build's value. The string is copied. Returns 0 (set,
 * and saved when there is a state file), 1 (set, but the state file could
 * not be written: until reboot), -1 (refused: too short, too long or a
 * blank or control character), -2 (refused: "" without the option that
 * allows it), -3 (unknown `which`, or that part is not built).
 * A running MCP server checks the new token from its next request; a
 * server that did not start for want of a token starts with the agent's
 * next start.
 */
int agent_token_set(int which, const char *token);

/* 1 when `which` needs a token now, 0 when none is set, -1 when that part
 * is not built. The token itself is never returned. */
int agent_token_is_set(int which);

#ifdef PKG_AGENT_TOOL_OPTIONS
#include "tool_base.h"

/*
 * A tool's options (PKG_AGENT_TOOL_OPTIONS), given to append_tool_ex.
 * All zero is a tool as append_tool makes it.
 */
typedef struct agent_tool_options
{
    /* Milliseconds a call may take; 0: none of its own. A remote (MCP)
     * tool's request ends there, and its call is answered with an error
     * the model reads. A C tool cannot be stopped: it reads what is left
     * with agent_tool_deadline_ms() and should return in time (running
     * past it is logged). */
    rt_uint32_t timeout_ms;
    /* Remote tools: times a failed call is sent again, with back-off
     * (PKG_AGENT_RETRY_BASE_MS, doubled each time), within the timeout.
     * Only for tools that may safely run twice. */
    rt_uint8_t retries;
    /* 1: a successful result is the answer the user gets; the model is
     * not asked again in that turn. A failed call goes to the model. */
    rt_uint8_t direct;
    rt_uint8_t reserved[2];
} agent_tool_options_t;

/*
 * append_tool with `options` (NULL: none), kept for the tool's function
 * name. Ownership as append_tool: `tool_obj` is taken, also on failure;
 * `options` is copied. RT_EOK, or RT_ERROR (out of memory, or refused).
 */
rt_err_t append_tool_ex(cJSON *tool_obj, void (*execute_func)(cJSON *param, struct AgentToolList *node),
                        const agent_tool_options_t *options);

/*
 * The options of the tool named `name`, for tools the board does not
 * register itself: a remote MCP tool ("m<N>_<name>", PKG_AGENT_MCP_CLIENT).
 * Kept (copied) until set again, across the agent's restarts; NULL
 * `options`: none. RT_EOK, RT_ERROR (out of memory), -RT_EINVAL (NULL or
 * empty name).
 */
rt_err_t agent_tool_set_options(const char *name, const agent_tool_options_t *options);

/*
 * For a tool while it runs: the milliseconds left before its timeout (0
 * once it has passed); -1 (RT_WAITING_FOREVER) when it has no timeout or
 * no tool runs.
 */
rt_int32_t agent_tool_deadline_ms(void);
#endif /* PKG_AGENT_TOOL_OPTIONS */

#ifdef PKG_AGENT_SCHEDULE
/*
 * Scheduled prompts (PKG_AGENT_SCHEDULE; the MSH command agent_schedule).
 * A due prompt enters the running agent as a user message; its reply goes
 * out as every reply does, to the log, and to the sink below. While one
 * run of an entry waits or is answered, its next due runs are counted as
 * missed, not queued. Entries are kept in PKG_AGENT_SCHEDULE_FILE.
 */

/* `when`: "every <N>s|m|h" or five cron fields ("*\/15 9-17 * * 1-5",
 * only when the board's clock is set); both strings are copied. Returns
 * the entry's number (from 1), or -RT_EINVAL (not valid), -RT_EFULL (8
 * entries), -RT_ENOMEM, -RT_ERROR (no schedule file, or not written). */
int agent_schedule_add(const char *when, const char *prompt);

/* RT_EOK, -RT_EINVAL (no such entry), -RT_ERROR (file not written). */
rt_err_t agent_schedule_del(int id);

/* Also hand each scheduled reply to sink(id, reply), on the agent loop's
 * thread (reply borrowed for the call); NULL: none. */
void agent_schedule_set_sink(void (*sink)(int id, const char *reply));
#endif /* PKG_AGENT_SCHEDULE */

#ifdef PKG_AGENT_SUBAGENTS
/*
 * Sub-agents (PKG_AGENT_SUBAGENTS): each profile is offered to the model as
 * a tool named after it, with one parameter, "task". The call runs a second
 * agent (its own system prompt, endpoint, model, and the tools listed) and
 * returns only its final answer. A sub-agent has no sub-agents; its
 * conversation is freed when it returns. Profiles also come from
 * PKG_AGENT_PROFILES_FILE.
 */
typedef struct agent_profile
{
    const char *name;          /* the tool's name: 1-64 of A-Z a-z 0-9 _ - */
    const char *description;   /* what it is for (the tool's description) */
    const char *system_prompt; /* required */
    const char *api_url;       /* NULL or "": the agent's */
    const char *api_key;       /* NULL or "": the agent's, only for the agent's URL */
    const char *model;         /* NULL or "": the agent's */
    const char *tools;         /* tool names, comma-separated; NULL or "": none */
} agent_profile_t;

/* Add or replace a profile (every string copied); offered from the agent's
 * next start. RT_EOK, -RT_EINVAL (a bad name, no system prompt), -RT_ENOMEM. */
rt_err_t agent_profile_add(const agent_profile_t *profile);

/* Remove a profile (from the next start): RT_EOK, or -RT_EINVAL. */
rt_err_t agent_profile_del(const char *name);
#endif /* PKG_AGENT_SUBAGENTS */

/*
 * The board's unique chip ID (an STM32's 96-bit UID, a chip's eFuse MAC,
 * ...), mixed with the MAC addresses into the entropy of TLS keys, so that
 * two boards without a hardware RNG differ (glue/agent_tls_seed.c;
 * docs/tls.md). Not secret. A board that has one defines this function:
 * write at most `len` bytes of the ID into `buf` and return how many. The
 * package's own definition is weak and has none (0).
 */
rt_size_t agent_board_unique_id(rt_uint8_t *buf, rt_size_t len);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_EXT_H__ */
