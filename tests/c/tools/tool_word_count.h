#ifndef __AGENT_TOOL_WORD_COUNT_H__
#define __AGENT_TOOL_WORD_COUNT_H__
#include "tool_base.h"

/*
 * @brief Count the whitespace-separated words of a text.
 * @param args_obj {"text": string}
 * @param node     result goes to node->ret
 */
void tool_word_count(cJSON *args_obj, AgentToolNode_t node);

#endif // __AGENT_TOOL_WORD_COUNT_H__
