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
 * calls) or a message waits in its input mailbox; RT_FALSE while it waits
 * for one with nothing queued, or when no loop runs. A module that spaces
 * its messages out puts the next one when this reads RT_FALSE. */
rt_bool_t agent_is_busy(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_RUNTIME_H__ */
