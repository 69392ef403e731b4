/*
 * AgentRuntime.h - the running agent, as other modules see it: its message
 * hub, whether its loop runs, whether it is answering a message now.
 * Implemented in Rust (src/ffi/runtime.rs). Every function is safe to call
 * from any thread at any time, a concurrent cleanup_agent_entry included.
 */
#ifndef __AGENT_RUNTIME_H__
#define __AGENT_RUNTIME_H__

#include <rtthread.h>
#include "MessageHub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The running agent's hub, to put user messages on its input mailbox
 * (message_hub_put(hub, msg, hub->input_mailbox)); RT_NULL while no agent
 * loop runs. The hub belongs to the agent (never destroy it) and is valid
 * until the agent is cleaned up. */
MessageHub_t agent_get_message_hub(void);

/* RT_TRUE while the agent loop runs (main_loop_entry done, no cleanup yet). */
rt_bool_t agent_is_running(void);

/* RT_TRUE while the loop answers a message (the model request and its tool
 * calls); RT_FALSE while it waits for one, or when no loop runs. It turns
 * RT_TRUE when the loop takes the message from the input mailbox, not when
 * it is put there: right after a put from a thread of the loop's priority or
 * higher it can still read RT_FALSE. To space messages out, wait for the
 * reply (or for RT_TRUE, then RT_FALSE) before the next put. */
rt_bool_t agent_is_busy(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_RUNTIME_H__ */
