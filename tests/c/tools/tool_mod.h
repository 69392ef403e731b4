#ifndef __AGENT_TOOL_MOD_H__
#define __AGENT_TOOL_MOD_H__
#include "tool_base.h"

/*
 * @brief The remainder of a divided by b (both truncated to integers).
 * @param args_obj {"a": number, "b": number}
 * @param node     result goes to node->ret
 */
void tool_mod(cJSON *args_obj, AgentToolNode_t node);

#endif // __AGENT_TOOL_MOD_H__
