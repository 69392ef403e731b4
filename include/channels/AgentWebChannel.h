/* AgentWebChannel.h - the WebNet channel. webnet's headers are only needed
 * (and only present) when the board uses webnet. */
#ifndef __AGENT_WEB_CHANNEL_H__
#define __AGENT_WEB_CHANNEL_H__

#include "AgentChannel.h"
#if defined(PKG_AGENT_WEBNET_CHANNEL) || defined(PKG_USING_WEBNET)
#include <webnet.h>
#include <wn_module.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

void webnet_agent_mode(MessageHub_t hub, Context_t ctx);
void agent_webnet_reset(void);
extern AgentChannelOps agent_webnet_ops;

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_WEB_CHANNEL_H__ */
