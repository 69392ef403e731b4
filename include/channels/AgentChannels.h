/*
 * AgentChannels.h - AGENT_CHANNEL_OPS: the channel chosen in menuconfig.
 */
#ifndef __AGENT_CHANNELS_H__
#define __AGENT_CHANNELS_H__

#include "AgentChannel.h"

#if defined(PKG_AGENT_CLI_CHANNEL)
#include "CLI.h"
#define AGENT_CHANNEL_OPS (&agent_cli_ops)
#elif defined(PKG_AGENT_WEBNET_CHANNEL)
#include "AgentWebChannel.h"
#define AGENT_CHANNEL_OPS (&agent_webnet_ops)
#elif defined(PKG_AGENT_DEBUG_CHANNEL)
#include "AgentDebugChannel.h"
#define AGENT_CHANNEL_OPS (&agent_debug_ops)
#else
/* No channel: a null pointer of the same type as the others. */
#define AGENT_CHANNEL_OPS ((AgentChannelOps *)RT_NULL)
#endif

#endif /* __AGENT_CHANNELS_H__ */
