/*
 * tool_base.h - the tool registry. Implemented in Rust (src/ffi/tools.rs).
 */
#ifndef __AGENT_TOOL_BASE_H__
#define __AGENT_TOOL_BASE_H__

#include <rtthread.h>
#include "cJSON.h"
#include "utils.h"
#include "chat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct AgentToolRet
{
    rt_err_t ret;
    Messages_t messages;
} AgentToolRet, *AgentToolRet_t;

typedef struct AgentToolList
{
    cJSON *tool_obj;
    AgentToolRet ret;
    void (*execute_func)(cJSON *param, struct AgentToolList *node);
    struct AgentToolList *next;
} AgentToolList, AgentToolNode, *AgentToolNode_t;

rt_err_t agent_tool_list_create(void);
rt_err_t append_tool(cJSON *tool_obj, void (*execute_func)(cJSON *param, struct AgentToolList *node));
cJSON *build_tools_json(void);
void free_agent_tool_node(AgentToolNode_t node);
void agent_tool_list_destroy(void);
AgentToolNode_t search_agent_tool_node(cJSON *tool_obj);
cJSON *get_agent_tools(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_TOOL_BASE_H__ */
