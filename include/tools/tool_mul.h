#ifndef __AGENT_TOOL_MUL_H__
#define __AGENT_TOOL_MUL_H__
#include "tool_base.h"

/*
 * @brief Execute the "mul" tool.
 * @param args_obj the call's arguments (owned by the caller)
 * @param node     the tool's node; the result goes to node->ret
 */
void tool_mul(cJSON *args_obj, AgentToolNode_t node);

#endif /* __AGENT_TOOL_MUL_H__ */
