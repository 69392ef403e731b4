/*
 * Memory that survives trimming (src/ffi/memory.rs): the summary's size
 * limit from rtconfig.h, 0 when PKG_AGENT_SUMMARY is off.
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
