/*
 * AgentLoop.h - the agent's lifecycle (new: the C package kept these static).
 */
#ifndef __AGENT_LOOP_H__
#define __AGENT_LOOP_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

void init_agent(void);
void cleanup_agent(void);
int main_loop_entry(void);
int cleanup_agent_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_LOOP_H__ */
