/* CLI.h - the console channel (line editor on RT_CONSOLE_DEVICE_NAME). */
#ifndef __AGENT_CLI_H__
#define __AGENT_CLI_H__

#include "AgentChannel.h"
#include <shell.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The C package's CLI channel state, declared for code written against
 * its header. This library keeps its CLI state in Rust and never reads or
 * writes this struct. */
#define CLI_CMD_BUFFER_SIZE 512
#define CLI_HISTORY_LINES 5
/* The CLI thread's stack: PKG_AGENT_CLI_STACK_SIZE where the board sets
 * it, else the C package's 4096. */
#ifdef PKG_AGENT_CLI_STACK_SIZE
#define CLI_THREAD_STACK_SIZE PKG_AGENT_CLI_STACK_SIZE
#else
#define CLI_THREAD_STACK_SIZE 4096
#endif

enum CLI_channelInputStat
{
    CLI_WAIT_NORMAL,
    CLI_WAIT_SPEC_KEY,
    CLI_WAIT_FUNC_KEY,
};

typedef struct CLI_channel
{
    rt_thread_t thread;
    enum CLI_channelInputStat stat;
    rt_sem_t rx_sem;
    rt_sem_t exit_sem;
    char CLI_history[CLI_HISTORY_LINES][CLI_CMD_BUFFER_SIZE];
    rt_uint16_t history_count;
    rt_uint16_t history_current;
    char line[CLI_CMD_BUFFER_SIZE];
    rt_uint16_t line_position;
    rt_uint16_t line_curpos;
    rt_device_t device;
    rt_err_t (*rx_indicate)(rt_device_t dev, rt_size_t size);
    MessageHub_t message_hub;
    rt_bool_t thread_running;
} CLI_channel, *CLI_channel_t;

int agent_cli_channel(MessageHub_t message_hub, Context_t context);
void agent_cli_stop(void);
extern AgentChannelOps agent_cli_ops;

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_CLI_H__ */
