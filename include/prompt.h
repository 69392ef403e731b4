/*
 * prompt.h - the system prompt the agent puts first in every conversation.
 * Implemented in Rust (src/ffi/prompt.rs).
 */
#ifndef __AGENT_PROMPT_H__
#define __AGENT_PROMPT_H__

#ifdef __cplusplus
extern "C" {
#endif

/* The system prompt: a NUL-terminated string the library owns (never free
 * or modify it). */
char *get_system_prompt(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_PROMPT_H__ */
