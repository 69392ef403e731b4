/* CLI.h - the console channel (line editor on RT_CONSOLE_DEVICE_NAME). */
#ifndef __AGENT_CLI_H__
#define __AGENT_CLI_H__

#include "AgentChannel.h"
#include <shell.h>

#ifdef __cplusplus
extern "C" {
#endif

int agent_cli_channel(MessageHub_t message_hub, Context_t context);
void agent_cli_stop(void);
extern AgentChannelOps agent_cli_ops;

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_CLI_H__ */
