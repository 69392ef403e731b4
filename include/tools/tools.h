/* tools.h - one include per built-in tool; add yours below. */
#ifndef __AGENT_TOOLS_H__
#define __AGENT_TOOLS_H__

#include "tool_add.h"
#include "tool_mul.h"
#include "tool_compare.h"

/* The newest C package's MQTT toolset (src/tools/tool_mqtt/), when the
 * board enables it; its header lives in include/tools/tool_mqtt/. */
#ifdef PKG_AGENT_TOOL_MQTT_ENABLE
#include "tool_mqtt.h"
#endif

#endif /* __AGENT_TOOLS_H__ */
