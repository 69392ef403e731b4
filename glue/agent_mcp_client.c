/*
 * The MCP client's options (src/abilities/mcp_server/client/): the remote servers and the
 * caps, read through small getters as agent_options.c does for others.
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#ifndef PKG_AGENT_MCP_SERVERS
#define PKG_AGENT_MCP_SERVERS ""
#endif
#ifndef PKG_AGENT_MCP_MAX_TOOLS
#define PKG_AGENT_MCP_MAX_TOOLS 16
#endif
#ifndef PKG_AGENT_MCP_MAX_RESPONSE
#define PKG_AGENT_MCP_MAX_RESPONSE 16384
#endif

/* The space-separated server URLs of menuconfig (a static string). */
const char *agent_glue_mcp_servers(void)
{
    return PKG_AGENT_MCP_SERVERS;
}

int agent_glue_mcp_max_tools(void)
{
    return PKG_AGENT_MCP_MAX_TOOLS;
}

int agent_glue_mcp_max_response(void)
{
    return PKG_AGENT_MCP_MAX_RESPONSE;
}
