/*
 * Options the library reads through small getters rather than through
 * struct agent_board_config: the summary of trimmed turns
 * (src/ffi/memory.rs) and tools for models without function calling
 * (src/ffi/tools_text.rs).
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#ifndef PKG_AGENT_SUMMARY_MAX_LEN
#define PKG_AGENT_SUMMARY_MAX_LEN 600
#endif

int agent_glue_summary_max_len(void)
{
#ifdef PKG_AGENT_SUMMARY
    return PKG_AGENT_SUMMARY_MAX_LEN;
#else
    return 0;
#endif
}

int agent_glue_tools_text(void)
{
#ifdef PKG_AGENT_TOOLS_TEXT
    return 1;
#else
    return 0;
#endif
}
