/*
 * AgentChannel.h - the interface every channel implements.
 */
#ifndef __AGENT_CHANNEL_H__
#define __AGENT_CHANNEL_H__

#include <rtthread.h>
#include "MessageHub.h"
#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct AgentChannelOps
{
    int (*init)(MessageHub_t hub, Context_t ctx);
    void (*reset)(void);
} AgentChannelOps;

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_CHANNEL_H__ */
