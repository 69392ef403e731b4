/*
 * context.h - the conversation: one cJSON array of OpenAI chat messages.
 */
#ifndef __AGENT_CONTEXT_H__
#define __AGENT_CONTEXT_H__

#include <rtconfig.h>
#include <rtthread.h>
#include "prompt.h"
#include "MessageHub.h"
#include "chat.h"
#include "utils.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum RoleType
{
    ROLE_SYSTEM,
    ROLE_USER,
    ROLE_ASSISTANT,
    ROLE_TOOL
} RoleType;

typedef struct Context
{
    cJSON *message;
    rt_err_t (*build_system_prompt)(struct Context *self);
    rt_err_t (*append_user_message)(struct Context *self, Messages_t messages);
    rt_err_t (*append_assistant_message)(struct Context *self, ChatResponse_t resp);
    rt_err_t (*append_tool_message)(struct Context *self, const char *tool_call_id, Messages_t messages);
    rt_err_t (*clear_message)(struct Context *self);
    rt_err_t (*trim_context)(struct Context *self, int keep_rounds);
} Context, *Context_t;

char *get_role_string(RoleType type);
Context_t agent_context_create(void);
void agent_context_destroy(Context_t context);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_CONTEXT_H__ */
