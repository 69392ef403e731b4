/* AgentDebugChannel.h - the MSH debug channel (agent_send_message). */
#ifndef __AGENT_DEBUG_CHANNEL_H__
#define __AGENT_DEBUG_CHANNEL_H__

#include "AgentChannel.h"

#ifdef __cplusplus
extern "C" {
#endif

int agent_debug_channel(MessageHub_t message_hub, Context_t context);
void agent_debug_reset(void);
extern AgentChannelOps agent_debug_ops;

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_DEBUG_CHANNEL_H__ */
