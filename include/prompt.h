/*
 * prompt.h - the system prompt is returned by get_system_prompt() (context.h).
 */
#ifndef __AGENT_PROMPT_H__
#define __AGENT_PROMPT_H__
#endif
