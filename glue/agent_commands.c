/*
 * The agent's MSH commands (MSH_CMD_EXPORT is a C macro that places a
 * descriptor in finsh's FSymTab section, so the export lives in C), and the
 * channel chosen in menuconfig (AGENT_CHANNEL_OPS, a macro too).
 * The commands themselves are implemented in Rust.
 */
#include <rtthread.h>
#include "AgentLoop.h"
#include "AgentChannels.h"
#include "agent_glue.h"
#ifdef RT_USING_FINSH
#include <shell.h>
#endif

int agent_send_message(int argc, char **argv);
int agent_config(int argc, char **argv);
int agent_status(int argc, char **argv);
int agent_schedule(int argc, char **argv);

const struct AgentChannelOps *agent_glue_channel_ops(void)
{
    return AGENT_CHANNEL_OPS;
}

#if defined(PKG_AGENT_ALSO_WEBNET_CHANNEL)
extern const struct AgentChannelOps agent_webnet_extra_ops;
#endif
#if defined(PKG_AGENT_ALSO_DEBUG_CHANNEL)
extern const struct AgentChannelOps agent_debug_extra_ops;
#endif

const struct AgentChannelOps *agent_glue_extra_channel_ops(int index)
{
    static const struct AgentChannelOps *const extras[] = {
#if defined(PKG_AGENT_ALSO_WEBNET_CHANNEL)
        &agent_webnet_extra_ops,
#endif
#if defined(PKG_AGENT_ALSO_DEBUG_CHANNEL)
        &agent_debug_extra_ops,
#endif
        RT_NULL,
    };
    if (index < 0 || index >= (int)(sizeof(extras) / sizeof(extras[0])))
        return RT_NULL;
    return extras[index];
}

/* Each command only when its part is built: the SConscript turns the same
 * options into the library's cargo features (AGENT_ALL_PARTS: every part,
 * as the host port builds it). */
#ifdef RT_USING_FINSH
MSH_CMD_EXPORT(main_loop_entry, start the agent loop);
MSH_CMD_EXPORT(cleanup_agent_entry, stop the agent loop and free everything);
#if defined(PKG_AGENT_DEBUG_CHANNEL) || defined(PKG_AGENT_ALSO_DEBUG_CHANNEL) || defined(AGENT_ALL_PARTS)
MSH_CMD_EXPORT(agent_send_message, agent_send_message <type 0 text/1 audio/2 image/3 video> <content>);
#endif
#if defined(PKG_AGENT_MSH_EXTRAS) || defined(AGENT_ALL_PARTS)
MSH_CMD_EXPORT(agent_config, agent_config [key|model|url <value>]: show or set the LLM endpoint);
MSH_CMD_EXPORT(agent_status, show the agent loop state and heap use);
#endif
#if defined(PKG_AGENT_SCHEDULE) || defined(AGENT_ALL_PARTS)
MSH_CMD_EXPORT(agent_schedule, agent_schedule add <when> <prompt> | list | run <id> | del <id>: prompts run on a schedule);
#endif
#endif
