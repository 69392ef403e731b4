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

/*
 * The MCP server's options (src/mcp/server.rs), by number, so the library
 * needs no struct layout for them: 0 enabled, 1 port, 2 largest body,
 * 3 sessions, 4 session idle seconds, 5 tools per page, 6 thread stack,
 * 7 thread priority, 8 loopback only; texts: 0 path, 1 token, 2 origins.
 */
#ifndef PKG_AGENT_MCP_PORT
#define PKG_AGENT_MCP_PORT 8000
#endif
#ifndef PKG_AGENT_MCP_MAX_BODY
#define PKG_AGENT_MCP_MAX_BODY 4096
#endif
#ifndef PKG_AGENT_MCP_MAX_SESSIONS
#define PKG_AGENT_MCP_MAX_SESSIONS 4
#endif
#ifndef PKG_AGENT_MCP_SESSION_IDLE_S
#define PKG_AGENT_MCP_SESSION_IDLE_S 600
#endif
#ifndef PKG_AGENT_MCP_PAGE_SIZE
#define PKG_AGENT_MCP_PAGE_SIZE 16
#endif
#ifndef PKG_AGENT_MCP_THREAD_STACK
#define PKG_AGENT_MCP_THREAD_STACK 6144
#endif
#ifndef PKG_AGENT_MCP_THREAD_PRIORITY
#define PKG_AGENT_MCP_THREAD_PRIORITY 21
#endif
#ifndef PKG_AGENT_MCP_PATH
#define PKG_AGENT_MCP_PATH "/mcp"
#endif
#ifndef PKG_AGENT_MCP_TOKEN
#define PKG_AGENT_MCP_TOKEN ""
#endif
#ifndef PKG_AGENT_MCP_ORIGINS
#define PKG_AGENT_MCP_ORIGINS ""
#endif

int agent_glue_mcp_option(int which)
{
    switch (which)
    {
#ifdef PKG_AGENT_MCP_SERVER
    case 0: return 1;
#endif
    case 1: return PKG_AGENT_MCP_PORT;
    case 2: return PKG_AGENT_MCP_MAX_BODY;
    case 3: return PKG_AGENT_MCP_MAX_SESSIONS;
    case 4: return PKG_AGENT_MCP_SESSION_IDLE_S;
    case 5: return PKG_AGENT_MCP_PAGE_SIZE;
    case 6: return PKG_AGENT_MCP_THREAD_STACK;
    case 7: return PKG_AGENT_MCP_THREAD_PRIORITY;
#if defined(AGENT_ALL_PARTS) && defined(__linux__)
    /* The host port serves on 127.0.0.1 only. */
    case 8: return 1;
#endif
    default: return 0;
    }
}

const char *agent_glue_mcp_text(int which)
{
    switch (which)
    {
    case 0: return PKG_AGENT_MCP_PATH;
    case 1: return PKG_AGENT_MCP_TOKEN;
    default: return PKG_AGENT_MCP_ORIGINS;
    }
}
