/* tools.h - one include per built-in tool; add yours below. */
#ifndef __AGENT_TOOLS_H__
#define __AGENT_TOOLS_H__

#include "tool_add.h"
#include "tool_mul.h"
#include "tool_compare.h"

#endif /* __AGENT_TOOLS_H__ */
