/*
 * tool_func.h - tool registration (src/tool_func.c, edited by users).
 */
#ifndef __AGENT_TOOL_FUNC_H__
#define __AGENT_TOOL_FUNC_H__

#include "tool_base.h"
#include "tools.h"
#include "utils.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the built-in tools and yours; idempotent; an MSH command. */
void init_tools();
/* agent_tool_list_destroy() and forget that init_tools() ran. */
void agent_tools_cleanup(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_TOOL_FUNC_H__ */
