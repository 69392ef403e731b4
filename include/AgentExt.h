/*
 * AgentExt.h - additions of this package over the C Agent package's API
 * (its headers are unchanged). Implemented in Rust (src/ffi/config.rs).
 *
 * Network tokens: the WebNet channel's (PKG_AGENT_WEB_TOKEN: the web chat
 * and its settings) and the MCP server's (PKG_AGENT_MCP_TOKEN: the bearer
 * token). A token set here replaces the build's value at once and, with a
 * state file (PKG_AGENT_STATE_FILE), across reboots. See docs/security.md.
 */
#ifndef __AGENT_EXT_H__
#define __AGENT_EXT_H__

#ifdef __cplusplus
extern "C" {
#endif

#define AGENT_TOKEN_WEB 0
#define AGENT_TOKEN_MCP 1
#define AGENT_TOKEN_MIN_LEN 16
#define AGENT_TOKEN_MAX_LEN 127

/*
 * Set `which`'s token: 16 to 127 visible ASCII characters; "" for no token
 * (only with PKG_AGENT_WEB_OPEN_CHAT / PKG_AGENT_MCP_ALLOW_ANONYMOUS);
 * NULL: back to the build's value. The string is copied. Returns 0 (set,
 * and saved when there is a state file), 1 (set, but the state file could
 * not be written: until reboot), -1 (refused: too short, too long or a
 * blank or control character), -2 (refused: "" without the option that
 * allows it), -3 (unknown `which`, or that part is not built).
 * A running MCP server checks the new token from its next request; a
 * server that did not start for want of a token starts with the agent's
 * next start.
 */
int agent_token_set(int which, const char *token);

/* 1 when `which` needs a token now, 0 when none is set, -1 when that part
 * is not built. The token itself is never returned. */
int agent_token_is_set(int which);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_EXT_H__ */
